"""`trace(…)` in cells: the activations it keeps are llama.cpp's (`reference/inside/`), what Lumen
computes on them as Tensors is what NumPy computes on the file it saves, and `ablate`/`patch`
change a run as llama.cpp's graph changed by its eval callback
(`Tests/reference/inside/interventions.json`)."""
import json
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import lumen_bin
from test_control_vectors import MODELS, inside

INTERVENTIONS = json.loads((pathlib.Path(__file__).parent.parent / "reference/inside/interventions.json").read_text())


def run_cells(script):
    result = subprocess.run([lumen_bin(), "repl", "--no-log"], input=script, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.parametrize("name", MODELS)
def test_a_trace_keeps_llama_cpps_activations_and_its_tensor_arithmetic_is_numpys(name, tmp_path):
    case = json.loads(inside(f"{name}-acts.json").read_text())
    n, layers, width, heads = len(case["tokens"]), case["n_layer"], case["n_embd"], case["n_head"]
    archive = tmp_path / "trace.npz"
    out = run_cells(f'let m = load("{MODELS[name]}")\n'
                    f'let t = trace(m, {json.dumps(case["prompt"])}, keep: ["resid", "attn", "heads", "attn_out", "ffn_out"])\n'
                    f'save(t, "{archive}")\n'
                    f'save(t.resid[3], "{tmp_path / "block3.npy"}")\n'
                    'let last = t.resid[-1]\n'
                    'print(json(["ids": t.ids, "shape": t.resid.shape, "norms": norm(last).values, '
                    '"cosine": cosine(t.resid[10], t.resid[11]).values, "mean": mean(t.resid, axis: 1).values[2], '
                    '"dot": dot(last[-1], last[0]), "difference": (t.resid[5][-1] - t.resid[4][-1] * 0.5).values, '
                    '"sum": sum(t.attn[2], axis: -1).values, "top": topk(t.logits, 5), "max": max(t.heads), "bytes": t.bytes]))\n')
    shown = json.loads(out[out.index("{"):])
    saved = np.load(archive)
    assert sorted(saved.files) == ["attn_out", "ids", "logits", "mlp_out", "pattern", "resid_post", "z"]
    resid, attn = saved["resid_post"], saved["pattern"]
    assert resid.dtype == np.float32 and resid.shape == (layers, n, width) and shown["shape"] == [layers, n, width]
    assert attn.shape == (layers, heads, n, n) and saved["z"].shape[:3] == (layers, n, heads)
    assert saved["ids"].tolist() == case["tokens"] == shown["ids"]
    assert np.array_equal(np.load(tmp_path / "block3.npy"), resid[3])
    # llama.cpp's residual stream and attention probabilities, as lumen trace's own test holds them.
    expected = np.fromfile(inside(f"{name}-acts.l_out.bin"), dtype=np.float32).reshape(layers, n, width)
    cosine = np.sum(resid * expected, axis=2) / np.linalg.norm(resid, axis=2) / np.linalg.norm(expected, axis=2)
    assert cosine.min() >= (0.995 if name == "gemma3" else 0.999), cosine.min()
    expected_attn = np.fromfile(inside(f"{name}-acts.attn.bin"), dtype=np.float32).reshape(layers, heads, n, n)
    assert np.abs(attn - expected_attn).mean() <= 0.005
    # A block's output is its input plus its attention and feed-forward outputs.
    assert np.allclose(resid[1] - resid[0], saved["attn_out"][1] + saved["mlp_out"][1], rtol=1e-3, atol=1e-2 * np.abs(resid[1]).max())
    # Lumen's Tensor arithmetic is NumPy's on the same saved values.
    last = resid[-1].astype(np.float64)
    assert np.allclose(shown["norms"], np.linalg.norm(last, axis=-1), rtol=1e-4)
    a, b = resid[10].astype(np.float64), resid[11].astype(np.float64)
    assert np.allclose(shown["cosine"], np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1), rtol=1e-4)
    assert np.allclose(shown["mean"], resid.mean(axis=1)[2], rtol=1e-4, atol=1e-4)
    assert np.isclose(shown["dot"], last[-1] @ last[0], rtol=1e-4)
    assert np.allclose(shown["difference"], resid[5][-1] - resid[4][-1] * 0.5, rtol=1e-5, atol=1e-5)
    assert np.allclose(shown["sum"], attn[2].sum(axis=-1), atol=1e-5)
    assert shown["top"]["indices"] == np.argsort(-saved["logits"], kind="stable")[:5].tolist()
    assert np.isclose(shown["max"], saved["z"].max())
    assert shown["bytes"] == sum(saved[k].nbytes for k in ["resid_post", "pattern", "z", "attn_out", "mlp_out"])


@pytest.mark.parametrize("name", MODELS)
def test_ablate_intervene_and_patch_in_cells_change_the_run_as_llama_cpp_changed_its_graph(name):
    cases = INTERVENTIONS["models"][MODELS[name].name]["cases"]
    lines = [f'let m = load("{MODELS[name]}")']
    for index, case in enumerate(cases):
        if "ablate" in case:
            spec = case["ablate"]
            change = (f'ablate(block: {spec["block"]}, heads: {spec["heads"]})' if spec["point"] == "heads"
                      else f'ablate(block: {spec["block"]}, point: "{spec["point"]}")')
        elif "edit" in case:
            spec = case["edit"]
            options = "".join(f", {key}: {json.dumps(spec[key])}" for key in ("heads", "positions", "neurons", "scale") if key in spec)
            block = f'block: {spec["block"]}, ' if "block" in spec else ""
            change = f'intervene({block}point: "{spec["point"]}"{options}' + (f', add: tensor({spec["add"]}))' if "add" in spec else ")")
        else:
            spec = case["patch"]
            lines.append(f'let source{index} = trace(m, {json.dumps(case["source"])}, keep: ["{spec["point"]}"], blocks: [{spec["block"]}])')
            change = f'patch(source{index}, block: {spec["block"]}, positions: {spec["positions"]}, point: "{spec["point"]}")'
        lines.append(f'print(json(topk(trace(m, {json.dumps(case["prompt"])}, interventions: [{change}]).logits, 1)["indices"]))')
    out = run_cells("\n".join(lines) + "\n")
    tops = [json.loads(line) for line in out.splitlines() if line.startswith("[")]
    assert len(tops) == len(cases)
    for case, top in zip(cases, tops):
        changed = case["changed"]
        if changed["logprobs"][0] - changed["logprobs"][1] > 0.1:
            assert top == changed["ids"][:1], case["name"]


@pytest.mark.parametrize("code, message", [
    ('trace(m, "Hello", keep: ["attn"], limit: 1000)', "this trace would keep 2.5 KiB for 4 tokens (pattern [5 × 8 × 4 × 4] (2.5 KiB)), over the limit of 1000 bytes"),
    ('trace(m, "Hello", keep: ["mlp"])', 'keep: "mlp" is not a point; the points are embed, resid_pre, q, k, v, z, pattern, attn_out, resid_mid, mlp_pre, mlp_post, mlp_out, resid_post, ln_final, logits'),
    ('trace(m, "Hello", blocks: [7])', "blocks: 7 is not one of the model's 5 blocks (0…4)"),
    ('trace(m, "Hello").attn', 'this trace kept resid_post, not pattern: trace(…, keep: ["pattern"]) keeps it'),
    ('trace(m, "Hello").resid[0][5]', "index 5 is out of bounds for axis 0 (position) of length 4 of a Tensor [4 × 64]"),
    ('trace(m, "Hello").resid + tensor([1, 2])', "shapes [5 × 4 × 64] and [2] do not broadcast"),
    ('ablate(block: 1)', 'ablate needs point: (what to zero) or heads: (which heads of z to zero), or both'),
    ('trace(m, "Hello", interventions: [ablate(block: 1, heads: [8])])', "head 8 is not one of block 1's 8 heads (0…7)"),
    ('intervene(block: 1, point: "mlp_post")', "intervene needs scale:, add: or both (x becomes x · scale + add); ablate(…) zeroes"),
    ('intervene(block: 1, point: "embed", scale: 2)', "embed is not in a block: leave block: out"),
    ('ablate(point: "pattern", block: 1)', 'point: "pattern" cannot be ablated: choose one of embed, resid_pre, q, k, v, z, attn_out, resid_mid, mlp_pre, mlp_post, mlp_out, resid_post, ln_final, logits'),
    ('intervene(block: 1, point: "mlp_post", positions: [-1], scale: 2)', "positions: -1: count positions from 0"),
    ('trace(m, "Hello", interventions: [intervene(block: 1, point: "mlp_post", neurons: [172], scale: 2)])', "neuron 172 is not one of the 172 of a mlp_post row of block 1 (0…171)"),
    ('trace(m, "Hello", interventions: [intervene(block: 1, point: "resid_mid", neurons: [1, 2], add: tensor([1, 2, 3]))])',
     "the addition has 3 values, but 2 elements of each resid_mid row of block 1 are chosen: give one number or 2"),
    ('trace(m, "Hello", interventions: [ablate(block: 1, point: "resid_mid", positions: [4])])', "position 4 is not one of this run's 4 positions (0…3)"),
    ('patch(trace(m, "Hello"), block: 2, point: "attn_out")', 'the source trace did not keep attn_out at block 2'),
    ('save(trace(m, "Hello"), "/tmp/x.txt")', 'must end in .npy (one Tensor) or .npz (several)'),
])
def test_bad_trace_arguments_are_refused_naming_the_problem(code, message):
    stories = inside("").parent.parent / "models" / "stories260K.gguf"
    result = subprocess.run([lumen_bin(), "repl", "--no-log"], input=f'let m = load("{stories}")\n{code}\n', capture_output=True, text=True, timeout=60)
    assert message in result.stdout + result.stderr, result.stdout + result.stderr


def test_a_trace_of_a_generation_keeps_the_generated_tokens_activations(tmp_path):
    out = run_cells(f'let m = load("{MODELS["smollm2"]}")\n'
                    'let plain = m.generate("The capital of France is", maxTokens: 6, temperature: 0)\n'
                    'let g = trace(m, "The capital of France is", generate: 6, keep: ["resid", "attn"])\n'
                    'let p = trace(m, "The capital of France is")\n'
                    f'save(g, "{tmp_path / "g.npz"}")\nsave(p, "{tmp_path / "p.npz"}")\n'
                    'print(json(["same": g.text == plain.text, "ids": g.ids, "plain": p.ids, "text": g.text]))\n')
    shown = json.loads(out[out.index("{"):])
    assert shown["same"] and shown["text"], shown
    generated, prompt = np.load(tmp_path / "g.npz"), np.load(tmp_path / "p.npz")
    n = len(shown["plain"])
    # Every token but the last drawn ran through the model; the prompt's rows are a prompt-only trace's.
    assert len(shown["ids"]) == n + 6 and generated["resid_post"].shape == (30, n + 5, 576) and generated["pattern"].shape == (30, 9, n + 5, n + 5)
    assert np.array_equal(generated["resid_post"][:, :n], prompt["resid_post"])
    assert np.allclose(generated["pattern"].sum(axis=3), 1, atol=1e-5)


@pytest.mark.parametrize("pooling", ["mean", "cls", "last"])
def test_embed_in_cells_is_llama_cpps_embedding(pooling, tmp_path):
    reference = json.loads((pathlib.Path(__file__).parent.parent / "reference/inside/embeddings.json").read_text())
    expected = np.array([case["normalized"] for case in reference["models"][MODELS["smollm2"].name]["pooling"][pooling]])
    run_cells(f'let m = load("{MODELS["smollm2"]}")\n'
              f'save(embed(m, {json.dumps(reference["texts"])}, pooling: "{pooling}"), "{tmp_path / "e.npy"}")\n')
    ours = np.load(tmp_path / "e.npy")
    assert ours.shape == expected.shape and np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)
    assert np.min(np.sum(ours * expected, axis=1)) >= 0.999


@pytest.mark.parametrize("name", MODELS)
def test_a_steered_trace_gives_llama_cpps_steered_logits(name, tmp_path):
    from test_control_vectors import kl
    case = json.loads(inside(f"{name}-steer.json").read_text())
    expected = np.fromfile(inside(f"{name}-steer.logits.bin"), dtype=np.float32)
    run_cells(f'let m = load("{MODELS[name]}")\n'
              f'let v = controlVector("{inside(f"{name}-steer.cvec.gguf")}")\n'
              f'save(trace(m, {json.dumps(case["target"])}, blocks: [], steer: v, steerScale: {case["scale"]}, '
              f'steerBlocks: {case["il_start"]}...{case["il_end"]}), "{tmp_path / "steered.npz"}")\n'
              f'save(trace(m, {json.dumps(case["target"])}, blocks: []), "{tmp_path / "plain.npz"}")\n')
    steered, plain = np.load(tmp_path / "steered.npz")["logits"], np.load(tmp_path / "plain.npz")["logits"]
    assert kl(expected, steered) <= 0.02 and kl(expected, steered) < kl(expected, plain)


def test_norm_of_a_number_is_its_magnitude():
    assert run_cells('print(norm(-3), norm(tensor([3, 4])))\n').split() == ["3.0", "5.0"]
