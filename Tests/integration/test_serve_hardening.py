"""`lumen serve` against hostile and malformed input (the probe of issue 61): grammars that once
crashed or stalled it, a seeded fuzzer of grammars and schemas run through one server while
`/v1/models` keeps answering, the cross-site policy a browser meets, and the smaller refusals —
each a 4xx naming the field or the limit, never a crash. Outputs are checked against independent
oracles: llama.cpp's test-gbnf-validator for grammars, `jsonschema` for schemas."""
import http.client
import json
import os
import pathlib
import random
import socket
import subprocess
import threading
import time

import jsonschema
import pytest

from conftest import lumen_bin
from servers import start_lumen_serve_of

STORIES = pathlib.Path(os.environ.get("LUMEN_TEST_DATA", pathlib.Path(__file__).resolve().parents[3] / "shared")) / "models" / "stories260K.gguf"
VALIDATOR = pathlib.Path(os.environ.get("LLAMA_SERVER", "/nonexistent/llama-server")).with_name("test-gbnf-validator")


@pytest.fixture(scope="module")
def server():
    """One `lumen serve` on the 260K-parameter story model, for every probe of this module."""
    started = start_lumen_serve_of(STORIES, "--ctx", "256", "-np", "2")
    host, port = started.url.removeprefix("http://").removesuffix("/v1").rsplit(":", 1)
    started.address = (host, int(port))
    yield started
    started.stop()
    assert started.process.returncode == 0, "".join(started.lines)[-3000:]


def request(server, method, path, body=None, headers=None, timeout=120):
    """Status, headers and body (JSON when it is) of one request on a connection of its own."""
    connection = http.client.HTTPConnection(*server.address, timeout=timeout)
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    sent = {"Content-Type": "application/json"} if data is not None else {}
    sent.update(headers or {})
    connection.request(method, path, data, sent)
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = raw
    return response.status, response.headers, parsed


def complete(server, **fields):
    return request(server, "POST", "/v1/completions", {"prompt": "Once", "max_tokens": 8, "temperature": 0, **fields})


def test_the_grammars_that_crashed_and_stalled_the_server_are_400s_naming_the_limit(server):
    deep = "root ::= " + "(" * 30000 + '"a"' + ")" * 30000
    status, _, body = complete(server, grammar=deep)
    assert status == 400 and body["error"]["param"] == "grammar", body
    assert "line 1, column 266: groups nest more than 256 deep, the most allowed" in body["error"]["message"]
    chain = "root ::= r0\n" + "".join(f"r{i} ::= r{i + 1}\n" for i in range(100000)) + 'r100000 ::= "a"\n'
    assert len(chain) > 1_700_000
    status, _, body = complete(server, grammar=chain)
    assert status == 400 and "line 20000, column 12: the grammar has more than 20000 rules, the most allowed" in body["error"]["message"], body
    status, _, body = request(server, "GET", "/v1/models")
    assert status == 200 and body["data"][0]["id"] == "stories260K"


def test_a_grammar_no_token_can_start_is_a_400_and_an_impossible_one_is_too(server):
    status, _, body = complete(server, grammar="root ::= <[99999]>")
    assert status == 400 and body["error"]["param"] == "grammar", body
    assert "no token of the model's vocabulary can start an output it allows" in body["error"]["message"]
    # Sent again, the same grammar comes from the cache, with the same answer.
    assert complete(server, grammar="root ::= <[99999]>")[2] == body


def adversarial_corpus(seed, count):
    """Seeded grammars and schemas of the shapes that stress a grammar engine."""
    rng = random.Random(seed)
    corpus = []
    for index in range(count):
        size = rng.choice([1, 10, 300, 3000, 30000])
        shape = index % 10
        if shape == 0:
            corpus.append(("grammar", "root ::= " + "(" * size + '"a"' + ")" * size))
        elif shape == 1:
            corpus.append(("grammar", "root ::= r0\n" + "".join(f'r{i} ::= r{i + 1} " "?\n' for i in range(size)) + f"r{size} ::= [a-z]\n"))
        elif shape == 2:
            corpus.append(("grammar", "root ::= " + " | ".join(f'"w{i}"' for i in range(size))))
        elif shape == 3:
            corpus.append(("grammar", "root ::= [" + "".join(f"\\U{0x1000 + 7 * i:08X}" for i in range(min(size, 5000))) + "a-z]+"))
        elif shape == 4:
            corpus.append(("grammar", "root ::= x\nx ::= " + rng.choice(['x "a"', "y x", '"b" | x']) + '\ny ::= "" | "c"'))
        elif shape == 5:
            corpus.append(("grammar", f'root ::= "a"{{{rng.randrange(3_000_000)},{rng.choice(["", str(rng.randrange(3_000_000))])}}}'))
        elif shape == 6:
            corpus.append(("grammar", f'root ::= (("a" | "b"){{0,{rng.randrange(2500)}}}){{0,{rng.randrange(2500)}}} [^x]*'))
        elif shape == 7:
            # Written as text: 600 levels are deeper than Python's JSON encoder goes.
            depth = rng.choice([2, 50, 600])
            corpus.append(("schema", '{"type": "object", "properties": {"k": ' * depth + '{"type": "integer", "minimum": 0, "maximum": 99}'
                           + '}, "required": ["k"]}' * depth))
        elif shape == 8:
            corpus.append(("schema", json.dumps({"type": "array", "items": {"type": "string", "maxLength": rng.choice([3, 2000, 5000])},
                                                 "minItems": rng.choice([0, 1, 2000, 10**7]), "maxItems": 2000})))
        else:
            text = "".join(rng.choice(['(', '"q"', "[0-9]", "|", ")", "*", "{2,5}", " ", "r", "{0,2000}"]) for _ in range(rng.randrange(1, 300)))
            corpus.append(("grammar", "root ::= " + text))
    return corpus


def gbnf_accepts(grammar, text, tmp_path):
    """llama.cpp's verdict (test-gbnf-validator) on `text` under `grammar`."""
    (tmp_path / "g.gbnf").write_text(grammar)
    (tmp_path / "t.txt").write_text(text)
    result = subprocess.run([str(VALIDATOR), str(tmp_path / "g.gbnf"), str(tmp_path / "t.txt")], capture_output=True, text=True, timeout=120)
    return "Input string is valid according to the grammar" in result.stdout


@pytest.mark.skipif(not VALIDATOR.exists(), reason="needs llama.cpp's test-gbnf-validator (make llama-server builds it)")
def test_the_server_survives_the_fuzzers_corpus_answering_models_within_a_second(server, tmp_path):
    latencies = []
    stop = threading.Event()

    def watch():
        # One keep-alive connection, as a load balancer's health check holds it.
        connection = http.client.HTTPConnection(*server.address, timeout=30)
        while not stop.is_set():
            started = time.monotonic()
            connection.request("GET", "/v1/models")
            response = connection.getresponse()
            response.read()
            latencies.append(time.monotonic() - started)
            assert response.status == 200
            stop.wait(0.05)
        connection.close()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    outcomes = {"refused": 0, "valid": 0, "cut short": 0}
    try:
        for kind, constraint in adversarial_corpus(61, 200):
            field = json.dumps(constraint) if kind == "grammar" else constraint
            status, _, body = request(server, "POST", "/v1/completions", (
                '{"prompt": "Once", "max_tokens": 8, "temperature": 1, "seed": 7, "%s": %s}' % (kind if kind == "grammar" else "json_schema", field)).encode())
            assert status in (200, 400), (status, body)
            if status == 400:
                # The field at fault is named; a body nested deeper than JSON is read is refused whole.
                named = body["error"].get("param") in ("grammar", "json_schema")
                assert named or "nested too deeply" in body["error"]["message"], (kind, constraint[:300], body)
                outcomes["refused"] += 1
                continue
            choice = body["choices"][0]
            if choice["finish_reason"] != "stop":
                outcomes["cut short"] += 1
            elif kind == "schema":
                jsonschema.validate(json.loads(choice["text"]), json.loads(constraint))
                outcomes["valid"] += 1
            else:
                assert gbnf_accepts(constraint, choice["text"], tmp_path), (constraint[:200], choice["text"])
                outcomes["valid"] += 1
    finally:
        stop.set()
        watcher.join(60)
    assert server.process.poll() is None
    assert outcomes["refused"] >= 10 and outcomes["valid"] >= 10, outcomes
    assert len(latencies) >= 20 and max(latencies) < 1.0, (len(latencies), max(latencies))
    print(f"fuzzer: {outcomes}, /v1/models answered {len(latencies)} times, at most in {max(latencies) * 1000:.0f} ms")


def test_cross_site_requests_without_a_key_are_refused_unless_allowed(server):
    own = f"http://{server.address[0]}:{server.address[1]}"
    # A web page's simple request: a text/plain body, no preflight.
    status, _, body = request(server, "POST", "/v1/completions", b'{"prompt": "x", "max_tokens": 1}', {"Content-Type": "text/plain"})
    assert status == 415 and "application/json" in body["error"]["message"], body
    status, _, body = request(server, "POST", "/v1/completions", {"prompt": "x", "max_tokens": 1}, {"Origin": "http://evil.example"})
    assert status == 403 and "--cors-origin http://evil.example" in body["error"]["message"], body
    status, _, _ = request(server, "OPTIONS", "/v1/completions", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert status == 403
    # The server's own origin is answered, with the header that lets its page read the answer.
    status, headers, body = request(server, "POST", "/v1/completions", {"prompt": "x", "max_tokens": 1}, {"Origin": own})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == own, body


def test_an_allowed_origin_gets_its_preflight_and_a_key_is_read_case_insensitively(tmp_path):
    env = dict(os.environ, LUMEN_TEST_KEY="s3cret")
    keyed = start_lumen_serve_of(STORIES, "--ctx", "256", "--api-key-env", "LUMEN_TEST_KEY", "--cors-origin", "https://app.example", env=env)
    try:
        host, port = keyed.url.removeprefix("http://").removesuffix("/v1").rsplit(":", 1)
        keyed.address = (host, int(port))
        status, headers, _ = request(keyed, "OPTIONS", "/v1/chat/completions",
                                     headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST",
                                              "Access-Control-Request-Headers": "authorization, content-type"})
        assert status == 204
        assert headers["Access-Control-Allow-Origin"] == "https://app.example"
        assert "POST" in headers["Access-Control-Allow-Methods"] and "Authorization" in headers["Access-Control-Allow-Headers"]
        for scheme in ("Bearer", "bearer", "BEARER"):
            status, headers, body = request(keyed, "GET", "/v1/models", headers={"Authorization": f"{scheme} s3cret", "Origin": "https://app.example"})
            assert status == 200 and headers["Access-Control-Allow-Origin"] == "https://app.example", (scheme, body)
        assert request(keyed, "GET", "/v1/models", headers={"Authorization": "Bearer s3cre"})[0] == 401
        assert request(keyed, "GET", "/v1/models", headers={"Authorization": "Basic s3cret"})[0] == 401
        assert not any("s3cret" in line for line in keyed.lines)
    finally:
        keyed.stop()


def test_a_public_address_without_a_key_is_warned_about():
    public = start_lumen_serve_of(STORIES, "--ctx", "256", "--host", "0.0.0.0")
    try:
        public.wait_for(r"warning: listening on 0\.0\.0\.0 without --api-key-env")
    finally:
        public.stop()


def test_numbers_out_of_range_unknown_roles_and_costly_embeddings_are_400s_naming_the_field(server):
    body = b'{"prompt": "x", "max_tokens": 2, "temperature": 1e309}'
    status, _, answer = request(server, "POST", "/v1/completions", body)
    assert status == 400 and answer["error"]["param"] == "temperature", answer
    assert answer["error"]["message"] == "field 'temperature' must be a finite number, got 1e309"
    status, _, answer = request(server, "POST", "/v1/completions", b'{"prompt": "x", "max_tokens": ')
    assert status == 400 and answer["error"]["message"].startswith("the body is not valid JSON: line 1, column"), answer
    status, _, answer = request(server, "POST", "/v1/chat/completions", {"messages": [{"role": "wizard", "content": "hi"}], "max_tokens": 2})
    assert status == 400 and answer["error"]["param"] == "messages", answer
    assert "messages[0].role must be one of assistant, developer, system, tool, user, got \"wizard\"" in answer["error"]["message"]
    # 8192 tokens at most per embeddings request, all inputs together (each within the context).
    status, _, answer = request(server, "POST", "/v1/embeddings", {"input": [[1] * 200] * 41})
    assert status == 400 and answer["error"]["param"] == "input", answer
    assert "the inputs are 8200 tokens together; one request may embed at most 8192" in answer["error"]["message"]
    assert request(server, "POST", "/v1/embeddings", {"input": [[1] * 200] * 4})[0] == 200


def test_idle_connections_at_the_limit_make_room_for_a_new_client(tmp_path):
    limited = start_lumen_serve_of(STORIES, "--ctx", "256", "--max-connections", "4")
    try:
        host, port = limited.url.removeprefix("http://").removesuffix("/v1").rsplit(":", 1)
        limited.address = (host, int(port))
        idle = [socket.create_connection(limited.address, timeout=30) for _ in range(4)]
        # Each idle socket is seen by the server before the next client comes.
        for sock in idle:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"200 OK" in sock.recv(65536)
        status, _, body = request(limited, "GET", "/v1/models")
        assert status == 200, body
        # The idle connection closed to make room was the oldest.
        idle[0].settimeout(30)
        assert idle[0].recv(1) == b""
        for sock in idle:
            sock.close()
    finally:
        limited.stop()


def test_the_same_grammars_are_errors_in_cells_and_on_the_command_line_never_crashes(tmp_path):
    deep = "root ::= " + "(" * 30000 + '"a"' + ")" * 30000
    (tmp_path / "deep.gbnf").write_text(deep)
    result = subprocess.run([lumen_bin(), "generate", str(STORIES), "x", "--grammar-file", str(tmp_path / "deep.gbnf"), "--no-log"],
                            capture_output=True, text=True, timeout=120)
    # Exit 1 with the place, where it was a SIGSEGV (exit 139).
    assert result.returncode == 1 and "deep.gbnf: grammar, line 1, column 266: groups nest more than 256 deep" in result.stderr, result.stderr
    chain = "root ::= r0\n" + "".join(f"r{i} ::= r{i + 1}\n" for i in range(100000)) + 'r100000 ::= "a"\n'
    (tmp_path / "cell.lumen").write_text(f'let m = load("{STORIES}")\nlet g = {json.dumps(chain)}\ngenerate(m, "x", grammar: g, maxTokens: 4)\n')
    result = subprocess.run([lumen_bin(), "repl", str(tmp_path / "cell.lumen"), "--no-log"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "the grammar has more than 20000 rules, the most allowed" in result.stderr, result.stderr[-2000:]
