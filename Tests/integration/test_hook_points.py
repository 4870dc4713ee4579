"""Every hook point `lumen trace` writes, against llama.cpp's graph nodes of the same values on
both real models (Tests/reference/inside/hooks.npz, made by scripts/make_hook_references.py
through llama-cpp-python's cb_eval), within 1.5× llama.cpp's own spread; the residual points
and the outputs between them agree; choosing points, blocks and positions; a point too large
for its limit named with the option that fits it."""
import json
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import lumen_bin
from test_control_vectors import CACHE

REFERENCE = pathlib.Path(__file__).parent.parent / "reference" / "inside"
META = json.loads((REFERENCE / "hooks.json").read_text())
ALL = "embed,resid_pre,q,k,v,z,pattern,attn_out,resid_mid,mlp_pre,mlp_post,mlp_out,resid_post,ln_final,logits"
PER_BLOCK = {"resid_pre", "q", "k", "v", "z", "pattern", "attn_out", "resid_mid", "mlp_pre", "mlp_post", "mlp_out", "resid_post"}


def trace(tmp_path, model, *arguments, prompt=META["prompt"], name="trace"):
    out = tmp_path / name
    result = subprocess.run([lumen_bin(), "trace", str(model), prompt, "-o", str(out), *arguments], capture_output=True, text=True, timeout=600)
    return out, result


def distance(value, reference, per_block):
    """As make_hook_references.py: each block's relative RMS distance, averaged over the blocks."""
    parts = zip(value, reference) if per_block else [(value, reference)]
    return float(np.mean([np.sqrt(((v - r) ** 2).mean() / (r ** 2).mean()) for v, r in parts]))


@pytest.mark.parametrize("key", META["models"])
def test_every_point_is_llama_cpps_node_within_its_own_spread(tmp_path, key):
    model = META["models"][key]
    reference = np.load(REFERENCE / "hooks.npz")
    blocks = model["blocks"]
    out, result = trace(tmp_path, CACHE / model["file"], "--points", ALL, "--blocks", ",".join(map(str, blocks)))
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "tokens.json").read_text())["tokens"] == model["tokens"]
    report = []
    for point in ALL.split(","):
        value = np.load(out / f"{point}.npy")
        expected = reference[f"{key}/{point}"]
        if point == "logits":
            value = value[..., reference[f"{key}/logit_ids"].astype(int)]
        assert value.shape == expected.shape, (point, value.shape, expected.shape)
        spread = model["spread"][point]
        if spread == 0:
            # The embeddings: llama.cpp's two runs agree exactly, and so must Lumen.
            assert np.array_equal(value, expected), point
            continue
        measured = distance(value, expected, point in PER_BLOCK)
        report.append(f"{point} {measured / spread:.2f}×")
        assert measured <= 1.5 * spread, f"{point}: {measured:.3g} from llama.cpp, 1.5 × its spread {spread:.3g} allowed ({', '.join(report)})"
    print(f"{key}: distance to llama.cpp over its own spread: {', '.join(report)}")  # pytest -s shows it


def test_outputs_are_the_differences_of_the_residual_points(tmp_path):
    out, result = trace(tmp_path, CACHE / META["models"]["smollm2"]["file"], "--points", "resid_pre,attn_out,resid_mid,mlp_out,resid_post")
    assert result.returncode == 0, result.stderr
    pre, attention, middle, feed_forward, post = (np.load(out / f"{point}.npy") for point in ["resid_pre", "attn_out", "resid_mid", "mlp_out", "resid_post"])
    # One float addition each: equal up to the rounding of a sum of the residual's size.
    ulp = lambda x: np.spacing(np.abs(x).astype(np.float32))
    assert np.all(np.abs((middle - pre) - attention) <= 2 * ulp(middle))
    assert np.all(np.abs((post - middle) - feed_forward) <= 2 * ulp(post))
    assert np.array_equal(pre[1:], post[:-1])


def test_blocks_and_positions_choose_slices_of_the_whole(tmp_path):
    model = CACHE / META["models"]["gemma"]["file"]
    whole, result = trace(tmp_path, model, "--points", "q,pattern,logits", name="whole")
    assert result.returncode == 0, result.stderr
    part, result = trace(tmp_path, model, "--points", "q,pattern,logits", "--blocks", "2-3", "--positions", "0,-2--1", name="part")
    assert result.returncode == 0, result.stderr
    positions = [0, 4, 5]
    assert np.array_equal(np.load(part / "q.npy"), np.load(whole / "q.npy")[2:4][:, positions])
    assert np.array_equal(np.load(part / "pattern.npy"), np.load(whole / "pattern.npy")[2:4][:, :, positions])
    assert np.array_equal(np.load(part / "logits.npy"), np.load(whole / "logits.npy")[positions])


def test_the_default_keeps_the_files_earlier_scripts_read(tmp_path):
    out, result = trace(tmp_path, CACHE / META["models"]["smollm2"]["file"])
    assert result.returncode == 0, result.stderr
    assert np.array_equal(np.load(out / "resid.npy"), np.load(out / "resid_post.npy"))
    assert np.array_equal(np.load(out / "attn.npy"), np.load(out / "pattern.npy"))
    assert np.load(out / "attn.npy").shape == (30, 9, 5, 5)


def test_a_point_over_its_limit_is_named_with_the_option_that_fits_it(tmp_path):
    # Gemma's logits are 1 MiB a position: 2,100 positions are over the 2 GiB a point may take,
    # refused before any work, while the residual stream of the same prompt is written.
    prompt = " a" * 2100
    _, result = trace(tmp_path, CACHE / META["models"]["gemma"]["file"], "--points", "logits", prompt=prompt)
    assert result.returncode != 0
    assert "logits [2101 × 262144] (2.1 GiB) is more than the 2.0 GiB a point may take: --positions with at most 2048 positions fits it" in result.stderr, result.stderr
    out, result = trace(tmp_path, CACHE / META["models"]["gemma"]["file"], "--points", "resid_post", "--blocks", "17", prompt=prompt)
    assert result.returncode == 0, result.stderr
    assert np.load(out / "resid_post.npy").shape == (1, 2101, 640)


@pytest.mark.parametrize("arguments, message", [
    (["--points", "mlp"], '--points: "mlp" is not a point; the points are embed, resid_pre, q, k, v, z, pattern'),
    (["--blocks", "30"], "--blocks 30 is not one of the 30 blocks (0…29, or -30…-1)"),
    (["--positions", "3-1"], "--positions 3-1 goes down: write it from the lower end"),
])
def test_bad_choices_are_refused_by_name(tmp_path, arguments, message):
    _, result = trace(tmp_path, CACHE / META["models"]["smollm2"]["file"], *arguments)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
