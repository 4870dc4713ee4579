"""The run log from outside: every entry point writes a complete record (checked against what the
user saw, the model file's SHA-256 by hashlib and the notebook's cell ids), records committed
before a SIGKILL survive it, the log can be turned off three ways, the JSONL export round-trips,
and `replay` of a greedy run is identical. The database is read with Python's sqlite3."""
import hashlib
import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import time

import nbformat
import pytest

from conftest import collect_iopub, lumen_bin, run, shell_reply, start_kernel

SHARED = pathlib.Path(os.environ.get("LUMEN_TEST_DATA", ""))
STORIES = SHARED / "models/stories260K.gguf"
TEXT = pathlib.Path(__file__).resolve().parent.parent / "reference/perplexity/story.txt"


@pytest.fixture
def log_path(tmp_path, monkeypatch):
    path = tmp_path / "runs.sqlite"
    monkeypatch.setenv("LUMEN_LOG_PATH", str(path))
    return path


def records(path):
    connection = sqlite3.connect(path)
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute("SELECT * FROM run ORDER BY id")]
    finally:
        connection.close()


def repl(script):
    """What `lumen repl` prints fed `script` on its input, its last line last."""
    return subprocess.run([lumen_bin(), "repl"], input=script, capture_output=True, text=True, check=True).stdout


def run_cell(client, code, cell_id):
    """Executes `code` as JupyterLab does, with the cell's id in the request's metadata."""
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}
    message = client.session.msg("execute_request", content, metadata={"cellId": cell_id})
    client.shell_channel.send(message)
    collect_iopub(client, message["header"]["msg_id"])
    return shell_reply(client, message["header"]["msg_id"])


def complete(record):
    """The fields every generation record must fill, consistent with one another."""
    model = json.loads(record["model"])
    assert model["sha256"] == hashlib.sha256(pathlib.Path(model["path"]).read_bytes()).hexdigest()
    assert model["architecture"] == "llama" and "F32" in model["tensorTypes"]
    ids, logprobs = json.loads(record["tokenIDs"]), json.loads(record["logProbabilities"])
    assert len(ids) == len(logprobs) == record["generatedTokens"] > 0
    assert all(value <= 0 for value in logprobs)
    options = json.loads(record["options"])
    assert set(options) == {"maxTokens", "temperature", "topK", "topP", "minP", "repeatPenalty", "seed", "stop"}
    assert record["promptTokens"] > 0 and record["tokensPerSecond"] > 0 and record["finishReason"] in ("length", "eos", "stop")
    return model, ids, options


def test_cli_entry_points_write_complete_records(log_path):
    result = subprocess.run([lumen_bin(), "generate", str(STORIES), "Once upon a time", "-n", "6", "--temp", "0", "--seed", "7", "--json"],
                            capture_output=True, text=True, check=True)
    shown = json.loads(result.stdout)
    subprocess.run([lumen_bin(), "chat", str(STORIES), "-n", "4", "--temp", "0"], input="Hello there\n\n", capture_output=True, text=True, check=True)
    subprocess.run([lumen_bin(), "perplexity", str(STORIES), str(TEXT), "--ctx", "128"], capture_output=True, text=True, check=True)
    kld = subprocess.run([lumen_bin(), "kld", str(SHARED / "models/quant-test-f32.gguf"), str(SHARED / "models/quant-test-q8_0.gguf"), str(TEXT),
                          "--ctx", "256"], capture_output=True, text=True, check=True)
    generate, chat, perplexity, comparison = records(log_path)
    assert comparison["entry"] == "lumen kld" and f'{comparison["value"]:10.6f}' in kld.stdout
    _, ids, options = complete(generate)
    assert (generate["entry"], generate["prompt"], ids, generate["output"]) == ("lumen generate", "Once upon a time", shown["ids"], shown["text"])
    assert options["seed"] == 7 and options["maxTokens"] == 6 and options["temperature"] == 0
    assert json.loads(generate["origin"]) == {"frontEnd": "cli"}
    complete(chat)
    assert chat["entry"] == "lumen chat" and chat["prompt"] == "Hello there"
    assert json.loads(chat["messages"])[-1] == {"role": "user", "content": "Hello there"} and "Hello there" in chat["renderedPrompt"]
    assert perplexity["kind"] == "perplexity" and perplexity["value"] > 1 and json.loads(perplexity["figures"])["context"] == 128


def test_kernel_cells_are_logged_with_notebook_cell_and_count(log_path, kernelspecs, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "experiments/shells.ipynb")
    manager, client = start_kernel("lumen")
    try:
        run(client, f'let m = load("{STORIES}")')
        reply = run_cell(client, 'let g = m.generate("Once upon a time", maxTokens: 5, temperature: 0)', "cell-abc")
        count = reply["content"]["execution_count"]
        run(client, 'let c = conversation(m)\nc.say("Hi", maxTokens: 3)')
        run(client, 'batch(m, ["A", "B"], maxTokens: 3)')
        run(client, 'compare(m, "Once", temperature: [0.0, 1.0], maxTokens: 3)')
        run(client, 'let job = spawn { m.generate("In the park", maxTokens: 3) }\njob.result')
        reply, _ = run(client, f'compareModels(m, load("{SHARED / "models/quant-test-f32.gguf"}"), "Once upon a time there was a cat")')
        assert reply["content"]["status"] == "ok", reply["content"]
        run(client, '%log off')
        run(client, 'm.generate("unlogged", maxTokens: 2)')
        run(client, '%log on')
    finally:
        client.stop_channels()
        # A shutdown request: the kernel writes what is queued before it exits.
        manager.shutdown_kernel()
    logged = records(log_path)
    assert [record["entry"] for record in logged] == ["generate", "say", "batch", "batch", "compare", "compare", "generate", "compareModels"]
    comparison = logged.pop()
    assert comparison["kind"] == "comparison" and json.loads(comparison["baseModel"])["name"] == "stories260K"
    assert json.loads(comparison["model"])["name"] == "quant-test-f32" and comparison["value"] == json.loads(comparison["figures"])["meanKL"] > 0
    origin = json.loads(logged[0]["origin"])
    assert origin == {"frontEnd": "kernel", "notebook": "experiments/shells.ipynb", "cell": "cell-abc", "executionCount": count}
    for record in logged:
        complete(record)
    assert sorted(record["prompt"] for record in logged[2:4]) == ["A", "B"]
    assert sorted(json.loads(record["options"])["temperature"] for record in logged[4:6]) == [0.0, 1.0]
    assert logged[6]["prompt"] == "In the park" 
    assert all("unlogged" not in record["prompt"] for record in logged)


def test_lumen_run_logs_each_cell_by_its_id(log_path, tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f'let m = load("{STORIES}")'),
                      nbformat.v4.new_code_cell('m.generate("Once", maxTokens: 3, temperature: 0)')]
    path = tmp_path / "tiny.ipynb"
    nbformat.write(notebook, path)
    subprocess.run([lumen_bin(), "run", str(path), "--quiet"], capture_output=True, text=True, check=True)
    (record,) = records(log_path)
    assert json.loads(record["origin"]) == {"frontEnd": "run", "notebook": str(path), "cell": notebook.cells[1]["id"], "executionCount": 2}
    complete(record)


def test_records_committed_before_a_sigkill_survive_it(log_path, kernelspecs):
    manager, client = start_kernel("lumen")
    try:
        run(client, f'let m = load("{STORIES}", instances: 2)')
        prompts = ", ".join(f'"prompt {i}"' for i in range(400))
        client.execute(f'batch(m, [{prompts}], maxTokens: 200)')
        seen = []
        deadline = time.monotonic() + 120
        while len(seen) < 3 and time.monotonic() < deadline:
            if log_path.exists():
                seen = records(log_path)
        assert len(seen) >= 3, "the batch logged nothing while it ran"
        os.kill(manager.provisioner.process.pid, signal.SIGKILL)
        manager.provisioner.process.wait()
    finally:
        client.stop_channels()
        manager.cleanup_resources()
    connection = sqlite3.connect(log_path)
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    connection.close()
    after = records(log_path)
    assert len(after) < 400, "the kernel finished the batch before it was killed"
    assert [record["id"] for record in after[:len(seen)]] == [record["id"] for record in seen]
    for before, now in zip(seen, after):
        assert before == now
        complete(now)


def test_the_log_can_be_turned_off(log_path):
    subprocess.run([lumen_bin(), "generate", str(STORIES), "x", "-n", "2", "--no-log"], capture_output=True, check=True)
    subprocess.run([lumen_bin(), "generate", str(STORIES), "x", "-n", "2"], capture_output=True, check=True,
                   env=dict(os.environ, LUMEN_LOG="0"))
    assert not log_path.exists()
    repl(f'let m = load("{STORIES}")\n%log off\nm.generate("x", maxTokens: 2)\n')
    assert records(log_path) == []


def test_export_round_trips_and_replay_is_identical_for_a_greedy_run(log_path, tmp_path):
    script = (f'let m = load("{STORIES}")\nm.generate("Once upon a time", maxTokens: 16, temperature: 0)\n'
              'm.generate("The dog", maxTokens: 8, temperature: 0.9, seed: 3)\nlet r = replay(runs()[1])\nlet s = replay(runs()[1])\n'
              'print("identical:", r.identical, s.identical, r.original == r.text)\n')
    output = repl(script)
    assert output.splitlines()[-1] == "identical: true true true", output
    exported = tmp_path / "runs.jsonl"
    subprocess.run([lumen_bin(), "log", "export", "--jsonl", "-o", str(exported)], check=True)
    lines = exported.read_text().splitlines()
    assert [json.loads(line)["entry"] for line in lines] == ["generate", "generate", "replay", "replay"]
    other = tmp_path / "other.sqlite"
    subprocess.run([lumen_bin(), "log", "import", str(exported)], check=True, capture_output=True, env=dict(os.environ, LUMEN_LOG_PATH=str(other)))
    again = subprocess.run([lumen_bin(), "log", "export"], check=True, capture_output=True, text=True, env=dict(os.environ, LUMEN_LOG_PATH=str(other)))
    assert again.stdout == exported.read_text()
    assert records(other) == records(log_path)
    shown = subprocess.run([lumen_bin(), "log", "show", "1", "--json"], check=True, capture_output=True, text=True).stdout
    assert json.loads(shown) == json.loads(lines[0])


def test_a_steered_generation_is_logged_with_its_vectors_and_replays_identically(log_path):
    vector = SHARED / "reference/inside/smollm2-steer.cvec.gguf"
    model = pathlib.Path(os.environ.get("LUMEN_MODEL_CACHE", pathlib.Path.home() / ".cache/lumen/models")) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    # The file given by a relative path is logged by its absolute one, and 0.3 as 0.3.
    steered = subprocess.run([lumen_bin(), "generate", str(model), "My opinion of the movie:", "-n", "12", "--temp", "0", "--json",
                              "--control-vector-scaled", os.path.relpath(vector), "0.3", "--control-vector-layer-range", "8", "12"],
                             capture_output=True, text=True, check=True)
    plain = subprocess.run([lumen_bin(), "generate", str(model), "My opinion of the movie:", "-n", "12", "--temp", "0", "--json", "--no-log"],
                           capture_output=True, text=True, check=True)
    assert json.loads(steered.stdout)["ids"] != json.loads(plain.stdout)["ids"]
    [record] = records(log_path)
    options = json.loads(record["options"])
    assert options["steering"] == {"vectors": [{"path": str(vector.resolve()), "scale": 0.3}], "blocks": [8, 12]}
    replayed = repl('let r = replay(runs()[0])\nprint("identical:", r.identical)\n')
    assert replayed.splitlines()[-1] == "identical: true", replayed
    assert json.loads(records(log_path)[1]["options"])["steering"] == options["steering"]


def test_generations_under_adapters_are_logged_with_them_and_replay_identically(log_path):
    adapter = pathlib.Path(os.environ.get("LUMEN_ADAPTERS", ".build/adapters")) / "smollm2-r16.gguf"
    model = pathlib.Path(os.environ.get("LUMEN_MODEL_CACHE", pathlib.Path.home() / ".cache/lumen/models")) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    digest = hashlib.sha256(adapter.read_bytes()).hexdigest()
    # The command line's adapters (a relative path logged by its absolute one, 0.7 as 0.7), then a
    # cell's generation under adapters of its own on a model loaded without any.
    subprocess.run([lumen_bin(), "generate", str(model), "My opinion of the movie:", "-n", "12", "--temp", "0",
                    "--lora-scaled", f"{os.path.relpath(adapter)}:0.7"], capture_output=True, text=True, check=True)
    replayed = repl(f'let m = load("{model}")\n'
                    f'let g = m.generate("My opinion of the movie:", maxTokens: 12, temperature: 0, lora: ["{adapter}": -0.5])\n'
                    'let p = m.generate("My opinion of the movie:", maxTokens: 12, temperature: 0)\n'
                    'print("differs:", g.text != p.text, "identical:", replay(runs()[2]).identical, replay(runs()[2]).identical)\n')
    assert replayed.splitlines()[-1] == "differs: true identical: true true", replayed
    logged = [json.loads(record["model"]).get("adapters") for record in records(log_path)]
    cli, cell = [{"path": str(adapter.resolve()), "scale": scale, "sha256": digest} for scale in (0.7, -0.5)]
    assert logged == [[cli], [cell], None, [cli], [cell]], logged


def test_a_generation_with_ablations_an_edit_and_a_patch_is_logged_with_them_and_replays_identically(log_path):
    script = (f'let m = load("{STORIES}")\n'
              'let clean = trace(m, "Once upon a time there was a cat", keep: ["resid"], blocks: [2])\n'
              'let plain = m.generate("Once upon a time there was a dog", maxTokens: 12, temperature: 0)\n'
              'let changed = m.generate("Once upon a time there was a dog", maxTokens: 12, temperature: 0, '
              'interventions: [ablate(block: 1, heads: [0, 3]), ablate(block: 0, point: "ffn_out"), patch(clean, block: 2, positions: [-1]), '
              'intervene(block: 3, point: "mlp_post", neurons: [1, 5], positions: [2, 3], scale: 3, add: 0.5)])\n'
              'let r = replay(runs()[0])\nprint("differs:", plain.text != changed.text, "identical:", r.identical)\n')
    output = repl(script)
    assert output.splitlines()[-1] == "differs: true identical: true", output
    changed, replayed = records(log_path)[1], records(log_path)[2]
    interventions = json.loads(changed["options"])["interventions"]
    assert interventions[0] == {"kind": "ablate", "point": "z", "block": 1, "heads": [0, 3]}
    assert interventions[1] == {"kind": "ablate", "point": "mlp_out", "block": 0}
    assert interventions[2]["kind"] == "patch" and interventions[2]["positions"] == [len(interventions[2]["source"]) - 1]
    assert interventions[3] == {"kind": "edit", "point": "mlp_post", "block": 3, "neurons": [1, 5], "positions": [2, 3], "scale": 3.0, "addition": [0.5]}
    assert json.loads(replayed["options"])["interventions"] == interventions


def write_sae(folder, width, features, block, seed):
    """A random standard SAE over `block`'s residual stream in SAELens' format."""
    import numpy as np
    from safetensors.numpy import save_file
    rng = np.random.default_rng(seed)
    folder.mkdir()
    save_file({"W_enc": rng.standard_normal((width, features), dtype=np.float32), "b_enc": np.zeros(features, dtype=np.float32),
               "W_dec": (rng.standard_normal((features, width), dtype=np.float32) / np.sqrt(width)).astype(np.float32), "b_dec": np.zeros(width, dtype=np.float32)},
              str(folder / "sae_weights.safetensors"))
    (folder / "cfg.json").write_text(json.dumps({"architecture": "standard", "d_in": width, "d_sae": features,
                                                 "hook_name": f"blocks.{block}.hook_resid_post", "apply_b_dec_to_input": True}))


def test_a_generation_with_a_feature_set_is_logged_with_its_sae_and_replays_identically(log_path, tmp_path):
    folder = tmp_path / "sae"
    write_sae(folder, width=64, features=16, block=2, seed=7)
    script = (f'let m = load("{STORIES}")\n'
              f'let s = loadSAE("{folder}")\n'
              'let plain = m.generate("Once upon a time", maxTokens: 12, temperature: 0)\n'
              'let changed = m.generate("Once upon a time", maxTokens: 12, temperature: 0, interventions: [setFeature(s, feature: 3, value: 30)])\n'
              'let r = replay(runs()[0])\nprint("differs:", plain.text != changed.text, "identical:", r.identical)\n')
    output = repl(script)
    assert output.splitlines()[-1] == "differs: true identical: true", output
    changed, replayed = records(log_path)[1], records(log_path)[2]
    [intervention] = json.loads(changed["options"])["interventions"]
    assert intervention == {"kind": "feature", "point": "resid_post", "block": 2, "sae": str(folder), "feature": 3, "value": 30.0}
    assert json.loads(replayed["options"])["interventions"] == [intervention]


def test_a_traced_generation_is_logged_with_its_interventions_and_replays_identically(log_path):
    script = (f'let m = load("{STORIES}")\n'
              'let t = trace(m, "Once upon a time", generate: 10, interventions: [ablate(block: 0, point: "ffn_out")])\n'
              'let r = replay(runs()[0])\nprint("identical:", r.identical, r.text == t.text)\n')
    output = repl(script)
    assert output.splitlines()[-1] == "identical: true true", output
    traced = records(log_path)[0]
    assert traced["entry"] == "trace" and json.loads(traced["options"])["interventions"] == [{"kind": "ablate", "point": "mlp_out", "block": 0}]


def test_a_generation_steered_by_a_tensor_direction_is_logged_with_its_values_and_replays_identically(log_path):
    script = (f'let m = load("{STORIES}")\n'
              'let d = trace(m, "Lily was happy", blocks: [2]).resid[0][-1] - trace(m, "Lily was sad", blocks: [2]).resid[0][-1]\n'
              'let plain = m.generate("Once upon a time", maxTokens: 12, temperature: 0)\n'
              'let steered = m.generate("Once upon a time", maxTokens: 12, temperature: 0, steer: d, steerScale: 8, steerBlocks: 1...3)\n'
              'let r = replay(runs()[0])\nprint("differs:", plain.text != steered.text, "identical:", r.identical, "width:", d.shape)\n')
    output = repl(script)
    assert output.splitlines()[-1] == "differs: true identical: true width: [64]", output
    steering = json.loads(records(log_path)[1]["options"])["steering"]
    assert steering["blocks"] == [1, 3] and steering["vectors"][0]["scale"] == 8 and len(steering["vectors"][0]["values"]) == 64


def test_a_generation_steered_in_a_cell_is_logged_with_its_prompts_and_replays_identically(log_path):
    script = (f'let m = load("{STORIES}")\n'
              'let v = steeringVector(m, positive: ["Lily was happy"], negative: ["Lily was sad"])\n'
              'let plain = m.generate("Once upon a time", maxTokens: 12, temperature: 0)\n'
              'let steered = m.generate("Once upon a time", maxTokens: 12, temperature: 0, steer: v, steerScale: 8, steerBlocks: 1...3)\n'
              'let r = replay(runs()[0])\nprint("differs:", plain.text != steered.text, "identical:", r.identical)\n')
    output = repl(script)
    assert output.splitlines()[-1] == "differs: true identical: true", output
    steered = records(log_path)[1]
    assert json.loads(steered["options"])["steering"] == {
        "vectors": [{"positive": ["Lily was happy"], "negative": ["Lily was sad"], "scale": 8.0}], "blocks": [1, 3]}


def test_a_generation_steered_by_a_normalized_pca_vector_is_logged_with_its_method_and_replays_identically(log_path):
    script = (f'let m = load("{STORIES}")\n'
              'let v = normalize(steeringVector(m, positive: ["Lily was happy", "Tom was glad"], negative: ["Lily was sad", "Tom was upset"], method: "pca"))\n'
              'let plain = m.generate("Once upon a time", maxTokens: 12, temperature: 0)\n'
              'let steered = m.generate("Once upon a time", maxTokens: 12, temperature: 0, steer: v, steerScale: 8, steerBlocks: 1...3)\n'
              'let r = replay(runs()[0])\nprint("differs:", plain.text != steered.text, "identical:", r.identical, "norms:", v.norms.map { round($0 * 1000) })\n')
    output = repl(script)
    assert output.splitlines()[-1] == "differs: true identical: true norms: [1000.0, 1000.0, 1000.0, 1000.0]", output
    steered = records(log_path)[1]
    assert json.loads(steered["options"])["steering"] == {
        "vectors": [{"positive": ["Lily was happy", "Tom was glad"], "negative": ["Lily was sad", "Tom was upset"], "method": "pca", "normalized": True,
                     "scale": 8.0}], "blocks": [1, 3]}


def test_a_constrained_generation_is_logged_with_its_grammar_and_replays_identically(log_path):
    model = pathlib.Path(os.environ.get("LUMEN_MODEL_CACHE", pathlib.Path.home() / ".cache/lumen/models")) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    script = (f'let m = load("{model}")\n'
              'let g = m.generate("Phone:", regex: "\\\\(\\\\d{3}\\\\) \\\\d{3}-\\\\d{4}", temperature: 0.9, seed: 8)\n'
              'let r = replay(runs()[0])\nprint("identical:", r.identical, r.text == g.text)\n')
    output = repl(script)
    assert output.splitlines()[-1] == "identical: true true", output
    logged = [json.loads(record["options"])["constraint"] for record in records(log_path)]
    assert logged == [{"option": "regex", "text": r"\(\d{3}\) \d{3}-\d{4}"}] * 2
