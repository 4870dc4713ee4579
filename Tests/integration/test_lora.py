"""LoRA adapters on the command line (`--lora`, `--lora-scaled`, llama.cpp's flags and formats)
against llama.cpp's own llama-server given the same adapters: the same greedy tokens, parting only
at a near tie of llama.cpp's own; and adapters that do not fit refused, naming the file."""
import json
import os
import pathlib
import subprocess
import urllib.request

import pytest

from conftest import lumen_bin
from servers import SMOLLM2, start_llama_cpp_server
from test_grammar import NEAR_TIE
from test_remote import post

ADAPTERS = pathlib.Path(os.environ.get("LUMEN_ADAPTERS", ".build/adapters"))
PROMPT = "Once upon a time, there was a little robot who"
LENGTH = 24

# name: (lumen's flags, llama-server's flags) for the same adapters.
CASES = {
    "one adapter": (["--lora", str(ADAPTERS / "smollm2-r16.gguf")], ["--lora", str(ADAPTERS / "smollm2-r16.gguf")]),
    "two scaled, one negative": (["--lora-scaled", f"{ADAPTERS / 'smollm2-r16.gguf'}:0.7,{ADAPTERS / 'smollm2-r8.gguf'}:-0.4"],
                                 ["--lora-scaled", f"{ADAPTERS / 'smollm2-r16.gguf'}:0.7,{ADAPTERS / 'smollm2-r8.gguf'}:-0.4"]),
    "an F16 adapter": (["--lora", str(ADAPTERS / "smollm2-r16-f16.gguf")], ["--lora", str(ADAPTERS / "smollm2-r16-f16.gguf")]),
}


def lumen_greedy(*flags):
    """`lumen generate`'s greedy ids after PROMPT with `flags`."""
    done = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), PROMPT, "-n", str(LENGTH), "--temp", "0", "--json", "--no-log", *flags],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["ids"]


@pytest.mark.parametrize("name", CASES)
def test_greedy_tokens_with_adapters_are_llama_cpps(name):
    ours, theirs = CASES[name]
    server = start_llama_cpp_server(*theirs)
    try:
        status, llama = post(server.url.removesuffix("/v1") + "/completion",
                             {"prompt": PROMPT, "temperature": 0, "n_predict": LENGTH, "n_probs": 5})
        assert status == 200, llama
        # The same request with every adapter at scale 0 (llama-server's per-request field).
        with urllib.request.urlopen(server.url.removesuffix("/v1") + "/lora-adapters", timeout=30) as response:
            loaded = json.load(response)
        status, plain = post(server.url.removesuffix("/v1") + "/completion",
                             {"prompt": PROMPT, "temperature": 0, "n_predict": LENGTH, "lora": [{"id": a["id"], "scale": 0} for a in loaded]})
        assert status == 200, plain
    finally:
        server.stop()
    ids = lumen_greedy(*ours)
    steps = llama["completion_probabilities"]
    # The adapters change what llama.cpp writes, so the comparison tests them.
    assert llama["content"] != plain["content"]
    for index, step in enumerate(steps):
        if ids[index] != step["id"]:
            # The first token Lumen did not pick: among llama.cpp's likeliest, nearly as likely.
            rivals = [entry["logprob"] for entry in step["top_logprobs"] if entry["id"] == ids[index]]
            assert rivals and step["logprob"] - rivals[0] < NEAR_TIE, (name, index, ids, [s["id"] for s in steps])
            return
    assert ids[:len(steps)] == [step["id"] for step in steps]


def test_adapters_that_do_not_fit_are_refused_naming_the_file():
    for flags, words in [(["--lora", str(ADAPTERS / "gemma3-r16.gguf")], ["gemma3-r16.gguf", "general.architecture", "\"gemma3\""]),
                         (["--lora", "/nonexistent/adapter.gguf"], ["/nonexistent/adapter.gguf"]),
                         (["--lora-scaled", "adapter.gguf"], ["--lora-scaled", "FILE:SCALE"]),
                         (["--lora-scaled", f"{ADAPTERS / 'smollm2-r8.gguf'}:nan"], ["--lora-scaled"])]:
        done = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), PROMPT, "-n", "1", "--no-log", *flags],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode != 0 and all(word in done.stderr for word in words), (flags, done.stderr)
