"""The probes of issue 38 against a `lumen serve` binary, each timed, on loopback:

1. a whole (non-streaming) request for 100000 tokens whose client leaves after 1 s: how long the
   next request waits;
2. 64 whole requests queued behind a running one whose clients all leave: how long a fresh
   request waits once the running one ends;
3. SIGTERM with sixteen 400-token streams running: how long until the process exits;
4. 50 slowloris connections (a header line every 0.5 s): how many are still open after 40 s.

    python scripts/probe_serve_faults.py LUMEN_BINARY MODEL.gguf

Run it against two binaries (before and after a change) for a same-run comparison.
"""
import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time

ENDLESS = {"prompt": "1, 2, 3, 4, 5,", "max_tokens": 100000, "temperature": 0}


def start(binary, model, *extra):
    process = subprocess.Popen([binary, "serve", model, "--port", "0", "--no-log", "--ctx", "4096", *extra],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        match = re.search(r"at http://([\d.]+):(\d+)/v1", line)
        if match:
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, (match.group(1), int(match.group(2)))
    raise SystemExit("the server did not start")


def send(address, body, stream=False):
    connection = http.client.HTTPConnection(*address, timeout=600)
    connection.request("POST", "/v1/completions", json.dumps({**body, "stream": stream}), {"Content-Type": "application/json"})
    return connection


def timed_request(address):
    started = time.monotonic()
    send(address, {"prompt": "Hello", "max_tokens": 2}).getresponse().read()
    return time.monotonic() - started


def stop(process):
    process.kill()
    process.wait()


def abandoned_whole(binary, model):
    process, address = start(binary, model)
    connection = send(address, ENDLESS)
    time.sleep(1)
    connection.sock.shutdown(socket.SHUT_RDWR)
    connection.close()
    waited = timed_request(address)
    stop(process)
    return f"next request after an abandoned whole request answered in {waited:.2f} s"


def abandoned_queue(binary, model):
    process, address = start(binary, model)
    running = send(address, {**ENDLESS, "max_tokens": 200}, stream=True)
    response = running.getresponse()
    queued = [send(address, {"prompt": f"Queued {index}", "max_tokens": 50}) for index in range(64)]
    time.sleep(1)
    for connection in queued:
        connection.sock.shutdown(socket.SHUT_RDWR)
        connection.close()
    response.read()
    waited = timed_request(address)
    stop(process)
    return f"fresh request after 64 abandoned queued ones answered in {waited:.2f} s"


def shutdown(binary, model):
    process, address = start(binary, model, "--instances", "16", "-t", "1")
    streams = [send(address, {**ENDLESS, "max_tokens": 400}, stream=True) for _ in range(16)]
    responses = [stream.getresponse() for stream in streams]
    for response in responses:
        response.readline()
    signalled = time.monotonic()
    process.send_signal(signal.SIGTERM)
    process.wait()
    return f"SIGTERM with sixteen 400-token streams: exited after {time.monotonic() - signalled:.2f} s"


def slowloris(binary, model):
    process, address = start(binary, model)
    connections = [socket.create_connection(address) for _ in range(50)]
    for connection in connections:
        connection.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        for connection in connections:
            try:
                connection.sendall(b"X-Slow: 1\r\n")
            except OSError:
                pass
        time.sleep(0.5)
    open_connections = 0
    for connection in connections:
        connection.setblocking(False)
        try:
            if connection.recv(1) != b"":
                open_connections += 1
        except BlockingIOError:
            open_connections += 1
        except OSError:
            pass
    stop(process)
    return f"slowloris: {open_connections} of 50 connections still open after 40 s"


if __name__ == "__main__":
    binary, model = sys.argv[1], sys.argv[2]
    for probe in (abandoned_whole, abandoned_queue, shutdown, slowloris):
        print(probe(binary, model), flush=True)
