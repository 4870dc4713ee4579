"""Tensor operations in Lumen against NumPy, the oracle: random arrays written with numpy.save,
read by a script run with `lumen repl FILE` (loadNumpy), each result written back (save) and
compared with what NumPy computes from the same arrays.

Tolerance: Lumen and NumPy both hold float32; Lumen accumulates sums in double precision and
NumPy in float32 (pairwise), so a result may differ by float32 rounding of the terms it sums:
rtol 1e-5 (about 80 float32 ulps) and atol 1e-5 × the scale of the inputs' products. A wrong
axis, broadcast or index moves results by O(1), far outside it."""
import subprocess

import numpy as np
import pytest

from conftest import lumen_bin

RTOL = 1e-5


def run_script(tmp_path, script: str) -> subprocess.CompletedProcess:
    path = tmp_path / "script.lumen"
    path.write_text(script)
    return subprocess.run([lumen_bin(), "repl", str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path)


def close(actual, expected, scale=1.0):
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected.astype(np.float32), rtol=RTOL, atol=1e-5 * scale)


@pytest.fixture
def arrays(tmp_path):
    rng = np.random.default_rng(54)
    made = {
        "a": rng.standard_normal((4, 5, 6)).astype(np.float32),
        "b": rng.standard_normal((6, 3)).astype(np.float32),
        "c": rng.standard_normal((5, 1)).astype(np.float32),
        "m": rng.standard_normal((2, 1, 4, 5)).astype(np.float32),
        "n": rng.standard_normal((3, 5, 2)).astype(np.float32),
        "logits": (rng.standard_normal((7, 300)) * 8).astype(np.float32),
        "ints": rng.integers(-5, 5, size=(3, 4)).astype(np.int64),
        "doubles": rng.standard_normal((3, 4)),
        "fortran": np.asfortranarray(rng.standard_normal((3, 4)).astype(np.float32)),
        # One row longer than a million, which Lumen splits across the cores.
        "long_row": (rng.standard_normal((1 << 20) + 13) * 8).astype(np.float32),
    }
    # A row with masked (−∞) logits and one with a NaN, whose softmax is NaN throughout.
    made["masked"] = np.where(np.arange(300) % 7 == 0, -np.inf, made["logits"][1]).astype(np.float32)
    made["with_nan"] = made["logits"][2].copy()
    made["with_nan"][123] = np.nan
    for name, array in made.items():
        np.save(tmp_path / f"{name}.npy", array)
    return made


# (name, Lumen expression, NumPy's value of it from the arrays)
CASES = [
    ("softmax", 'softmax(a, axis: -1)', lambda x: np.exp(x["a"] - x["a"].max(-1, keepdims=True)) / np.exp(x["a"] - x["a"].max(-1, keepdims=True)).sum(-1, keepdims=True)),
    ("log_softmax_axis1", 'logSoftmax(a, axis: 1)', lambda x: x["a"] - x["a"].max(1, keepdims=True) - np.log(np.exp(x["a"] - x["a"].max(1, keepdims=True)).sum(1, keepdims=True))),
    ("log_softmax_logits", 'logits.logSoftmax()', lambda x: x["logits"] - x["logits"].max(-1, keepdims=True) - np.log(np.exp(x["logits"] - x["logits"].max(-1, keepdims=True)).sum(-1, keepdims=True))),
    ("softmax_row", 'softmax(logits[3])', lambda x: np.exp(x["logits"][3] - x["logits"][3].max()) / np.exp(x["logits"][3] - x["logits"][3].max()).sum()),
    ("log_softmax_row", 'logSoftmax(logits[3])', lambda x: x["logits"][3] - x["logits"][3].max() - np.log(np.exp(x["logits"][3] - x["logits"][3].max()).sum())),
    ("softmax_long_row", 'softmax(long_row)', lambda x: np.exp(x["long_row"] - x["long_row"].max()) / np.exp(x["long_row"] - x["long_row"].max()).sum()),
    ("log_softmax_long_row", 'logSoftmax(long_row)', lambda x: x["long_row"] - x["long_row"].max() - np.log(np.exp(x["long_row"] - x["long_row"].max()).sum())),
    ("softmax_masked", 'softmax(masked)', lambda x: np.exp(x["masked"] - x["masked"].max()) / np.exp(x["masked"] - x["masked"].max()).sum()),
    ("softmax_nan", 'softmax(with_nan)', lambda x: np.exp(x["with_nan"] - x["with_nan"].max()) / np.exp(x["with_nan"] - x["with_nan"].max()).sum()),
    ("log_softmax_nan", 'logSoftmax(with_nan)', lambda x: x["with_nan"] - x["with_nan"].max() - np.log(np.exp(x["with_nan"] - x["with_nan"].max()).sum())),
    ("sum0", 'sum(a, axis: 0)', lambda x: x["a"].sum(0)),
    ("mean02", 'mean(a, axis: [0, 2])', lambda x: x["a"].mean((0, 2))),
    ("max_keep", 'max(a, axis: 1, keepdims: true)', lambda x: x["a"].max(1, keepdims=True)),
    ("min_last", 'min(a, axis: -1)', lambda x: x["a"].min(-1)),
    ("variance", 'variance(a, axis: 2)', lambda x: x["a"].var(2)),
    ("norm", 'norm(a, axis: [1, 2])', lambda x: np.sqrt((x["a"] ** 2).sum((1, 2)))),
    ("argmax", 'argmax(a, axis: -1)', lambda x: x["a"].argmax(-1)),
    ("argmin0", 'argmin(a, axis: 0)', lambda x: x["a"].argmin(0)),
    ("broadcast", 'exp(a) * 2 + c / 3', lambda x: np.exp(x["a"]) * 2 + x["c"] / 3),
    ("comparison", 'where(a > 0.5, a, c - 1)', lambda x: np.where(x["a"] > 0.5, x["a"], x["c"] - 1)),
    ("functions", 'tanh(a) + sigmoid(a) - relu(a) * sqrt(abs(a)) + pow(abs(a), 1.5)',
     lambda x: np.tanh(x["a"]) + 1 / (1 + np.exp(-x["a"])) - np.maximum(x["a"], 0) * np.sqrt(np.abs(x["a"])) + np.abs(x["a"]) ** 1.5),
    ("maximum", 'maximum(a, c)', lambda x: np.maximum(x["a"], x["c"])),
    ("matmul", 'matmul(a, b)', lambda x: x["a"] @ x["b"]),
    ("matmul_batched", 'matmul(m, n)', lambda x: x["m"] @ x["n"]),
    ("matmul_vector", 'matmul(a, b[..., 0])', lambda x: x["a"] @ x["b"][:, 0]),
    ("vector_matmul", 'matmul(a[0, 0], b)', lambda x: x["a"][0, 0] @ x["b"]),
    ("matmul_wide", 'matmul(logits.T, logits)', lambda x: x["logits"].T @ x["logits"]),
    ("einsum_matmul", 'einsum("ijk,kl->ijl", a, b)', lambda x: np.einsum("ijk,kl->ijl", x["a"], x["b"])),
    ("einsum_lens", 'einsum("ld,vd->lv", a[0], a[1])', lambda x: np.einsum("ld,vd->lv", x["a"][0], x["a"][1])),
    ("einsum_batch", 'einsum("bqd,bkd->bqk", a, a)', lambda x: np.einsum("bqd,bkd->bqk", x["a"], x["a"])),
    ("einsum_trace", 'einsum("ii->i", a[0, 0..<5, 0..<5])', lambda x: np.einsum("ii->i", x["a"][0, :5, :5])),
    ("einsum_implicit", 'einsum("ji", b)', lambda x: np.einsum("ji", x["b"])),
    ("outer", 'outer(b[0], c)', lambda x: np.outer(x["b"][0], x["c"])),
    ("dot", 'dot(a, a[0])', lambda x: (x["a"] * x["a"][0]).sum(-1)),
    ("index_last", 'a[-1]', lambda x: x["a"][-1]),
    ("index_mixed", 'a[1..<3, -1, [4, 0, 4]]', lambda x: x["a"][1:3, -1, [4, 0, 4]]),
    ("index_partial", 'a[..., 2..., ..<3]', lambda x: x["a"][:, 2:, :3]),
    ("index_strided", 'a[stride(from: 3, to: -1, by: -2)]', lambda x: x["a"][3::-2]),
    ("reshape", 'reshape(a, [2, -1, 3])', lambda x: x["a"].reshape(2, -1, 3)),
    ("transpose", 'transpose(a, [2, 0, 1])', lambda x: x["a"].transpose(2, 0, 1)),
    ("squeeze", 'squeeze(c)', lambda x: x["c"].squeeze()),
    ("stack", 'stack([b, b * 2], axis: 1)', lambda x: np.stack([x["b"], x["b"] * 2], axis=1)),
    ("concat", 'concat([a, a[0..<1]], axis: 0)', lambda x: np.concatenate([x["a"], x["a"][:1]], axis=0)),
    ("topk", 'topk(logits, 5, axis: -1)["values"]', lambda x: -np.sort(-x["logits"], axis=-1)[:, :5]),
    ("topk_indices", 'topk(logits, 5, axis: -1)["indices"]', lambda x: np.argsort(-x["logits"], axis=-1, kind="stable")[:, :5]),
    ("ints", 'ints * 1.5', lambda x: x["ints"] * 1.5),
    ("doubles", 'doubles + 0', lambda x: x["doubles"]),
    ("fortran", 'fortran + 0', lambda x: x["fortran"]),
]


def test_tensor_operations_equal_numpys(tmp_path, arrays):
    loads = "".join(f'let {name} = loadNumpy("{name}.npy")\n' for name in arrays)
    saves = "".join(f'save({expression}, "out_{name}.npy")\n' for name, expression, _ in CASES)
    result = run_script(tmp_path, loads + saves)
    assert result.returncode == 0, result.stdout + result.stderr
    for name, _, expected in CASES:
        actual = np.load(tmp_path / f"out_{name}.npy")
        close(actual, np.asarray(expected(arrays)), scale=10)


def test_npz_both_ways(tmp_path, arrays):
    np.savez(tmp_path / "in.npz", first=arrays["a"], second=arrays["b"])
    result = run_script(tmp_path, 'let d = loadNumpy("in.npz")\nsave(["sum": d["first"] + 1, "b": d["second"]], "out.npz")\n')
    assert result.returncode == 0, result.stdout + result.stderr
    out = np.load(tmp_path / "out.npz")
    close(out["sum"], arrays["a"] + 1)
    close(out["b"], arrays["b"])


@pytest.mark.parametrize("expression, message", [
    ('a + b', "shapes [4 × 5 × 6] and [6 × 3] do not broadcast"),
    ('sum(a, axis: 3)', "axis 3 is out of range for a Tensor of 3 axes [4 × 5 × 6]"),
    ('a[4]', "index 4 is out of bounds for axis 0 (axis0) of length 4"),
    ('a[0, 0..<9]', "out of bounds for axis 1 (axis1) of length 5"),
    ('matmul(a, a)', "the last axis of [4 × 5 × 6] (6) must equal the second-to-last axis of [4 × 5 × 6] (5)"),
    ('einsum("ij,jk->ik", b, b)', '"j" is 3 long in one place and 6 in another'),
    ('reshape(a, [7, -1])', "cannot reshape a Tensor [4 × 5 × 6] of 120 elements to [7, -1]"),
])
def test_misfits_are_errors_naming_the_shapes(tmp_path, arrays, expression, message):
    result = run_script(tmp_path, f'let a = loadNumpy("a.npy")\nlet b = loadNumpy("b.npy")\nprint({expression})\n')
    assert result.returncode != 0
    assert message in result.stdout + result.stderr, result.stdout + result.stderr


def test_compressed_npz_is_refused_by_name(tmp_path, arrays):
    np.savez_compressed(tmp_path / "packed.npz", x=arrays["a"])
    result = run_script(tmp_path, 'print(loadNumpy("packed.npz"))\n')
    assert result.returncode != 0
    assert "x.npy in the .npz is compressed (numpy.savez_compressed); save it with numpy.savez" in result.stdout + result.stderr


def test_a_npy_whose_shape_cannot_be_read_is_refused_by_name(tmp_path):
    # A header claiming 2^80 elements, and one of 100 axes (NumPy's limit is 64): errors, no crash.
    def npy(shape):
        header = ("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ", ".join(map(str, shape))).ljust(118) + "\n"
        return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(16)
    (tmp_path / "huge.npy").write_bytes(npy([1 << 40, 1 << 40]))
    (tmp_path / "deep.npy").write_bytes(npy([1] * 100))
    for name, message in [("huge", "the file has 16"), ("deep", "a .npy of 100 axes; NumPy's arrays have at most 64")]:
        result = run_script(tmp_path, f'loadNumpy("{name}.npy")\n')
        assert result.returncode == 1 and message in result.stderr, result.stderr
