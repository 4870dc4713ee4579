"""LoRA adapters against llama.cpp's own llama-server given the same adapters: `lumen serve`'s
adapters (`--lora`, `GET`/`POST /lora-adapters`, a request's `lora` field) and `lumen generate
--lora-scaled` give llama-server's greedy tokens, parting only at a near tie of llama.cpp's own;
requests with different adapters decode together, each getting what it gets alone; adapters that
do not fit are refused, naming the file."""
import json
import os
import pathlib
import subprocess
import urllib.request

import gguf
import numpy as np

from conftest import lumen_bin
from gguf_header import read_tensor_layout
from servers import SMOLLM2, start_llama_cpp_server
from test_grammar import NEAR_TIE
from test_serve_batching import decoded_together, texts
from test_serve_faults import post, serve

ADAPTERS = pathlib.Path(os.environ.get("LUMEN_ADAPTERS", ".build/adapters"))
PROMPT = "Once upon a time, there was a little robot who"
LENGTH = 24
# Loaded at scale 0 by both servers, in this order: a request's `lora` field names them by id.
# llama-server's --lora-init-without-apply leaves the scales of requests without the field at 1
# (it only skips applying them to the first context), so llama-server gets scales of 0; Lumen's
# starts the scales at 0, as the flag's help says.
FILES = [ADAPTERS / "smollm2-r16.gguf", ADAPTERS / "smollm2-r8.gguf", ADAPTERS / "smollm2-r16-f16.gguf"]
LLAMA_LOADED = ["--lora-scaled", ",".join(f"{file}:0" for file in FILES)]
LUMEN_LOADED = [argument for file in FILES for argument in ("--lora", str(file))] + ["--lora-init-without-apply"]
# name: a request's `lora` field.
CASES = {
    "one adapter": [{"id": 0, "scale": 1.0}],
    "two scaled, one negative": [{"id": 0, "scale": 0.7}, {"id": 1, "scale": -0.4}],
    "an F16 adapter": [{"id": 2, "scale": 1.0}],
}


def get(server, path):
    with urllib.request.urlopen(server.url.removesuffix("/v1") + path, timeout=30) as response:
        return json.load(response)


def llama_steps(server, **fields):
    """llama-server's greedy steps after PROMPT: each token with its five likeliest."""
    status, _, answer = post(server, {"prompt": PROMPT, "temperature": 0, "n_predict": LENGTH, "n_probs": 5, **fields}, path="/completion")
    assert status == 200, answer
    return answer["completion_probabilities"]


def lumen_tokens(server, **fields):
    """`lumen serve`'s greedy tokens after PROMPT, as text pieces."""
    status, _, answer = post(server, {"prompt": PROMPT, "temperature": 0, "max_tokens": LENGTH, "logprobs": 1, **fields}, timeout=300)
    assert status == 200, answer
    return answer["choices"][0]["logprobs"]["tokens"]


def assert_llama_cpps(ours, steps, key, label):
    """`ours` (tokens as `key`: "id" or "token") are llama.cpp's greedy `steps`, up to the first
    token Lumen did not pick, which must be among llama.cpp's likeliest and nearly as likely."""
    for index, step in enumerate(steps):
        if ours[index] != step[key]:
            rivals = [entry["logprob"] for entry in step["top_logprobs"] if entry[key] == ours[index]]
            assert rivals and step["logprob"] - rivals[0] < NEAR_TIE, (label, index, ours, [s[key] for s in steps])
            return
    assert ours[:len(steps)] == [step[key] for step in steps], label


def test_served_adapters_are_llama_servers(tmp_path):
    llama = start_llama_cpp_server(*LLAMA_LOADED)
    try:
        llama_listed = get(llama, "/lora-adapters")
        plain = llama_steps(llama)
        expected = {name: llama_steps(llama, lora=lora) for name, lora in CASES.items()}
        # The server's scales for requests that name none, as POST /lora-adapters sets them.
        status, _, llama_set = post(llama, CASES["two scaled, one negative"], path="/lora-adapters")
        assert status == 200, llama_set
        llama_relisted = get(llama, "/lora-adapters")
        # Without the field, llama-server would reuse a prompt cached under other adapters.
        llama_posted = llama_steps(llama, cache_prompt=False)
    finally:
        llama.stop()
    # The adapters change what llama.cpp writes, so the comparisons test them.
    assert all([s["id"] for s in steps] != [s["id"] for s in plain] for steps in expected.values())
    lumen = serve(tmp_path, *LUMEN_LOADED, "-np", "3")
    try:
        assert [{key: entry[key] for key in ("id", "path", "scale")} for entry in llama_listed] == get(lumen, "/lora-adapters")
        assert_llama_cpps(lumen_tokens(lumen), plain, "token", "no adapter applied")
        for name, lora in CASES.items():
            assert_llama_cpps(lumen_tokens(lumen, lora=lora), expected[name], "token", name)
        # Requests with different adapters at once get what each gets alone.
        bodies = [{"prompt": PROMPT, "lora": lora} for lora in CASES.values()] + [{"prompt": PROMPT}]
        alone = texts(lumen, bodies, LENGTH, together=False)
        assert texts(lumen, bodies, LENGTH, together=True) == alone
        # connect() sends a cell's lora: as the request's field.
        script = (f'let r = connect("{lumen.url}")\n'
                  f'print(json(["text": generate(r, {json.dumps(PROMPT)}, lora: [0: 0.7, 1: -0.4], temperature: 0, maxTokens: {LENGTH}).text]))\n')
        result = subprocess.run([lumen_bin(), "repl", "--no-log"], input=script, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        assert json.loads(result.stdout[result.stdout.rindex('{"'):].strip())["text"] == alone[1]
        status, _, answer = post(lumen, CASES["two scaled, one negative"], path="/lora-adapters")
        assert (status, answer) == (200, llama_set)
        assert [{key: entry[key] for key in ("id", "path", "scale")} for entry in llama_relisted] == get(lumen, "/lora-adapters")
        assert_llama_cpps(lumen_tokens(lumen), llama_posted, "token", "the server's scales")
        # An id the server has not, and a body that is no list of ids and scales, are refused naming them.
        status, _, answer = post(lumen, {"prompt": PROMPT, "max_tokens": 1, "lora": [{"id": 3, "scale": 1}]})
        assert status == 400 and answer["error"]["param"] == "lora" and "0…2" in answer["error"]["message"], answer
        status, _, answer = post(lumen, {"id": 0}, path="/lora-adapters")
        assert status == 400 and "JSON array" in answer["error"]["message"], answer
        # Streams with different adapters decode together, step by step.
        _, passes, most = decoded_together(lumen, [{"prompt": f"{n}, {n + 1}, {n + 2},", "lora": lora} for n, lora in zip((1, 5, 9), CASES.values())])
        assert most == 3, (passes, most)
    finally:
        lumen.stop()
    # The command line's flags: the same adapters at the scales POST set.
    done = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), PROMPT, "-n", str(LENGTH), "--temp", "0", "--json", "--no-log",
                           "--lora-scaled", f"{FILES[0]}:0.7,{FILES[1]}:-0.4"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert_llama_cpps(json.loads(done.stdout)["ids"], expected["two scaled, one negative"], "id", "lumen generate --lora-scaled")


def test_adapters_that_do_not_fit_are_refused_naming_the_file():
    for flags, words in [(["--lora", str(ADAPTERS / "gemma3-r16.gguf")], ["gemma3-r16.gguf", "general.architecture", "\"gemma3\""]),
                         (["--lora", "/nonexistent/adapter.gguf"], ["/nonexistent/adapter.gguf"]),
                         (["--lora-scaled", "adapter.gguf"], ["--lora-scaled", "FILE:SCALE"]),
                         (["--lora-scaled", f"{ADAPTERS / 'smollm2-r8.gguf'}:nan"], ["--lora-scaled"])]:
        done = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), PROMPT, "-n", "1", "--no-log", *flags],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode != 0 and all(word in done.stderr for word in words), (flags, done.stderr)


class Tensor:
    """A tensor of a GGUF file: its name, shape (ggml's order), type and bytes (rows of bytes)."""

    def __init__(self, name, shape, kind, data):
        self.name, self.shape, self.kind, self.data = name, shape, kind, data

    def widened(self):
        return gguf.quants.dequantize(self.data, self.kind).astype(np.float64)


def read_gguf(path):
    """The metadata and tensors of the GGUF at `path` (`gguf_header`: the gguf package's reader
    takes half a minute over a vocabulary)."""
    metadata, layout = read_tensor_layout(path)
    data = np.memmap(path, dtype=np.uint8, mode="r")
    tensors = []
    for name, shape, kind, offset in layout:
        block, size = gguf.GGML_QUANT_SIZES[kind]
        row = shape[0] // block * size
        rows = int(np.prod(shape[1:], dtype=np.int64))
        tensors.append(Tensor(name, shape, kind, data[offset:offset + rows * row].reshape(rows, row)))
    return metadata, tensors


def export(binary, model, flags, output):
    """Merges the adapters `flags` give into `model` with `binary` (`lumen export-lora` or
    llama.cpp's llama-export-lora), as `read_gguf` reads the result."""
    command = [binary, "export-lora", str(model)] if binary == lumen_bin() else [binary, "-m", str(model)]
    done = subprocess.run(command + [*flags, "-o", str(output)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return read_gguf(output)


def test_export_lora_merges_as_llama_export_lora(tmp_path):
    """`lumen export-lora` against llama.cpp's llama-export-lora given the same adapters: into F32
    weights, the same weights to a few roundings; into a quantized model, each merged weight is
    quantized back to its type (llama-export-lora writes F16), within that format's rounding of
    llama-export-lora's, and every other tensor and the metadata are the base's byte for byte."""
    llama_export = pathlib.Path(os.environ["LLAMA_SERVER"]).parent / "llama-export-lora"
    synthetic = pathlib.Path(os.environ.get("LUMEN_SYNTHETIC_MODELS", ".build/synthetic-models")) / "qwen3.gguf"
    for model, flags in [(synthetic, ["--lora-scaled", f"{ADAPTERS / 'qwen3-r8.gguf'}:0.7"]),
                         (SMOLLM2, ["--lora", str(FILES[2]), "--lora-scaled", f"{FILES[1]}:-0.5"])]:
        metadata, ours = export(lumen_bin(), model, flags, tmp_path / "lumen.gguf")
        theirs = {t.name: t for t in export(str(llama_export), model, flags, tmp_path / "llama.gguf")[1]}
        base_metadata, base = read_gguf(model)
        assert metadata == base_metadata
        merged = 0
        for tensor, original in zip(ours, base, strict=True):
            assert (tensor.name, tensor.kind, tensor.shape) == (original.name, original.kind, original.shape)
            kept = np.array_equal(tensor.data, original.data)
            assert kept == np.array_equal(theirs[tensor.name].data, original.data), tensor.name
            if kept:
                continue
            merged += 1
            x, y = tensor.widened(), theirs[tensor.name].widened()
            if tensor.kind == gguf.GGMLQuantizationType.F32:
                # llama-export-lora's sums in another order: a few roundings of the weight's largest.
                assert np.abs(x - y).max() <= 4 * np.spacing(np.float32(np.abs(y).max())), tensor.name
            else:
                # Q4_1 rounds each value of a block of 32 to within half its step, (max - min) / 15,
                # the step and the minimum each rounded to F16 (2⁻¹¹ of them, the step 15 times);
                # llama-export-lora's F16 rounds to within half its spacing.
                assert tensor.kind == gguf.GGMLQuantizationType.Q4_1, tensor.name
                blocks, error = y.reshape(-1, 32), np.abs(x - y).reshape(-1, 32)
                spread = np.maximum(np.ptp(blocks, axis=1), np.ptp(x.reshape(-1, 32), axis=1))[:, None]
                smallest = np.abs(blocks.min(1))[:, None]
                bound = spread / 30 + (spread + smallest) * 2**-11 + np.spacing(np.abs(blocks).astype(np.float16)).astype(np.float64) / 2
                assert (error <= bound).all(), (tensor.name, (error / bound).max())
        adapted = {name.removesuffix(".lora_a").removesuffix(".lora_b")
                   for adapter in flags[1::2] for name, *_ in read_tensor_layout(adapter.split(":")[0])[1]}
        assert merged == len(adapted), model
    # Without adapters, or with one for another model, nothing is written and the error says why.
    for flags, words in [([], ["--lora"]), (["--lora", str(ADAPTERS / "gemma3-r16.gguf")], ["gemma3-r16.gguf", "general.architecture"])]:
        done = subprocess.run([lumen_bin(), "export-lora", str(SMOLLM2), *flags, "-o", str(tmp_path / "refused.gguf")],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode != 0 and all(word in done.stderr for word in words) and not (tmp_path / "refused.gguf").exists(), done.stderr
