"""`lumen generate --control-vector…`, llama.cpp's flags, against llama.cpp's own steered logits
(`reference/inside/`: a contrastive vector in the control-vector GGUF format, and the logits
llama.cpp gives with it)."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import lumen_bin
from servers import CACHE

MODELS = {"smollm2": CACHE / "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma3": CACHE / "gemma-3-270m-q4_k_m.gguf"}


def inside(name):
    shared = os.environ.get("LUMEN_TEST_DATA")
    if not shared:
        pytest.fail("LUMEN_TEST_DATA must name the shared folder (make test sets it)")
    return pathlib.Path(shared) / "reference" / "inside" / name


def kl(p_logits, q_logits):
    p = p_logits.astype(np.float64) - np.logaddexp.reduce(p_logits.astype(np.float64))
    q = q_logits.astype(np.float64) - np.logaddexp.reduce(q_logits.astype(np.float64))
    return float(np.sum(np.exp(p) * (p - q)))


def first_logits(model, prompt, tmp_path, *flags):
    dump = tmp_path / "logits.bin"
    result = subprocess.run([lumen_bin(), "generate", str(model), prompt, "--temp", "0", "-n", "1", "--no-log", "--json",
                             "--dump-logits", str(dump), *flags], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return np.fromfile(dump, dtype=np.float32)


@pytest.mark.parametrize("name", MODELS)
def test_a_scaled_control_vector_on_a_layer_range_steers_as_llama_cpp(name, tmp_path):
    case = json.loads(inside(f"{name}-steer.json").read_text())
    vector = str(inside(f"{name}-steer.cvec.gguf"))
    expected = np.fromfile(inside(f"{name}-steer.logits.bin"), dtype=np.float32)
    steered = first_logits(MODELS[name], case["target"], tmp_path, "--control-vector-scaled", vector, str(case["scale"]),
                           "--control-vector-layer-range", str(case["il_start"]), str(case["il_end"]))
    plain = first_logits(MODELS[name], case["target"], tmp_path)
    assert kl(expected, steered) <= 0.02
    assert kl(expected, steered) < kl(expected, plain)
    # Twice the vector unscaled at half the scale each is the same vector.
    half = str(case["scale"] / 2)
    summed = first_logits(MODELS[name], case["target"], tmp_path, "--control-vector-scaled", vector, half, "--control-vector-scaled", vector, half,
                          "--control-vector-layer-range", str(case["il_start"]), str(case["il_end"]))
    assert np.allclose(summed, steered, atol=1e-3)


@pytest.mark.parametrize("flags, message", [
    (["--control-vector", "{gemma}"], "gemma3-steer.cvec.gguf: directions: the control vector has 640 values per block, but the model's residual stream has 576"),
    (["--control-vector", "{smollm2}", "--control-vector-layer-range", "3", "30"], "--control-vector-layer-range: block 30 is past the model's last block, 29"),
    (["--control-vector", "/no/such.gguf"], "/no/such.gguf"),
])
def test_a_vector_that_does_not_fit_the_model_is_named(flags, message):
    flags = [flag.format(gemma=inside("gemma3-steer.cvec.gguf"), smollm2=inside("smollm2-steer.cvec.gguf")) for flag in flags]
    result = subprocess.run([lumen_bin(), "generate", str(MODELS["smollm2"]), "Hi", "-n", "1", "--no-log", *flags], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stderr.startswith("Error: ") and message in result.stderr, result.stderr


@pytest.mark.parametrize("flags, message", [
    (["--control-vector-scaled", "v.gguf"], "--control-vector-scaled takes a file and a scale each time, got v.gguf"),
    (["--control-vector-scaled", "v.gguf", "big"], "--control-vector-scaled takes a file and a scale each time, got v.gguf big"),
    (["--control-vector-layer-range", "5", "2"], "--control-vector-layer-range takes a first and a last block, 0 ≤ first ≤ last, got 5 2"),
])
def test_malformed_control_vector_flags_are_usage_errors(flags, message):
    result = subprocess.run([lumen_bin(), "generate", "x.gguf", "Hi", "--no-log", *flags], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.startswith(f"Error: {message}\n"), result.stderr


def test_steering_writes_a_control_vector_that_llama_cpps_reader_takes(tmp_path):
    case = json.loads(inside("smollm2-steer.json").read_text())
    output = tmp_path / "sentiment.gguf"
    result = subprocess.run([lumen_bin(), "steering", str(MODELS["smollm2"]), "--positive", case["positive"], "--negative", case["negative"],
                             "-o", str(output), "--no-log"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"wrote {output}: 29 directions of 576 values (blocks 1…29)" in result.stderr
    import gguf
    ours, theirs = gguf.GGUFReader(output), gguf.GGUFReader(inside("smollm2-steer.cvec.gguf"))
    assert bytes(ours.fields["general.architecture"].parts[-1]).decode() == "controlvector"
    assert bytes(ours.fields["controlvector.model_hint"].parts[-1]).decode() == "llama"
    assert int(ours.fields["controlvector.layer_count"].parts[-1][0]) == 29
    expected = {tensor.name: np.array(tensor.data) for tensor in theirs.tensors}
    assert [tensor.name for tensor in ours.tensors] == sorted(expected, key=lambda name: int(name.split(".")[1]))
    for tensor in ours.tensors:
        got, want = np.array(tensor.data), expected[tensor.name]
        assert got.dtype == np.float32 and got.shape == want.shape
        # As ForwardHookTests.directionCosine: 0.9982 at the last block here, 0.9977 with portable kernels.
        assert float(got @ want / np.linalg.norm(got) / np.linalg.norm(want)) >= 0.995, tensor.name


# Prompt pairs for llama-cvector-generator's methods: the third pair's prompts differ in length,
# so the shorter is padded.
PAIRS = [("I love this, it is wonderful and makes me happy", "I hate this, it is awful and makes me sad"),
         ("What a great and joyful day", "What a terrible and miserable day"),
         ("The food was delicious and the staff were kind", "The food was disgusting and the staff were rude")]


def traced_resid_post(prompt, tmp_path, name):
    result = subprocess.run([lumen_bin(), "trace", str(MODELS["smollm2"]), prompt, "-o", str(tmp_path / name), "--points", "resid_post", "--no-log"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return np.load(tmp_path / name / "resid_post.npy").astype(np.float64), json.loads((tmp_path / name / "tokens.json").read_text())["tokens"]


@pytest.mark.parametrize("method", ["mean", "pca"])
def test_steering_methods_are_llama_cvector_generators_formulas_in_numpy(method, tmp_path):
    """`lumen steering --method mean|pca` against NumPy on Lumen's own residual streams (`lumen
    trace`): each pair padded to one length with the token of " " (the shorter prompt traced with
    spaces appended, its tokens checked), the differences at every position, rows of zeros
    dropped; the mean scaled to unit length, or the top eigenvector of DᵀD (numpy.linalg.eigh)
    pointing along the mean."""
    output = tmp_path / f"{method}.gguf"
    positive, negative = [p for p, _ in PAIRS], [n for _, n in PAIRS]
    result = subprocess.run([lumen_bin(), "steering", str(MODELS["smollm2"]), "--method", method, "--positive", *positive, "--negative", *negative,
                             "-o", str(output), "--no-log"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    import gguf
    ours = {int(tensor.name.split(".")[1]): np.array(tensor.data, dtype=np.float64) for tensor in gguf.GGUFReader(output).tensors}
    differences, padded_pairs = {}, 0
    for index, (good, bad) in enumerate(PAIRS):
        (a, a_tokens), (b, b_tokens) = traced_resid_post(good, tmp_path, f"p{index}"), traced_resid_post(bad, tmp_path, f"n{index}")
        if len(a_tokens) != len(b_tokens):
            shorter, longer = (good, b_tokens) if len(a_tokens) < len(b_tokens) else (bad, a_tokens)
            short_tokens = a_tokens if len(a_tokens) < len(b_tokens) else b_tokens
            padded, padded_tokens = traced_resid_post(shorter + " " * (len(longer) - len(short_tokens)), tmp_path, f"padded{index}")
            assert padded_tokens[:len(short_tokens)] == short_tokens and len(padded_tokens) == len(longer)
            assert len(set(padded_tokens[len(short_tokens):])) == 1
            a, b = (padded, b) if shorter == good else (a, padded)
            padded_pairs += 1
        for block in range(1, a.shape[0]):
            rows = [row for row in a[block] - b[block] if np.any(np.abs(row) > 1e-6)]
            differences.setdefault(block, []).extend(rows)
    assert sorted(ours) == list(range(1, 30)) and padded_pairs == 1
    for block, rows in differences.items():
        d = np.array(rows)
        mean = d.mean(axis=0)
        mean /= np.linalg.norm(mean)
        if method == "mean":
            expected = mean
        else:
            _, vectors = np.linalg.eigh(d.T @ d)
            expected = vectors[:, -1] * np.sign(vectors[:, -1] @ mean)
        assert abs(np.linalg.norm(ours[block]) - 1) < 1e-5
        # Float32 sums against float64: measured 1 − cos ≤ 3·10⁻⁸; a wrong row, pad or sign is ≥ 10⁻².
        assert 1 - float(ours[block] @ expected) <= 1e-6, (block, 1 - float(ours[block] @ expected))


def test_steering_methods_pair_their_prompts():
    result = subprocess.run([lumen_bin(), "steering", "x.gguf", "--method", "pca", "--positive", "a", "b", "--negative", "c", "-o", "v.gguf", "--no-log"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("Error: --method pca pairs --positive i with --negative i: give as many of each, not 2 and 1\n"), result.stderr


@pytest.mark.parametrize("arguments, message", [
    (["--positive", "good"], "give at least one --positive and one --negative prompt"),
    (["--positive", "good", "--negative", "bad", "-o", "/no/such/dir/v.gguf"], "-o /no/such/dir/v.gguf: directory /no/such/dir does not exist"),
])
def test_steering_needs_both_sides_and_a_place_to_write(arguments, message):
    if "-o" not in arguments:
        arguments = [*arguments, "-o", "v.gguf"]
    result = subprocess.run([lumen_bin(), "steering", "x.gguf", *arguments, "--no-log"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.startswith(f"Error: {message}\n"), result.stderr


@pytest.mark.parametrize("name", MODELS)
def test_trace_writes_llama_cpps_residual_stream_and_attention_as_numpy(name, tmp_path):
    case = json.loads(inside(f"{name}-acts.json").read_text())
    result = subprocess.run([lumen_bin(), "trace", str(MODELS[name]), case["prompt"], "-o", str(tmp_path / "trace"), "--no-log"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    tokens = json.loads((tmp_path / "trace" / "tokens.json").read_text())
    assert tokens["tokens"] == case["tokens"] and len(tokens["pieces"]) == len(case["tokens"])
    n, layers, width, heads = len(case["tokens"]), case["n_layer"], case["n_embd"], case["n_head"]
    resid, attn = np.load(tmp_path / "trace" / "resid.npy"), np.load(tmp_path / "trace" / "attn.npy")
    assert resid.dtype == np.float32 and resid.shape == (layers, n, width)
    assert attn.dtype == np.float32 and attn.shape == (layers, heads, n, n)
    expected_resid = np.fromfile(inside(f"{name}-acts.l_out.bin"), dtype=np.float32).reshape(layers, n, width)
    cosine = np.sum(resid * expected_resid, axis=2) / np.linalg.norm(resid, axis=2) / np.linalg.norm(expected_resid, axis=2)
    assert cosine.min() >= (0.995 if name == "gemma3" else 0.999), cosine.min()
    expected_attn = np.fromfile(inside(f"{name}-acts.attn.bin"), dtype=np.float32).reshape(layers, heads, n, n)
    assert np.allclose(attn.sum(axis=3), 1, atol=1e-5) and np.all(np.triu(attn, 1) == 0)
    assert np.abs(attn - expected_attn).mean() <= 0.005 and np.abs(attn - expected_attn).max() <= 0.1


def test_a_trace_too_large_is_refused_naming_its_size(tmp_path):
    # 1,600 tokens: 30 blocks × 9 heads × 1,600² attention probabilities are 2.6 GiB.
    result = subprocess.run([lumen_bin(), "trace", str(MODELS["smollm2"]), "word " * 1600, "-o", str(tmp_path / "trace"), "--no-log"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and not (tmp_path / "trace").exists()
    assert "pattern [30 × 9 × 1601 × 1601] (2.6 GiB) is more than the 2.0 GiB a point may take: --positions with at most 1241 positions, or fewer --blocks, fits it" in result.stderr, result.stderr
    # The limit is per point: the same prompt's residual stream (110 MiB) is written.
    result = subprocess.run([lumen_bin(), "trace", str(MODELS["smollm2"]), "word " * 1600, "-o", str(tmp_path / "trace"), "--points", "resid_post", "--no-log"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert np.load(tmp_path / "trace" / "resid_post.npy", mmap_mode="r").shape == (30, 1601, 576)


def test_lumen_serve_steers_every_request_as_lumen_generate_does(tmp_path):
    """The served model's first-token distribution is `lumen generate`'s with the same flags,
    which the test above holds to llama.cpp's steered logits; a vector that does not fit refuses
    the start."""
    from servers import start_lumen_serve
    from test_remote import post
    case = json.loads(inside("smollm2-steer.json").read_text())
    flags = ["--control-vector-scaled", str(inside("smollm2-steer.cvec.gguf")), str(case["scale"]),
             "--control-vector-layer-range", str(case["il_start"]), str(case["il_end"])]
    expected = first_logits(MODELS["smollm2"], case["target"], tmp_path, *flags)
    expected = expected.astype(np.float64) - np.logaddexp.reduce(expected.astype(np.float64))
    steered, plain = start_lumen_serve(*flags), start_lumen_serve()
    try:
        answers = []
        for server in (steered, plain):
            status, answer = post(server.url + "/completions", {"prompt": case["target"], "max_tokens": 12, "temperature": 0, "logprobs": 5})
            assert status == 200, answer
            answers.append(answer["choices"][0])
        served = sorted(answers[0]["logprobs"]["top_logprobs"][0].values(), reverse=True)
        assert np.allclose(served, np.sort(expected)[::-1][:5], atol=2e-3), (served, np.sort(expected)[::-1][:5])
        assert answers[0]["text"] != answers[1]["text"]
        generated = subprocess.run([lumen_bin(), "generate", str(MODELS["smollm2"]), case["target"], "--temp", "0", "-n", "12", "--no-log", "--json", *flags],
                                   capture_output=True, text=True, check=True)
        assert answers[0]["text"] == json.loads(generated.stdout)["text"]
    finally:
        steered.stop()
        plain.stop()
    refused = subprocess.run([lumen_bin(), "serve", str(MODELS["smollm2"]), "--port", "0", "--control-vector", str(inside("gemma3-steer.cvec.gguf"))],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and "the control vector has 640 values per block, but the model's residual stream has 576" in refused.stderr, refused.stderr


def test_a_vector_holding_nan_or_infinity_or_a_scale_that_overflows_is_refused_naming_it(tmp_path):
    import gguf
    path = tmp_path / "nan.cvec.gguf"
    writer = gguf.GGUFWriter(str(path), "controlvector")
    for block in range(1, 4):
        direction = np.zeros(576, dtype=np.float32)
        if block == 2:
            direction[7] = np.inf
        writer.add_tensor(f"direction.{block}", direction)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    for command in (["generate", str(MODELS["smollm2"]), "x", "-n", "1", "--no-log", "--control-vector", str(path)],
                    ["serve", str(MODELS["smollm2"]), "--port", "0", "--no-log", "--control-vector", str(path)]):
        result = subprocess.run([lumen_bin(), *command], capture_output=True, text=True, timeout=120)
        assert result.returncode == 1 and f"{path}: tensor direction.2: holds inf at index 7: a direction must be finite" in result.stderr, result.stderr
    vector = str(inside("smollm2-steer.cvec.gguf"))
    result = subprocess.run([lumen_bin(), "generate", str(MODELS["smollm2"]), "x", "-n", "1", "--no-log", "--control-vector-scaled", vector, "3e38"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "times the scale 3e+38 (added to the vectors before it) is not finite" in result.stderr, result.stderr
