"""Beyond one machine: `lumen serve` driven by the official `openai` client, and Lumen's
`connect` driving real OpenAI-compatible servers — llama-cpp-python's server (llama.cpp itself)
and `lumen serve` — plus loopback endpoints that fail or stall on purpose."""
import http.server
import json
import math
import os
import pathlib
import re
import subprocess
import threading
import urllib.request

import openai
import pytest

from conftest import collect_iopub, lumen_bin, run, shell_reply
from servers import CACHE, SMOLLM2, start_llama_cpp_server, start_llama_server, start_lumen_serve, start_lumen_serve_of

SHARED = pathlib.Path(os.environ.get("LUMEN_TEST_DATA", ""))
KEY = "sk-lumen-test-7c1f9e"
# Servers and kernels started by the tests read the key from their environment, as a user's would.
os.environ["LUMEN_TEST_KEY"] = KEY


@pytest.fixture(scope="module")
def served():
    """`lumen serve` on SmolLM2 with two sessions and a key."""
    server = start_lumen_serve("--instances", "2", "--ctx", "2048", "--api-key-env", "LUMEN_TEST_KEY")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llama_server():
    """llama-cpp-python's OpenAI-compatible server (llama.cpp) on SmolLM2, with logprobs."""
    server = start_llama_server()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llama_cpp_server():
    """llama.cpp's own llama-server on SmolLM2."""
    server = start_llama_cpp_server()
    yield server
    server.stop()


def post(url, body, key=None):
    request = urllib.request.Request(url, data=body if isinstance(body, bytes) else json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def reference_case():
    return json.loads((SHARED / "reference/real/smollm2.json").read_text())["cases"][0]


# `lumen serve`, driven by the official client.

def test_openai_client_completions_match_llama_cpp_reference(served):
    client = openai.OpenAI(base_url=served.url, api_key=KEY)
    assert [model.id for model in client.models.list()] == ["SmolLM2-135M-Instruct.Q4_1"]
    case = reference_case()
    whole = client.completions.create(model="SmolLM2-135M-Instruct.Q4_1", prompt=case["prompt"], max_tokens=2, temperature=0, logprobs=3)
    # llama.cpp's greedy continuation starts " Paris." with wide margins (2.4 and 1.1 nats).
    assert whole.choices[0].text == " Paris."
    assert whole.usage.prompt_tokens == len(case["prompt_ids"]) and whole.usage.completion_tokens == 2
    assert whole.choices[0].logprobs.tokens == [" Paris", "."]
    first = whole.choices[0].logprobs.top_logprobs[0]
    assert max(first, key=first.get) == " Paris" and len(first) == 3
    assert abs(2.718281828 ** first[" Paris"] - case["top1_prob"][0]) < 0.05
    streamed = client.completions.create(model="SmolLM2-135M-Instruct.Q4_1", prompt=case["prompt"], max_tokens=12, temperature=0, stream=True)
    pieces, reasons = [], []
    for chunk in streamed:
        pieces.append(chunk.choices[0].text)
        reasons.append(chunk.choices[0].finish_reason)
    whole = client.completions.create(prompt=case["prompt"], model="SmolLM2-135M-Instruct.Q4_1", max_tokens=12, temperature=0)
    assert "".join(pieces) == whole.choices[0].text and len(pieces) >= 10
    assert reasons[-1] == "length" and whole.choices[0].finish_reason == "length"
    # A stop string ends the text before it, as OpenAI's API does.
    stopped = client.completions.create(model="SmolLM2-135M-Instruct.Q4_1", prompt=case["prompt"], max_tokens=12, temperature=0, stop=["."])
    assert stopped.choices[0].text == " Paris" and stopped.choices[0].finish_reason == "stop"


def test_openai_client_chat_streams_with_logprobs_and_usage(served):
    client = openai.OpenAI(base_url=served.url, api_key=KEY)
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a colour."}]
    whole = client.chat.completions.create(model="SmolLM2-135M-Instruct.Q4_1", messages=messages, max_tokens=8, temperature=0,
                                           logprobs=True, top_logprobs=2)
    text = whole.choices[0].message.content
    assert whole.choices[0].message.role == "assistant" and text
    entries = whole.choices[0].logprobs.content
    assert "".join(entry.token for entry in entries) == text
    assert all(len(entry.top_logprobs) == 2 and entry.top_logprobs[0].logprob >= entry.logprob - 1e-6 for entry in entries)
    stream = client.chat.completions.create(model="SmolLM2-135M-Instruct.Q4_1", messages=messages, max_tokens=8, temperature=0, stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_serve_says_which_chat_format_a_model_without_a_template_gets_and_renders_it(tmp_path):
    gemma = CACHE / "gemma-3-270m-q4_k_m.gguf"
    reference = json.loads((pathlib.Path(__file__).resolve().parent.parent / "reference" / "builtin-chat-templates.json").read_text())["gemma"]
    server = start_lumen_serve_of(gemma)
    try:
        server.wait_for(r"using the built-in gemma format for its architecture")
        status, reply = post(server.url + "/chat/completions", {"model": "gemma-3-270m-q4_k_m", "messages": reference["messages"],
                                                                 "max_tokens": 4, "temperature": 0})
        assert status == 200, reply
        # The prompt llama.cpp renders with its gemma format has this many tokens, BOS included.
        assert reply["usage"]["prompt_tokens"] == len(reference["prompt_ids"])
        assert "<|im_end|>" not in reply["choices"][0]["message"]["content"]
    finally:
        server.stop()


def test_key_bad_json_unknown_fields_and_unknown_models_are_refused(served):
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=served.url, api_key="wrong").models.list()
    status, body = post(served.url + "/completions", {"prompt": "x"})
    assert status == 401 and body["error"]["type"] == "authentication_error"
    status, body = post(served.url + "/completions", b"{not json", key=KEY)
    assert status == 400 and body["error"]["message"] == "the body is not valid JSON: line 1, column 2: expected a member name in quotes"
    status, body = post(served.url + "/completions", b"[1, 2]", key=KEY)
    assert status == 400 and body["error"]["message"] == "the body is not a JSON object"
    status, body = post(served.url + "/completions", {"prompt": "x", "tempreature": 0}, key=KEY)
    assert status == 400 and body["error"]["param"] == "tempreature"
    status, body = post(served.url + "/completions", {"prompt": "x", "top_p": 2}, key=KEY)
    assert status == 400 and body["error"]["message"] == "top_p must be in 0…1, got 2.0"
    status, body = post(served.url + "/chat/completions", {"messages": [], "model": "gpt-4"}, key=KEY)
    assert status == 404 and body["error"]["code"] == "model_not_found"
    status, body = post(served.url + "/completions", {"prompt": "x " * 5000, "max_tokens": 1}, key=KEY)
    assert status == 400 and "context holds" in body["error"]["message"]
    status, body = post(served.url + "/completions", {"prompt": "x" * (5 << 20)}, key=KEY)
    assert status == 413 and "larger than" in body["error"]["message"]
    # The server is still there.
    assert openai.OpenAI(base_url=served.url, api_key=KEY).completions.create(model="SmolLM2-135M-Instruct.Q4_1", prompt="a", max_tokens=1)


def test_client_disconnect_stops_the_generation(served):
    client = openai.OpenAI(base_url=served.url, api_key=KEY)
    start = len(served.lines)
    stream = client.completions.create(model="SmolLM2-135M-Instruct.Q4_1", prompt="Once upon a time", max_tokens=100000, stream=True)
    for index, _ in enumerate(stream):
        if index == 3:
            break
    stream.close()
    stopped = served.wait_for(r"disconnected after (\d+) tokens", timeout=60, start=start)
    assert int(stopped.group(1)) < 1000


# `connect`, driving real servers.

def lumen_script(code, **env):
    return subprocess.run([lumen_bin(), "repl"], input=code, capture_output=True, text=True, timeout=300, env=dict(os.environ, **env))


def test_connect_streams_from_llama_cpp_server_as_it_answers_directly(llama_server):
    case = reference_case()
    status, direct = post(llama_server.url + "/completions", {"prompt": case["prompt"], "max_tokens": 12, "temperature": 0})
    assert status == 200
    result = lumen_script(f'''let r = connect("{llama_server.url}", logprobs: true)
let g = generate(r, {json.dumps(case["prompt"])}, maxTokens: 12, temperature: 0)
print(g.text)
print(g.tokens.count, g.finishReason, g.stats["promptTokens"])
print(g.tokens[0]["piece"], g.tokens[0]["logprob"] < 0)
let c = conversation(r, system: "You are terse.")
let reply = say(c, "Name a colour.", maxTokens: 6, temperature: 0)
print(c.messages.count, c.messages[2]["role"])
''')
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # llama_cpp.server sends no usage in streams, so the prompt's size is not known (0).
    assert direct["choices"][0]["text"] + "\n12 length 0\n" in result.stdout
    assert " Paris true" in lines and "3 assistant" in lines


@pytest.mark.parametrize("name", ["llama_cpp_server", "llama_server"])
def test_next_tokens_read_the_log_probabilities_each_server_sends(name, request):
    # llama-server sends a completion's log-probabilities in the chat shape (`content` with
    # `top_logprobs`), llama-cpp-python's server in the legacy one (`tokens`, `top_logprobs`):
    # nextTokens reads both and reports what the server itself answers.
    server = request.getfixturevalue(name)
    prompt = "The capital of France is"
    status, direct = post(server.url + "/completions", {"prompt": prompt, "max_tokens": 1, "logprobs": 3, "temperature": 0})
    assert status == 200
    logprobs = direct["choices"][0]["logprobs"]
    if "content" in logprobs:
        expected = [(entry["token"], entry["logprob"]) for entry in logprobs["content"][0]["top_logprobs"]]
    else:
        expected = sorted(logprobs["top_logprobs"][0].items(), key=lambda pair: -pair[1])
    result = lumen_script(f'''let r = connect("{server.url}", logprobs: true)
print(nextTokens(r, {json.dumps(prompt)}, k: 3))
let g = generate(r, {json.dumps(prompt)}, maxTokens: 4, temperature: 0)
print(g.tokens.count, g.tokens[0]["logprob"] < 0)
''')
    assert result.returncode == 0, result.stderr
    # The table: id (unknown for a server), the piece quoted, its probability, a bar.
    rows = re.findall(r'("(?:[^"\\]|\\.)*")\s+(\d\.\d{4})', result.stdout)
    assert [(json.loads(piece), probability) for piece, probability in rows] == [(piece, f"{math.exp(logprob):.4f}") for piece, logprob in expected], result.stdout
    assert result.stdout.splitlines()[-1] == "4 true"


def test_batch_spreads_over_a_pool_and_compare_mixes_local_and_remote(served):
    second = start_lumen_serve()
    try:
        result = lumen_script(f'''let r = connect(["{served.url}", "{second.url}"], apiKey: env("LUMEN_TEST_KEY"), concurrency: 1)
let gs = batch(r, ["a", "b", "c", "d"], maxTokens: 3, temperature: 0)
print(gs.count)
let m = load("{SMOLLM2}")
let both = compare([m, r], "The capital of France is", temperature: [0], maxTokens: 2)
print(both[0].text == both[1].text, both[1].text)
let job = spawn {{ generate(r, "The capital of France is", maxTokens: 2, temperature: 0) }}
print("job:", job.result.text)
print(r.info["endpoints"].count, env("LUMEN_TEST_KEY"))
''', LUMEN_TEST_KEY=KEY)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert "4" in lines and "true  Paris." in lines and "job:  Paris." in lines and "2 Secret(LUMEN_TEST_KEY: ••••)" in lines
        assert KEY not in result.stdout + result.stderr
        # Each endpoint took part of the batch.
        assert any("generated" in line for line in second.lines)
    finally:
        second.stop()


def test_interrupt_closes_the_remote_stream_and_keeps_the_partial_text(kernel, served):
    manager, client = kernel
    run(client, f'let r = connect("{served.url}", apiKey: env("LUMEN_TEST_KEY"))')
    start = len(served.lines)
    msg_id = client.execute('generate(r, "Once upon a time", maxTokens: 100000, seed: 3)')
    while True:
        message = client.get_iopub_msg(timeout=60)
        if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "stream":
            break
    manager.interrupt_kernel()
    reply = shell_reply(client, msg_id, timeout=20)
    assert reply["content"]["ename"] == "Interrupted"
    rest = collect_iopub(client, msg_id)
    footer = [m for m in rest if m["msg_type"] == "display_data"][-1]["content"]["data"]["text/plain"]
    assert footer.endswith("· interrupted]")
    assert (message["content"]["text"] + "".join(m["content"]["text"] for m in rest if m["msg_type"] == "stream")).strip()
    served.wait_for(r"disconnected after \d+ tokens", timeout=60, start=start)
    after, messages = run(client, 'generate(r, "Lily", maxTokens: 2, temperature: 0).tokens.count')
    assert after["content"]["status"] == "ok"


# Endpoints that misbehave on purpose.

class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers /v1/models; /v1/completions as `self.server.plan` says, one step per request."""

    def log_message(self, *arguments):
        pass

    def do_GET(self):
        self.reply(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        step = self.server.plan.pop(0) if self.server.plan else "ok"
        self.server.seen.append(step)
        if step == "busy":
            self.reply(503, {"error": {"message": "overloaded, try later", "type": "server_error"}}, {"Retry-After": "0"})
        elif step == "bad-request":
            self.reply(400, {"error": {"message": "max_tokens is too large: 99999999", "type": "invalid_request_error"}})
        elif step == "stall":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b'data: {"id":"x","object":"text_completion","created":0,"model":"scripted","choices":[{"index":0,"text":"Hi","finish_reason":null}]}\n\n')
            self.wfile.flush()
            self.server.release.wait(30)
        elif step == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b'data: {"id":"x","object":"text_completion","created":0,"model":"scripted","choices":[{"index":0,"text":"Hi","finish_reason":null}]}\n\ndata: {"id"')
        elif step == "plain":
            self.reply(200, {"id": "x", "object": "text_completion", "created": 0, "model": "scripted",
                             "choices": [{"index": 0, "text": " Paris", "finish_reason": "length"}]})
        elif step == "garbage":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b'data: {"choices": 7}\n\n')
        else:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b'data: {"id":"x","object":"text_completion","created":0,"model":"scripted","choices":[{"index":0,"text":"ok","finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')

    def reply(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def scripted():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    server.plan, server.seen, server.release = [], [], threading.Event()
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield server
    server.release.set()
    server.shutdown()


def test_busy_answers_are_retried_and_errors_are_the_servers_words(scripted):
    scripted.plan = ["busy", "busy", "ok", "busy", "busy", "busy", "bad-request"]
    result = lumen_script(f'''let r = connect("{scripted.url}", retries: 2)
print(generate(r, "x").text)
generate(r, "x")
''')
    assert "ok" in result.stdout.splitlines()
    assert "HTTP 503: overloaded, try later (after 3 attempts)" in result.stderr
    assert scripted.seen == ["busy", "busy", "ok", "busy", "busy", "busy"]
    scripted.plan = ["bad-request"]
    result = lumen_script(f'generate(connect("{scripted.url}"), "x")\n')
    assert "HTTP 400: max_tokens is too large: 99999999" in result.stderr


def test_stalled_truncated_and_malformed_streams_are_clear_errors(scripted):
    expected = {
        "stall": "no data for 1 s (read timeout)",
        "truncated": "the stream ended before the generation finished (1 tokens received)",
        "garbage": "malformed event in the stream",
    }
    for step, message in expected.items():  # each in a script of its own: an error ends a script
        scripted.plan = [step]
        # Only the stall should meet the read timeout, even on a busy machine.
        timeout = 1 if step == "stall" else 60
        result = lumen_script(f'generate(connect("{scripted.url}", timeout: {timeout}), "x")\n')
        assert result.returncode == 1 and message in result.stderr, (step, result.stderr)


def test_served_and_remote_runs_are_in_the_run_log_without_the_key(served):
    client = openai.OpenAI(base_url=served.url, api_key=KEY)
    client.chat.completions.create(model="SmolLM2-135M-Instruct.Q4_1", messages=[{"role": "user", "content": "Log me."}], max_tokens=3, temperature=0)
    start = len(served.lines)
    result = lumen_script(f'''let r = connect("{served.url}", apiKey: env("LUMEN_TEST_KEY"))
generate(r, "Remote and logged", maxTokens: 2, temperature: 0)
''')
    assert result.returncode == 0, result.stderr
    served.wait_for(r", 2 generated", timeout=60, start=start)
    exported = subprocess.run([lumen_bin(), "log", "export", "--jsonl"], capture_output=True, text=True, check=True).stdout
    assert KEY not in exported
    records = [json.loads(line) for line in exported.splitlines()]
    chat = [r for r in records if r["entry"] == "lumen serve" and r.get("messages") == [{"role": "user", "content": "Log me."}]]
    assert chat and chat[-1]["model"]["name"] == "SmolLM2-135M-Instruct.Q4_1" and chat[-1]["generatedTokens"] == 3
    remote = [r for r in records if r["entry"] == "generate" and r["prompt"] == "Remote and logged"]
    assert remote and remote[-1]["model"]["path"] == served.url and remote[-1]["model"]["architecture"] == "remote"
    assert any(r["entry"] == "lumen serve" and r["interrupted"] for r in records)


def test_echo_scores_the_prompt_as_openai_does_and_perplexity_goes_through_it(served):
    client = openai.OpenAI(base_url=served.url, api_key=KEY)
    text = "Lily and Max walked to the beach to look for shells."
    answer = client.completions.create(model="SmolLM2-135M-Instruct.Q4_1", prompt=text, max_tokens=1, temperature=0, logprobs=0, echo=True)
    logprobs = answer.choices[0].logprobs
    # OpenAI's echo: the prompt's tokens first (the first without a log-probability), then the generated one.
    assert len(logprobs.tokens) == answer.usage.prompt_tokens + 1 and answer.choices[0].text.startswith(text)
    assert logprobs.token_logprobs[0] is None and all(lp < 0 for lp in logprobs.token_logprobs[1:])
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model="SmolLM2-135M-Instruct.Q4_1", prompt=text, max_tokens=1, echo=True, stream=True)
    result = lumen_script(f'''let r = connect("{served.url}", apiKey: env("LUMEN_TEST_KEY"))
let m = load("{SMOLLM2}")
let remote = perplexity(r, {json.dumps(text)})
let local = perplexity(m, {json.dumps(text)})
print(remote.tokens == local.tokens, abs(remote.value - local.value) < 1e-9 * local.value)
''')
    assert result.returncode == 0, result.stderr
    assert "true true" in result.stdout.splitlines()


def test_a_server_without_logprobs_or_not_there_is_a_clear_error(scripted):
    scripted.plan = ["plain"]
    result = lumen_script(f'nextTokens(connect("{scripted.url}"), "The capital of France is")\n')
    assert "the server sent no log-probabilities" in result.stderr
    result = lumen_script('connect("http://127.0.0.1:9/v1")\n')
    assert "http://127.0.0.1:9/v1: connection failed: Connection refused" in result.stderr


def test_what_a_served_model_cannot_do_is_refused_saying_why(served):
    result = lumen_script(f'''let r = connect("{served.url}", apiKey: env("LUMEN_TEST_KEY"))
let m = load("{SMOLLM2}")
let v = steeringVector(m, positive: ["I love this"], negative: ["I hate this"])
generate(r, "Hello", maxTokens: 2, steer: v)
''', LUMEN_TEST_KEY=KEY)
    assert result.returncode == 1
    assert "steer: a served model does not expose its activations: steer it by the name of a control vector its server loaded" in result.stderr, result.stderr
    assert "or steer a model loaded with load(); got ControlVector" in result.stderr, result.stderr
    refused = lumen_script(f'''let r = connect("{served.url}", apiKey: env("LUMEN_TEST_KEY"))
steeringVector(r, positive: ["a"], negative: ["b"])
''', LUMEN_TEST_KEY=KEY)
    assert "steeringVector(): needs the model's weights, and a served model shares neither them nor its activations: use a model loaded with load()" \
        in refused.stderr, refused.stderr
    windows = lumen_script(f'''let r = connect("{served.url}", apiKey: env("LUMEN_TEST_KEY"))
perplexity(r, "Lily and Max walked to the beach.", context: 8)
''', LUMEN_TEST_KEY=KEY)
    assert "context: a served model scores a text whole, in one request" in windows.stderr, windows.stderr
    short = lumen_script(f'''let r = connect("{served.url}", apiKey: env("LUMEN_TEST_KEY"))
perplexity(r, "a", plot: true)
''', LUMEN_TEST_KEY=KEY)
    assert short.returncode == 1 and "text: needs at least two tokens to score one" in short.stderr, short.stderr
