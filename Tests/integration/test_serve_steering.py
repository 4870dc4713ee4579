"""`lumen serve` steering one request at a time, by name: `--control-vector-file NAME=FILE` and
`--sae NAME=PATH` load control vectors and sparse autoencoders without applying them; a request's
`control_vectors` (with `control_vector_layer_range`) steers it alone as `lumen generate
--control-vector-scaled FILE SCALE --control-vector-layer-range A B` does (which
test_control_vectors.py holds to llama.cpp's steered logits), `features` sets SAE features at the
SAE's hook, and steered requests decode in the same passes as unsteered ones, each getting what
it gets alone. Mistakes are 400s naming the field; a request never names a path."""
import json
import pathlib
import subprocess
import urllib.error
import urllib.request

import numpy as np
import pytest

from conftest import lumen_bin
from servers import SMOLLM2
from test_control_vectors import inside
from test_serve_batching import decoded_together, texts
from test_serve_faults import post, runs, serve

SAE = pathlib.Path(__file__).resolve().parents[1] / "reference" / "sae" / "saelens-jumprelu-bf16"
TOKENS = 16


def get(server, path):
    with urllib.request.urlopen(server.url.removesuffix("/v1") + path, timeout=60) as response:
        return json.loads(response.read())


def generated(prompt, *flags, temperature=0):
    """`lumen generate`'s text for `prompt` with `flags` (greedy unless a temperature is given)."""
    result = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), prompt, "--temp", str(temperature), "-n", str(TOKENS), "--no-log", "--json", *map(str, flags)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["text"]


def test_requests_steer_themselves_alone_by_name_as_lumen_generate_and_decode_with_unsteered_ones(tmp_path):
    import gguf
    VECTOR = inside("smollm2-steer.cvec.gguf")
    case = json.loads(inside("smollm2-steer.json").read_text())
    scale, first, last, prompt = case["scale"], case["il_start"], case["il_end"], case["target"]
    server = serve(tmp_path, "-np", "4", "--control-vector-file", f"steer={VECTOR}", "--sae", f"jump={SAE}")
    try:
        # What the server loaded, by name, with each direction's length as NumPy computes it.
        reader = gguf.GGUFReader(str(VECTOR))
        directions = {int(tensor.name.split(".")[1]): np.asarray(tensor.data, dtype=np.float64) for tensor in reader.tensors}
        listed = get(server, "/control-vectors")["data"]
        assert [entry["name"] for entry in listed] == ["steer"] and listed[0]["width"] == 576
        assert listed[0]["blocks"] == sorted(directions)
        assert np.allclose(listed[0]["norms"], [np.linalg.norm(directions[block]) for block in sorted(directions)], rtol=1e-6)
        assert get(server, "/saes")["data"] == [{"name": "jump", "hook": "blocks.12.hook_resid_post", "architecture": "jumprelu", "d_in": 576, "d_sae": 32}]

        bodies = [
            {"prompt": prompt, "control_vectors": {"steer": scale}, "control_vector_layer_range": [first, last]},
            {"prompt": prompt, "control_vectors": {"steer": 2 * scale}},
            {"prompt": prompt, "features": {"jump": {"0": 60.0}}},
            {"prompt": prompt},
            {"prompt": "Once upon a time"},
            {"prompt": "1, 2, 3,", "control_vectors": {"steer": scale / 2}, "control_vector_layer_range": [first, last]},
            {"prompt": prompt, "control_vectors": {"steer": scale}, "control_vector_layer_range": [first, last], "temperature": 0.8, "seed": 7},
        ]
        alone = texts(server, bodies, TOKENS, together=False)
        # As the command line steers, and each steering changes the text.
        assert alone[0] == generated(prompt, "--control-vector-scaled", VECTOR, scale, "--control-vector-layer-range", first, last)
        assert alone[1] == generated(prompt, "--control-vector-scaled", VECTOR, 2 * scale)
        assert alone[3] == generated(prompt)
        # Sampled with a seed, as the command line samples with it.
        assert alone[6] == generated(prompt, "--control-vector-scaled", VECTOR, scale, "--control-vector-layer-range", first, last, "--seed", 7,
                                     temperature=0.8)
        assert len(set(alone[:4])) == 4, alone[:4]
        # Seven requests for four sequences, steered and not: each gets what it gets alone.
        assert texts(server, bodies, TOKENS, together=True) == alone

        # Four endless streams, three steered three ways, each past its first token: every step
        # decodes all four at once.
        _, _, most = decoded_together(server, [{key: value for key, value in body.items() if key != "prompt"} for body in bodies[:4]])
        assert most == 4

        # The run log keeps each request's steering: the vector's file and scale, the blocks, the feature set.
        records = [record for record in runs(server) if record["prompt"] == prompt and not record["interrupted"]]
        steered = [record["options"].get("steering") for record in records]
        assert {"vectors": [{"path": str(VECTOR), "scale": scale}], "blocks": [first, last]} in steered
        assert {"vectors": [{"path": str(VECTOR), "scale": 2 * scale}]} in steered
        features = [record["options"]["interventions"] for record in records if record["options"].get("interventions")]
        assert features and all(entry == [{"kind": "feature", "point": "resid_post", "block": 12, "sae": str(SAE), "feature": 0, "value": 60.0}]
                                for entry in features), features
    finally:
        server.stop()


def test_steering_mistakes_are_400_naming_the_field_and_no_name_reaches_the_disk(tmp_path):
    VECTOR = inside("smollm2-steer.cvec.gguf")
    server = serve(tmp_path, "--control-vector-file", f"steer={VECTOR}", "--sae", f"jump={SAE}")
    bare = serve(tmp_path / "bare")
    try:
        cases = [
            ({"control_vectors": {"happy": 1.0}}, "control_vectors", "no control vector named 'happy' is loaded; loaded: steer"),
            ({"control_vectors": {str(VECTOR): 1.0}}, "control_vectors", f"no control vector named '{VECTOR}' is loaded"),
            ({"control_vectors": {"steer": "strong"}}, "control_vectors", "malformed request"),
            ({"control_vectors": {"steer": 1.0}, "control_vector_layer_range": [3, 30]}, "control_vector_layer_range",
             "must be [first, last] with 0 ≤ first ≤ last ≤ 29"),
            ({"control_vectors": {"steer": 1.0}, "control_vector_layer_range": [5, 2]}, "control_vector_layer_range", "got [5, 2]"),
            ({"control_vector_layer_range": [1, 2]}, "control_vector_layer_range", "needs control_vectors"),
            ({"features": {"jump": {"32": 1.0}}}, "features", "'jump' has features 0…31; '32' is not one of them"),
            ({"features": {"jump": {"x": 1.0}}}, "features", "'x' is not one of them"),
            ({"features": {"other": {"1": 1.0}}}, "features", "no SAE named 'other' is loaded; loaded: jump"),
        ]
        for fields, param, message in cases:
            status, _, answer = post(server, {"prompt": "x", "max_tokens": 1, **fields})
            assert status == 400 and answer["error"]["param"] == param and message in answer["error"]["message"], (fields, answer)
        status, _, answer = post(bare, {"prompt": "x", "max_tokens": 1, "control_vectors": {"steer": 1.0}})
        assert status == 400 and "none was loaded (lumen serve --control-vector-file NAME=…)" in answer["error"]["message"], answer
        # A scale too large for a double, which Python's json cannot write.
        request = urllib.request.Request(server.url + "/completions", data=b'{"prompt": "x", "control_vectors": {"steer": 1e309}}', method="POST",
                                         headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)
        answer = json.loads(refused.value.read())
        assert refused.value.code == 400 and answer["error"]["param"] == "control_vectors", answer
        assert "field 'control_vectors.steer' must be a finite number, got 1e309" in answer["error"]["message"], answer
    finally:
        server.stop()
        bare.stop()
    for flags, message in ((["--control-vector-file", "steer"], "--control-vector-file takes NAME=PATH, got 'steer'"),
                           (["--sae", f"a={SAE}", "--sae", f"a={SAE}"], "--sae: the name 'a' is given twice"),
                           (["--control-vector-file", f"g={inside('gemma3-steer.cvec.gguf')}"], "fits no served model: the control vector has 640 values per block")):
        result = subprocess.run([lumen_bin(), "serve", str(SMOLLM2), "--port", "0", "--no-log", *flags], capture_output=True, text=True, timeout=120)
        assert result.returncode != 0 and message in result.stderr, result.stderr


def test_connect_steers_a_served_model_by_name_as_the_server_does(tmp_path):
    VECTOR = inside("smollm2-steer.cvec.gguf")
    case = json.loads(inside("smollm2-steer.json").read_text())
    scale, first, last, prompt = case["scale"], case["il_start"], case["il_end"], case["target"]
    server = serve(tmp_path, "--control-vector-file", f"steer={VECTOR}", "--sae", f"jump={SAE}")
    try:
        direct = texts(server, [{"prompt": prompt, "control_vectors": {"steer": scale}, "control_vector_layer_range": [first, last]},
                                {"prompt": prompt, "features": {"jump": {"0": 60.0}}}], TOKENS, together=False)
        script = (f'let r = connect("{server.url}")\n'
                  f'let a = generate(r, {json.dumps(prompt)}, steer: "steer", steerScale: {scale}, steerBlocks: {first}...{last}, temperature: 0, maxTokens: {TOKENS})\n'
                  f'let b = generate(r, {json.dumps(prompt)}, features: ["jump": [0: 60]], temperature: 0, maxTokens: {TOKENS})\n'
                  'print(json(["a": a.text, "b": b.text]))\n')
        result = subprocess.run([lumen_bin(), "repl", "--no-log"], input=script, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        shown = json.loads(result.stdout[result.stdout.rindex('{"'):].strip())
        assert [shown["a"], shown["b"]] == direct
    finally:
        server.stop()
