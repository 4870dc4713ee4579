"""`lumen serve` under faults, probed on loopback as llama-server's, vLLM's and ipykernel's test
suites probe their servers: clients that leave, connections that idle or trickle, too many
connections or queued requests, a shutdown with running generations, and bad input. Every wait
is bounded, and waits for the server's own log lines rather than for time to pass."""
import http.client
import json
import os
import resource
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import lumen_bin
from servers import start_lumen_serve

MODEL = "SmolLM2-135M-Instruct.Q4_1"
# Greedy SmolLM2 counts on after this for as long as it may: a generation that runs until stopped.
ENDLESS = {"prompt": "1, 2, 3, 4, 5,", "max_tokens": 100000, "temperature": 0}


def serve(tmp_path, *extra, preexec_fn=None):
    """`lumen serve` on SmolLM2 with a run log of its own and a 2048-token context."""
    env = dict(os.environ, LUMEN_LOG_PATH=str(tmp_path / "runs.sqlite"))
    server = start_lumen_serve("--ctx", "2048", *extra, env=env, preexec_fn=preexec_fn)
    server.env = env
    host, port = server.url.removeprefix("http://").removesuffix("/v1").rsplit(":", 1)
    server.address = (host, int(port))
    return server


def runs(server):
    """The server's run log, as `lumen log export --jsonl` gives it: read once the server has
    stopped, which writes every run before it exits."""
    exported = subprocess.run([lumen_bin(), "log", "export", "--jsonl"], capture_output=True, text=True, check=True, env=server.env).stdout
    return [json.loads(line) for line in exported.splitlines()]


def raw_request(server, body, path="/v1/completions"):
    """A socket that has sent a whole POST of `body` (so the server reads it) and not read the answer."""
    data = json.dumps(body).encode()
    connection = socket.create_connection(server.address, timeout=60)
    connection.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
    return connection


def post(server, body, path="/v1/completions", timeout=60):
    """Status, headers and JSON body of a POST."""
    request = urllib.request.Request(server.url.removesuffix("/v1") + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read())


class Stream:
    """A streaming generation read on a thread until the server ends it."""

    def __init__(self, server, body):
        self.connection = http.client.HTTPConnection(*server.address, timeout=120)
        self.connection.request("POST", "/v1/completions", json.dumps({**body, "stream": True}), {"Content-Type": "application/json"})
        self.socket = self.connection.sock
        self.response = self.connection.getresponse()
        self.events = []
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for line in self.response:
                if line.startswith(b"data: "):
                    self.events.append(line[6:].strip())
        except (OSError, http.client.HTTPException):
            pass
        self.ended.set()

    def close(self):
        """Leaves, as a client that goes away does: the server sees the connection closed."""
        self.socket.shutdown(socket.SHUT_RDWR)


def test_an_abandoned_whole_request_stops_within_a_token_and_is_logged_interrupted(tmp_path):
    server = serve(tmp_path, "--instances", "1", "-np", "1")
    try:
        start = len(server.lines)
        abandoned = raw_request(server, ENDLESS)
        server.wait_for(r"cmpl-\S+ session 0: started", timeout=60, start=start)
        abandoned.close()
        stopped = server.wait_for(r"disconnected after (\d+) tokens \(client gone\)", timeout=60, start=start)
        # Before the fix it ran to the end of the context (2042 tokens) with nobody to answer.
        assert int(stopped.group(1)) < 2000
        status, _, answer = post(server, {"prompt": "Hello", "max_tokens": 2})
        assert status == 200 and answer["usage"]["completion_tokens"] == 2
        server.stop()
        logged = [r for r in runs(server) if r["prompt"] == ENDLESS["prompt"]]
        assert len(logged) == 1 and logged[0]["interrupted"] and logged[0]["generatedTokens"] == int(stopped.group(1))
    finally:
        server.stop()


def test_queued_requests_whose_clients_left_never_run(tmp_path):
    server = serve(tmp_path, "--instances", "1", "-np", "1")
    try:
        start = len(server.lines)
        running = Stream(server, ENDLESS)
        server.wait_for(r"session 0: started", timeout=60, start=start)
        waiting = []
        for index in range(8):
            waiting.append(raw_request(server, {"prompt": f"Queued {index}", "max_tokens": 50}))
            server.wait_for(rf"queued for a session, {index} ahead", timeout=60, start=start)
        for connection in waiting:
            connection.close()
        server.wait_for_count(r"left the queue without running \(client gone\)", 8, timeout=60, start=start)
        running.close()
        status, _, _ = post(server, {"prompt": "Fresh", "max_tokens": 2})
        assert status == 200
        started = [line for line in server.lines[start:] if ": started," in line]
        assert len(started) == 2, started  # the stream and the fresh request, none of the eight
        server.stop()
        assert not [r for r in runs(server) if r["prompt"].startswith("Queued")]
    finally:
        server.stop()


def test_idle_slowloris_and_trickling_connections_are_closed_while_requests_are_served(tmp_path):
    server = serve(tmp_path, "--timeout-idle", "2")
    try:
        idle = [socket.create_connection(server.address, timeout=30) for _ in range(10)]
        slow = [socket.create_connection(server.address, timeout=30) for _ in range(10)]
        trickle = socket.create_connection(server.address, timeout=30)
        trickle.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        for connection in slow:
            connection.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")
        opened = time.monotonic()
        stop = threading.Event()

        def dribble():
            """Slow clients: a header line on each slowloris connection, a byte of body, every 0.3 s."""
            while not stop.wait(0.3):
                for connection, data in [(c, b"X-Slow: 1\r\n") for c in slow] + [(trickle, b" ")]:
                    try:
                        connection.sendall(data)
                    except OSError:
                        pass

        dribbler = threading.Thread(target=dribble, daemon=True)
        dribbler.start()
        # Requests keep being served meanwhile.
        assert post(server, {"prompt": "Still here", "max_tokens": 2})[0] == 200
        closed = []
        for connection in idle + slow:
            try:
                while connection.recv(1024):
                    pass
            except ConnectionResetError:
                pass
            closed.append(time.monotonic() - opened)
        assert max(closed) < 30, closed
        answer = b""
        try:
            while chunk := trickle.recv(4096):
                answer += chunk
        except ConnectionResetError:
            pass
        stop.set()
        assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 2" in answer, answer
        with urllib.request.urlopen(server.url + "/models", timeout=30) as response:
            assert response.status == 200
    finally:
        server.stop()


def test_connections_beyond_the_limit_get_503_and_the_limit_is_logged(tmp_path):
    server = serve(tmp_path, "--max-connections", "8", "--timeout-idle", "600", "--instances", "1", "-np", "1")
    try:
        start = len(server.lines)
        # Eight connections each with a request under way, one running and seven queued, so none
        # is idle (idle ones are closed to make room: test_serve_hardening.py).
        held = [raw_request(server, ENDLESS) for _ in range(8)]
        server.wait_for(r"session 0: started", timeout=60, start=start)
        server.wait_for_count(r"queued for a session", 7, timeout=60, start=start)
        status, headers, body = post(server, {"prompt": "x", "max_tokens": 1})
        assert status == 503 and headers["Retry-After"] == "1" and "8 connections open" in body["error"]["message"]
        server.wait_for(r"8 connections are open, the most allowed \(--max-connections 8\): each new one closes the one idle longest", timeout=30, start=start)
        for connection in held:
            connection.close()
        server.wait_for(r"below the limit again", timeout=30, start=start)
        assert post(server, {"prompt": "x", "max_tokens": 1})[0] == 200
    finally:
        server.stop()


def test_a_flood_of_connections_never_exhausts_the_descriptors(tmp_path):
    # 200 descriptors: 64 kept for the server, 68 connections served, the rest refused with 503.
    server = serve(tmp_path, "--timeout-idle", "600", preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200)))
    try:
        start = len(server.lines)
        flood = []
        for _ in range(400):
            try:
                connection = socket.create_connection(server.address, timeout=30)
                # A request under way on each, so the served ones are busy, not idle.
                connection.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
                flood.append(connection)
            except OSError:
                pass
        server.wait_for(r"68 connections are open, the most allowed \(half of the descriptor limit 200 after 64 reserved\)", timeout=30, start=start)
        # A new client gets a clear 503 once the 68 served ones are busy (one whose request the server
        # has not read yet is idle, and may be closed to make room: then the client is served).
        deadline = time.monotonic() + 30
        while True:
            try:
                status, headers, body = post(server, {"prompt": "x", "max_tokens": 1})
                if status == 503:
                    break
            except (ConnectionResetError, urllib.error.URLError):
                pass
            assert time.monotonic() < deadline, "no 503 while the served connections are busy"
        assert status == 503 and "68 connections open" in body["error"]["message"]
        for connection in flood:
            connection.close()
        server.wait_for(r"below the limit again", timeout=30, start=start)
        with urllib.request.urlopen(server.url + "/models", timeout=30) as response:
            assert response.status == 200
    finally:
        server.stop()


def test_a_full_queue_and_a_long_wait_get_503_with_retry_after(tmp_path):
    server = serve(tmp_path, "--instances", "1", "-np", "1", "--max-queue", "1", "--max-queue-wait", "2")
    try:
        start = len(server.lines)
        running = Stream(server, ENDLESS)
        server.wait_for(r"session 0: started", timeout=60, start=start)
        waiting = {}
        waiter = threading.Thread(target=lambda: waiting.update(answer=post(server, {"prompt": "Waits", "max_tokens": 2})))
        waiter.start()
        server.wait_for(r"queued for a session, 0 ahead", timeout=60, start=start)
        status, headers, body = post(server, {"prompt": "One too many", "max_tokens": 2})
        assert status == 503 and headers["Retry-After"] == "1" and "1 requests are already waiting" in body["error"]["message"]
        waiter.join(60)
        status, headers, body = waiting["answer"]
        assert status == 503 and headers["Retry-After"] == "1" and "no session came free within 2" in body["error"]["message"]
        running.close()
    finally:
        server.stop()


def test_sigterm_cancels_running_generations_after_the_grace_period(tmp_path):
    server = serve(tmp_path, "--instances", "2", "--shutdown-grace", "2")
    start = len(server.lines)
    streams = [Stream(server, {**ENDLESS, "prompt": f"{n}, {n + 1}, {n + 2},"}) for n in (1, 7)]
    for session in (0, 1):
        server.wait_for(rf"session {session}: started", timeout=60, start=start)
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    server.wait_for(r"shutting down: no new connections", timeout=30, start=start)
    # No new connections: the listening socket closes at once (one caught in its backlog is reset).
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(server.address, timeout=5).close()
        except (ConnectionRefusedError, ConnectionResetError):
            break
        assert time.monotonic() < deadline, "still accepting connections"
    assert server.process.wait(timeout=60) == 0
    elapsed = time.monotonic() - signalled
    assert 2 <= elapsed < 12, elapsed
    for stream in streams:
        assert stream.ended.wait(30)
    assert len([line for line in server.lines[start:] if "(the server is shutting down)" in line]) == 2
    interrupted = [r for r in runs(server) if r["entry"] == "lumen serve" and r["interrupted"]]
    assert len(interrupted) == 2 and all(r["generatedTokens"] > 0 for r in interrupted)


def test_at_shutdown_a_waiting_whole_request_gets_503_with_retry_after(tmp_path):
    server = serve(tmp_path, "--instances", "1", "-np", "1", "--shutdown-grace", "1")
    start = len(server.lines)
    answers = []
    thread = threading.Thread(target=lambda: answers.append(post(server, ENDLESS, timeout=120)), daemon=True)
    thread.start()
    server.wait_for(r"session 0: started", timeout=60, start=start)
    server.process.send_signal(signal.SIGTERM)
    thread.join(60)
    assert server.process.wait(timeout=60) == 0
    # Not a closed connection: an answer the client can act on.
    status, headers, body = answers[0]
    assert status == 503 and headers["Retry-After"] == "1", body
    assert body["error"]["message"] == "the request was cancelled: the server is shutting down"


def test_a_second_signal_ends_the_process_at_once(tmp_path):
    server = serve(tmp_path, "--instances", "1", "-np", "1", "--shutdown-grace", "600")
    start = len(server.lines)
    stream = Stream(server, ENDLESS)
    server.wait_for(r"session 0: started", timeout=60, start=start)
    server.process.send_signal(signal.SIGTERM)
    server.wait_for(r"shutting down", timeout=30, start=start)
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGINT)
    assert server.process.wait(timeout=30) == 128 + signal.SIGINT
    assert time.monotonic() - signalled < 10
    assert stream.ended.wait(30)


def test_an_empty_prompt_and_bad_numbers_are_400s_naming_the_field_with_no_server_path(tmp_path):
    server = serve(tmp_path)
    try:
        status, _, body = post(server, {"prompt": "", "max_tokens": 3})
        assert status == 400 and body["error"]["param"] == "prompt" and "empty" in body["error"]["message"]
        assert "/" not in json.dumps(body)
        for value, rule in [(3.5, "an integer"), (2 ** 63, "an integer of magnitude below 2^63")]:
            status, _, body = post(server, {"prompt": "x", "max_tokens": value})
            assert status == 400 and body["error"]["param"] == "max_tokens", body
            assert body["error"]["message"] == f"malformed request: field 'max_tokens' must be {rule}, got {value}", body
        assert post(server, {"prompt": "Logged", "max_tokens": 1})[0] == 200
        server.stop()
        assert [r["prompt"] for r in runs(server)] == ["Logged"]
    finally:
        server.stop()


@pytest.mark.parametrize("clients", [16, 64])
def test_many_concurrent_streaming_clients_are_all_served_and_logged(tmp_path, clients):
    server = serve(tmp_path, "--instances", "2")
    try:
        answers = [None] * clients

        def client(index):
            stream = Stream(server, {"prompt": f"Client {index} says", "max_tokens": 3, "temperature": 0})
            stream.ended.wait(300)
            answers[index] = (stream.response.status, stream.events[-1] if stream.events else None)

        threads = [threading.Thread(target=client, args=(index,)) for index in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        assert all(answer == (200, b"[DONE]") for answer in answers), answers
        server.stop()
        logged = [r for r in runs(server) if r["prompt"].startswith("Client ")]
        assert sorted(r["prompt"] for r in logged) == sorted(f"Client {index} says" for index in range(clients))
        assert all(not r["interrupted"] for r in logged)
    finally:
        server.stop()
