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

from conftest import lumen_bin
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
