"""The inference commands as a user runs them: `lumen info`, `lumen generate` (streaming, Ctrl-C)
and `lumen bench --json`, on the shared stories260K model; `--prompt-ids` and `info` on llama.cpp's
random-weight model of each architecture."""
import json
import os
import pathlib
import re
import signal
import subprocess

import numpy as np
import pytest

from conftest import lumen_bin


@pytest.fixture(scope="module")
def model():
    shared = os.environ.get("LUMEN_TEST_DATA")
    path = os.path.join(shared or "", "models", "stories260K.gguf")
    if not shared or not os.path.exists(path):
        pytest.fail("LUMEN_TEST_DATA must name the shared folder with models/stories260K.gguf (make test sets it)")
    return path


def test_info_describes_the_model(model):
    result = subprocess.run([lumen_bin(), "info", model], capture_output=True, text=True, check=True)
    assert "architecture    llama" in result.stdout
    assert "F32 ×48" in result.stdout
    assert "512 tokens" in result.stdout
    assert "8 query, 4 key/value" in result.stdout


def test_generate_greedy_prints_the_story_and_a_summary(model):
    result = subprocess.run([lumen_bin(), "generate", model, "Once upon a time", "-n", "20", "--temp", "0"],
                            capture_output=True, text=True, check=True)
    assert result.stdout.startswith(", there was a little girl named Lily")
    assert "20 generated" in result.stderr and "finished: length" in result.stderr


def test_generate_stops_cleanly_on_ctrl_c_and_still_prints_the_summary(model):
    process = subprocess.Popen([lumen_bin(), "generate", model, "Once upon a time", "-n", "1000000000", "--ctx", "2048", "-t", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.read(16)
    assert first, "no tokens were streamed"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=20)
    assert process.returncode == 0
    assert b"finished: cancelled" in stderr


def test_generate_refuses_a_corrupt_file(tmp_path):
    corrupt = tmp_path / "bad.gguf"
    corrupt.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 40)
    result = subprocess.run([lumen_bin(), "generate", str(corrupt), "hi"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "bad.gguf" in result.stderr


def test_bench_json_reports_each_test_and_thread_count(model):
    result = subprocess.run([lumen_bin(), "bench", model, "-p", "16", "-n", "8", "-t", "1,2", "-r", "1", "--json"],
                            capture_output=True, text=True, check=True)
    rows = json.loads(result.stdout)
    assert [(row["n_threads"], row["test"]) for row in rows] == [(1, "pp16"), (1, "tg8"), (2, "pp16"), (2, "tg8")]
    assert all(row["avg_ts"] > 0 and row["model_n_params"] == 292800 for row in rows)


def test_bench_takes_lists_and_depths_in_llama_bench_conventions(model):
    result = subprocess.run([lumen_bin(), "bench", model, "-p", "8,16", "-n", "4", "-d", "0,32", "-t", "1", "-r", "1", "-o", "jsonl"],
                            capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(row["n_prompt"], row["n_gen"], row["n_depth"], row["test"]) for row in rows] == [
        (8, 0, 0, "pp8"), (16, 0, 0, "pp16"), (0, 4, 0, "tg4"), (8, 0, 32, "pp8 @ d32"), (16, 0, 32, "pp16 @ d32"), (0, 4, 32, "tg4 @ d32")]
    assert result.stderr == ""  # progress only on a terminal
    table = subprocess.run([lumen_bin(), "bench", model, "-p", "8", "-n", "0", "-r", "1", "-o", "csv"], capture_output=True, text=True, check=True)
    header, line = table.stdout.splitlines()
    assert dict(zip(header.split(","), line.split(",")))["n_prompt"] == "8"
    refused = subprocess.run([lumen_bin(), "bench", model, "-p", "8,x"], capture_output=True, text=True)
    assert refused.returncode != 0 and "-p takes counts of 0 or more" in refused.stderr


def test_info_describes_a_file_lumen_cannot_run_and_says_why():
    shared = os.environ.get("LUMEN_TEST_DATA", "")
    # GPT-2 is an architecture Lumen does not run; the Qwen 2 file holds a vocabulary but no weights.
    gpt2 = subprocess.run([lumen_bin(), "info", os.path.join(shared, "models/vocab/ggml-vocab-gpt-2.gguf")],
                          capture_output=True, text=True, check=True)
    assert "gpt2" in gpt2.stdout and "embedding_length" in gpt2.stdout and "768" in gpt2.stdout
    assert 'runs in Lumen' in gpt2.stdout and 'architecture "gpt2" is not supported' in gpt2.stdout
    qwen = subprocess.run([lumen_bin(), "info", os.path.join(shared, "models/vocab/ggml-vocab-qwen2.gguf")],
                          capture_output=True, text=True, check=True)
    assert "qwen2" in qwen.stdout and "tensor token_embd.weight: is missing" in qwen.stdout


def test_info_describes_every_tensor_type_the_gguf_package_knows_and_unknown_ones(tmp_path):
    """A file with one small tensor of each type PyPI's `gguf` numbers (its layouts are the oracle)
    and one of a type id no library knows: `lumen info` lists every type with its tensor's size,
    and says why the file cannot run, naming the unknown type."""
    import gguf
    import numpy as np
    path = tmp_path / "types.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    expected = {}
    for quant_type in gguf.GGMLQuantizationType:
        if quant_type == gguf.GGMLQuantizationType.Q8_1:
            continue  # gguf's Q8_1 size (40 bytes) predates ggml's 36-byte block; no file stores Q8_1
        block_size, block_bytes = gguf.GGML_QUANT_SIZES[quant_type]
        data = np.zeros((64, 128 * block_bytes), dtype=np.uint8)  # sizes that differ in MiB to two places
        writer.add_tensor(f"t.{quant_type.name}", data, raw_dtype=quant_type)
        expected[quant_type.name] = 64 * 128 * block_bytes
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    # Rewrite one tensor's type id to 250, a type nobody has defined: the tensor infos follow the
    # metadata, and each ends with its uint32 type and uint64 offset.
    raw = bytearray(path.read_bytes())
    name = b"t.F32"
    at = raw.index(len(name).to_bytes(8, "little") + name) + 8 + len(name)
    dimensions = int.from_bytes(raw[at:at + 4], "little")
    type_at = at + 4 + 8 * dimensions
    assert int.from_bytes(raw[type_at:type_at + 4], "little") == 0
    raw[type_at:type_at + 4] = (250).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    expected.pop("F32")

    result = subprocess.run([lumen_bin(), "info", str(path)], capture_output=True, text=True, check=True)
    types = next(line for line in result.stdout.splitlines() if line.startswith("tensor types"))
    for type_name, size in expected.items():
        assert f"{type_name} ×1 ({size / 2**20:.2f} MiB)" in types, type_name
    assert "type 250 ×1 (unknown to Lumen)" in types
    assert re.search(rf"^tensors +{len(expected) + 1}$", result.stdout, re.MULTILINE)
    assert "runs in Lumen" in result.stdout and "tensor t.F32: tensor type 250 is unknown to Lumen" in result.stdout
    cannot = next(line for line in result.stdout.splitlines() if line.startswith("types Lumen cannot compute"))
    assert "IQ2_XXS ×1" in cannot and "type 250 ×1" in cannot and "Q4_K" not in cannot and "IQ4_XS" not in cannot
    quantize = subprocess.run([lumen_bin(), "quantize", str(path), str(tmp_path / "out.gguf"), "Q8_0"], capture_output=True, text=True)
    assert quantize.returncode != 0 and "tensor type 250 is unknown to Lumen" in quantize.stderr


def test_every_subcommand_takes_the_global_options(model, tmp_path):
    """README: every command takes --log-level and --no-log (bench, info, quantize, install,
    uninstall and log refused them before)."""
    text = os.path.join(os.path.dirname(__file__), "..", "reference", "perplexity", "story.txt")
    invocations = [["info", model], ["bench", model, "-p", "0", "-n", "1", "-r", "1"], ["quantize", model, str(tmp_path / "q.gguf"), "F16"],
                   ["install", "--prefix", str(tmp_path / "prefix")], ["uninstall", "--prefix", str(tmp_path / "prefix")],
                   ["tokenize", model, "Once"], ["generate", model, "Once", "-n", "2"], ["perplexity", model, text, "--ctx", "128"],
                   ["log", "list"], ["log", "stats"], ["log", "export"], ["trace", model, "Once", "-o", str(tmp_path / "trace")],
                   ["steering", model, "--positive", "happy", "--negative", "sad", "-o", str(tmp_path / "v.gguf")]]
    for invocation in invocations:
        result = subprocess.run([lumen_bin(), *invocation, "--log-level", "error", "--no-log"], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, (invocation, result.stderr)


def test_commands_find_models_by_name_as_load_does(model):
    environment = dict(os.environ, LUMEN_MODEL_PATH=os.path.dirname(model))
    for invocation in (["info", "stories260K"], ["generate", "stories260", "Once", "-n", "2", "--temp", "0"], ["tokenize", "stories260K.gguf", "Once"]):
        result = subprocess.run([lumen_bin(), *invocation, "--no-log"], capture_output=True, text=True, env=environment, timeout=60)
        assert result.returncode == 0, (invocation, result.stderr)
    missing = subprocess.run([lumen_bin(), "info", "no-such-model"], capture_output=True, text=True, env=environment)
    assert missing.returncode == 1 and "no such model file; looked in" in missing.stderr


@pytest.mark.parametrize("arguments, message", [
    (["--top-p", "2"], "--top-p must be in 0…1, got 2"),
    (["-n", "-1"], "-n must be 0 or more, got -1"),
    (["--temp", "-0.5"], "--temp must be 0 or more, got -0.5"),
    (["--top-k", "-3"], "--top-k must be 0 or more, got -3"),
    (["--min-p", "1.5"], "--min-p must be in 0…1, got 1.5"),
    (["--repeat-penalty", "0"], "--repeat-penalty must be more than 0, got 0"),
    (["--seed", "-5"], "--seed must be 0 or more (or -1: a new seed), got -5"),
    (["--ctx", "-2"], "--ctx must be at least 1, got -2"),
])
def test_each_invalid_value_is_named_and_negative_numbers_are_values(model, arguments, message):
    result = subprocess.run([lumen_bin(), "generate", model, "Once", "--no-log", *arguments], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.startswith(f"Error: {message}\n"), result.stderr
    assert "Usage: lumen generate" in result.stderr


def test_a_negative_seed_of_minus_one_means_a_new_seed_as_in_llama_cpp(model):
    result = subprocess.run([lumen_bin(), "generate", model, "Once", "--no-log", "-n", "2", "--seed", "-1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_kv_cache_type_takes_llama_cpps_flags_one_type_for_keys_and_values_that_fits_the_heads(model):
    def generate(*arguments):
        return subprocess.run([lumen_bin(), "generate", model, "Once", "--no-log", "-n", "2", *arguments], capture_output=True, text=True, timeout=60)
    mixed = generate("-ctk", "q8_0", "-ctv", "f16")
    assert mixed.returncode == 2 and mixed.stderr.startswith(
        "Error: -ctk q8_0 with -ctv f16: Lumen's KV cache holds keys and values in one type; give both the same\n"), mixed.stderr
    # stories260K's heads are 8 values wide: a Q8_0 cache's blocks are 32, as llama.cpp refuses too.
    narrow = generate("--cache-type", "q8_0")
    assert narrow.returncode == 2 and narrow.stderr.startswith(
        f"Error: {model}: a q8_0 KV cache needs heads a multiple of 32 values wide; the model's are 8\n"), narrow.stderr
    assert generate("-ctk", "f16", "-ctv", "f16").returncode == 0
    smollm2 = pathlib.Path(os.environ.get("LUMEN_MODEL_CACHE", pathlib.Path.home() / ".cache/lumen/models")) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    bench = subprocess.run([lumen_bin(), "bench", str(smollm2), "-p", "32", "-n", "4", "-ctk", "q8_0", "-ctv", "q8_0", "-o", "jsonl", "--no-log"],
                           capture_output=True, text=True, timeout=120)
    assert bench.returncode == 0 and len(bench.stdout.splitlines()) == 2, bench.stderr


@pytest.mark.parametrize("arguments, message", [
    (["info", "/no/such/model.gguf"], "Error: /no/such/model.gguf: path: no such model file"),
    (["quantize", "/no/such/model.gguf", "out.gguf", "Q8_0"], "Error: "),
    (["repl", "/no/such/script.lumen"], "Error: cannot read /no/such/script.lumen"),
    (["uninstall", "--name", "no-such-kernel"], "Error: no kernelspec named no-such-kernel"),
])
def test_errors_in_a_commands_work_are_named_without_a_usage(tmp_path, arguments, message):
    # The arguments were right; what failed is the work (a missing file, an unknown kernelspec):
    # the error alone, exit status 1, no usage lines.
    env = dict(os.environ, JUPYTER_DATA_DIR=str(tmp_path))
    result = subprocess.run([lumen_bin(), *arguments, "--no-log"], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert result.returncode == 1 and result.stderr.startswith(message), result.stderr
    assert "Usage:" not in result.stderr and "--help" not in result.stderr, result.stderr


@pytest.mark.parametrize("arguments, message", [
    (["log", "list", "--kind", "foo"], 'Error: --kind: no kind of run is called "foo"; the kinds are generation, perplexity, comparison'),
    (["generate", "x.gguf", "hi", "--force-ids", "a,b"], "Error: --force-ids must be comma-separated token ids, got a,b"),
    (["serve", "x.gguf", "--timeout-idle", "0"], "Error: --timeout-idle must be more than 0 and at most 86400 seconds, got 0.0"),
    (["serve", "x.gguf", "--shutdown-grace", "-1"], "Error: --shutdown-grace must be in 0…86400 seconds, got -1.0"),
])
def test_usage_errors_found_by_a_command_show_its_usage_even_nested(arguments, message):
    result = subprocess.run([lumen_bin(), *arguments, "--no-log"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.startswith(message + "\n"), result.stderr
    path = " ".join(arguments[:2] if arguments[0] == "log" else arguments[:1])
    assert f"Usage: lumen {path} " in result.stderr and f"See 'lumen {path} --help'" in result.stderr, result.stderr
    assert "lumen <subcommand>" not in result.stderr


def test_serve_on_a_port_in_use_says_so():
    import socket
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run([lumen_bin(), "serve", os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf"),
                                 "--port", str(port), "--no-log"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert f"\nError: port {port} is in use (127.0.0.1:{port}): stop what holds it, or choose another --port" in result.stderr, result.stderr
    assert "errno" not in result.stderr and "bind(" not in result.stderr


@pytest.mark.parametrize("arguments", [["info", "--help"], ["help", "repl"], ["quantize", "-h"]])
def test_help_is_help_not_an_error(arguments):
    result = subprocess.run([lumen_bin(), *arguments], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("OVERVIEW:"), (result.stdout, result.stderr)
    assert "Error" not in result.stdout + result.stderr


ARCHITECTURE_REFERENCES = os.path.join(os.path.dirname(__file__), "..", "reference", "archs")


def architecture_model(name):
    """llama.cpp's random-weight model of reference `name` (make arch-models), and its reference."""
    reference = json.load(open(os.path.join(ARCHITECTURE_REFERENCES, f"{name}.json")))
    path = os.path.join(os.environ.get("LUMEN_ARCH_MODELS", ".build/arch-models"), reference["model"])
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: run make arch-models")
    return path, reference


@pytest.mark.parametrize("name", sorted(file[:-5] for file in os.listdir(ARCHITECTURE_REFERENCES) if file.endswith(".json")))
def test_generate_takes_a_prompt_as_ids_and_continues_as_llama_cpp_does(name):
    """llama.cpp's own random-weight model of each architecture (make arch-models) has no text
    vocabulary: its prompt is given as ids, and the greedy ids are llama.cpp's
    (Tests/reference/archs/NAME.json)."""
    path, reference = architecture_model(name)
    case = reference["cases"][0]
    ids = ",".join(map(str, case["prompt_ids"]))
    result = subprocess.run([lumen_bin(), "generate", path, "--prompt-ids", ids, "-n", "6", "--temp", "0", "--json"],
                            capture_output=True, text=True, check=True)
    report = json.loads(result.stdout)
    assert report["prompt_ids"] == case["prompt_ids"] and report["ids"] == case["greedy_ids"][:6]
    assert report["text"] == "".join(format(token, "x") for token in case["greedy_ids"][:6])


def test_info_describes_experts_as_the_file_declares_them():
    """A mixture of experts' shape in `lumen info`, against the file's keys as the gguf package reads them."""
    import gguf
    for name in ["qwen3moe", "llama-moe"]:
        path, _ = architecture_model(name)
        fields = gguf.GGUFReader(path).fields
        architecture = fields["general.architecture"].contents()
        count, used = fields[f"{architecture}.expert_count"].contents(), fields[f"{architecture}.expert_used_count"].contents()
        # llama's experts are as wide as its feed-forward; qwen3moe's have a width of their own.
        width_key = "feed_forward_length" if architecture == "llama" else "expert_feed_forward_length"
        width = fields[f"{architecture}.{width_key}"].contents()
        info = subprocess.run([lumen_bin(), "info", path], capture_output=True, text=True, check=True).stdout
        assert re.search(rf"^feed-forward +{count} experts of {width}, {used} per token$", info, re.MULTILINE), info
    # LFM2-MoE's leading dense layers before its experts.
    path, _ = architecture_model("lfm2moe")
    fields = gguf.GGUFReader(path).fields
    dense, width = fields["lfm2moe.leading_dense_block_count"].contents(), fields["lfm2moe.feed_forward_length"].contents()
    experts = (f"{fields['lfm2moe.expert_count'].contents()} experts of {fields['lfm2moe.expert_feed_forward_length'].contents()}, "
               f"{fields['lfm2moe.expert_used_count'].contents()} per token")
    assert dense == 1
    info = subprocess.run([lumen_bin(), "info", path], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^feed-forward +{width} in layer 0, then {experts}$", info, re.MULTILINE), info


def test_info_describes_gemma4_as_the_file_declares_it():
    """Gemma 4's layers of two head widths, key/value heads and feed-forward widths per layer,
    per-layer embeddings, shared keys and values, softcapping and experts beside the dense
    feed-forward in `lumen info`, against the synthetic models' keys as read from the header
    (`gguf_header`; the gguf package's reader takes half a minute over Gemma 4's vocabulary)."""
    from gguf_header import read_header
    folder = os.environ.get("LUMEN_SYNTHETIC_MODELS", ".build/synthetic-models")
    for name in ["gemma4", "gemma4moe"]:
        path = os.path.join(folder, f"{name}.gguf")
        metadata = read_header(path)[0]
        value = lambda key: metadata[f"gemma4.{key}"]
        info = subprocess.run([lumen_bin(), "info", path], capture_output=True, text=True, check=True).stdout
        kv = "/".join(map(str, value("attention.head_count_kv")))
        assert re.search(rf"^heads +{value('attention.head_count')} query, {kv} key/value, {value('attention.key_length')} wide "
                         rf"\(sliding layers' {value('attention.key_length_swa')}\)$", info, re.MULTILINE), info
        assert re.search(rf"^logit softcapping +{value('final_logit_softcapping')}$", info, re.MULTILINE), info
        assert re.search(rf"sliding layers: base {value('rope.freq_base_swa')}, {value('rope.dimension_count_swa')} dimensions", info), info
        sliding = value("attention.sliding_window_pattern")
        assert re.search(rf"^sliding window +{value('attention.sliding_window')} positions in {sum(sliding)} of {len(sliding)} layers$",
                         info, re.MULTILINE), info
        shared, layers = value("attention.shared_kv_layers"), value("block_count")
        if name == "gemma4":
            widths = value("feed_forward_length")
            assert re.search(rf"^feed-forward +{'/'.join(map(str, widths))}$", info, re.MULTILINE), info
            assert re.search(rf"^per-layer embeddings +{value('embedding_length_per_layer_input')} a layer$", info, re.MULTILINE), info
            # llama.cpp's rule: the shared layers read the last sliding and the last full layer before them.
            first = layers - shared
            assert re.search(rf"^shared keys/values +layers {first}–{layers - 1} attend over layers {first - 2} and {first - 1}'$",
                             info, re.MULTILINE), info
        else:
            experts = f"{value('expert_count')} experts of {value('expert_feed_forward_length')}, {value('expert_used_count')} per token"
            assert re.search(rf"^feed-forward +{value('feed_forward_length')} beside {experts}$", info, re.MULTILINE), info
            assert shared == 0 and "shared keys/values" not in info and "per-layer embeddings" not in info


def test_info_describes_recurrent_layers_as_the_file_declares_them():
    """A hybrid model's recurrent layers in `lumen info`, against the file's keys as the gguf package reads them."""
    import gguf
    path, _ = architecture_model("qwen35")
    fields = gguf.GGUFReader(path).fields
    flags = fields["qwen35.attention.recurrent_layers"].contents()
    value_heads, key_heads = fields["qwen35.ssm.time_step_rank"].contents(), fields["qwen35.ssm.group_count"].contents()
    width = fields["qwen35.ssm.inner_size"].contents() // value_heads
    convolution = fields["qwen35.ssm.conv_kernel"].contents()
    info = subprocess.run([lumen_bin(), "info", path], capture_output=True, text=True, check=True).stdout
    expected = (f"{sum(map(bool, flags))} of {len(flags)} layers (Gated DeltaNet, {key_heads} key and {value_heads} value heads "
                f"of {width}, a convolution over {convolution} inputs)")
    assert re.search(rf"^recurrent +{re.escape(expected)}$", info, re.MULTILINE), info
    # LFM2's convolution layers are those without key/value heads.
    path, _ = architecture_model("lfm2")
    fields = gguf.GGUFReader(path).fields
    heads = fields["lfm2.attention.head_count_kv"].contents()
    info = subprocess.run([lumen_bin(), "info", path], capture_output=True, text=True, check=True).stdout
    expected = (f"{heads.count(0)} of {len(heads)} layers (short convolution, "
                f"a convolution over {fields['lfm2.shortconv.l_cache'].contents()} inputs)")
    assert re.search(rf"^recurrent +{re.escape(expected)}$", info, re.MULTILINE), info
    assert re.search(rf"^heads +{max(heads)} query, {max(heads)} key/value", info, re.MULTILINE), info


def test_info_describes_sliding_layers_and_rope_scaling_as_the_file_declares_them(tmp_path):
    """gpt-oss's alternating sliding-window layers and its YaRN RoPE in `lumen info`, against the
    file's keys as the gguf package reads them (the YaRN keys written into a copy)."""
    import gguf
    path, _ = architecture_model("gpt-oss")
    fields = gguf.GGUFReader(path).fields
    window = fields["gpt-oss.attention.sliding_window"].contents()
    pattern = fields["gpt-oss.attention.sliding_window_pattern"].contents()
    info = subprocess.run([lumen_bin(), "info", path], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^sliding window +{window} positions in {sum(map(bool, pattern))} of {len(pattern)} layers$", info, re.MULTILINE), info
    assert re.search(r"^rope +base [0-9.]+, \d+ dimensions$", info, re.MULTILINE), info
    writer = gguf.GGUFWriter(str(tmp_path / "yarn.gguf"), "gpt-oss")
    reader = gguf.GGUFReader(path)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture" or key.startswith("gpt-oss.rope.scaling.") \
                or (field.types[0] == gguf.GGUFValueType.ARRAY and len(field.data) == 0):
            continue
        writer.add_key_value(key, field.contents(), field.types[0], field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None)
    writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    writer.add_rope_scaling_factor(32.0)
    writer.add_rope_scaling_orig_ctx_len(4096)
    for tensor in reader.tensors:
        writer.add_tensor(tensor.name, np.asarray(tensor.data), raw_shape=list(reversed([int(n) for n in tensor.shape])), raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    info = subprocess.run([lumen_bin(), "info", str(tmp_path / "yarn.gguf")], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^rope +base [0-9.]+, \d+ dimensions, YaRN ×32 from 4096 positions$", info, re.MULTILINE), info


def test_generate_refuses_prompt_ids_it_cannot_use():
    path, reference = architecture_model("llama")
    ids = ",".join(map(str, reference["cases"][0]["prompt_ids"]))
    for arguments, complaint in [(["some text", "--prompt-ids", ids], "give a prompt or --prompt-ids, not both"),
                                 ([], "give a prompt, or its token ids with --prompt-ids"),
                                 (["--prompt-ids", "1,x"], "--prompt-ids must be comma-separated token ids")]:
        refused = subprocess.run([lumen_bin(), "generate", path, *arguments], capture_output=True, text=True)
        assert refused.returncode == 2 and complaint in refused.stderr, refused.stderr
    out_of_range = subprocess.run([lumen_bin(), "generate", path, "--prompt-ids", "1,500"], capture_output=True, text=True)
    assert out_of_range.returncode == 2 and "--prompt-ids: 500 is not a token id (the vocabulary has 128)" in out_of_range.stderr
