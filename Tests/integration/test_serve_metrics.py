"""`lumen serve` in a fleet: GET /metrics read by a real Prometheus (Debian's `prometheus`, started
here on a loopback port) while clients run, with PromQL through its HTTP API; /health and /ready,
and readiness that turns false at the first SIGTERM, before the drain. Every wait is bounded and
waits for an answer (Prometheus' or the server's), never for time to pass."""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from servers import Server, free_port
from test_serve_faults import ENDLESS, MODEL, Stream, post, raw_request, serve

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def get(server, path):
    """Status, content type and body text of a GET."""
    connection = http.client.HTTPConnection(*server.address, timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type"), response.read().decode()
    finally:
        connection.close()


def start_prometheus(tmp_path, target):
    """Prometheus scraping `target` (host:port) every 250 ms, once it is ready; `.query(promql)`
    gives an instant query's single value (None when it has no sample)."""
    if not os.path.exists(PROMETHEUS):
        pytest.fail("prometheus is missing: apt-get install prometheus (.ci/run installs it)")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(f"global:\n  scrape_interval: 250ms\n  scrape_timeout: 200ms\n"
                      f"scrape_configs:\n  - job_name: lumen\n    static_configs:\n      - targets: ['{target}']\n")
    server = Server([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"])
    base = f"http://127.0.0.1:{port}"

    def query(promql):
        with urllib.request.urlopen(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql}), timeout=30) as response:
            answer = json.loads(response.read())
        assert answer["status"] == "success", answer
        results = answer["data"]["result"]
        assert len(results) <= 1, results
        return float(results[0]["value"][1]) if results else None

    server.query = query
    server.wait_for(r"Server is ready to receive web requests")
    return server


def wait_until(condition, what, timeout=180):
    """Polls `condition` (which returns a value, falsy while not yet) until it holds; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.1)


def test_prometheus_reads_running_waiting_and_cache_use_as_the_load_applied(tmp_path):
    """Eight streaming clients of a server that decodes four sequences at once: Prometheus sees 4
    running and 4 waiting and part of the cache in use, then, when all have left, 0, 0 and 0; the
    counters and histograms add up to what the clients got."""
    server = serve(tmp_path, "--instances", "1", "-np", "4")
    prometheus = None
    try:
        host, port = server.address
        prometheus = start_prometheus(tmp_path, f"{host}:{port}")
        labels = f'{{model_name="{MODEL}"}}'
        wait_until(lambda: prometheus.query("up") == 1, "Prometheus scraping lumen serve")
        # Four endless generations hold the four sequences; four more wait behind them.
        start = len(server.lines)
        streams = [Stream(server, {**ENDLESS, "prompt": f"{n}, {n + 1}, {n + 2},"}) for n in (1, 5, 9, 13)]
        server.wait_for_count(r"session 0: started", 4, timeout=120, start=start)
        waiting = []
        for index in range(4):
            waiting.append(raw_request(server, {**ENDLESS, "prompt": f"Queued {index}"}))
            server.wait_for(rf"queued for a session, {index} ahead", timeout=60, start=start)
        wait_until(lambda: prometheus.query(f"vllm:num_requests_running{labels}") == 4 and prometheus.query(f"vllm:num_requests_waiting{labels}") == 4,
                   "4 running and 4 waiting")
        # Each of the four holds at least its prompt, of 2048 tokens' context each.
        held = sum(prompt_tokens(server, start)) / (4 * 2048)

        def usage_past_prompts():
            usage = prometheus.query(f"vllm:kv_cache_usage_perc{labels}")
            return usage if usage is not None and usage >= held else None

        assert wait_until(usage_past_prompts, "the four prompts' cache in use") < 1
        assert prometheus.query(f"lumen_sessions{labels}") == 1
        for connection in waiting:
            connection.close()
        server.wait_for_count(r"left the queue without running \(client gone\)", 4, timeout=60, start=start)
        for stream in streams:
            stream.close()
        server.wait_for_count(r"disconnected after \d+ tokens \(client gone\)", 4, timeout=60, start=start)
        wait_until(lambda: prometheus.query(f"vllm:num_requests_running{labels}") == 0 and prometheus.query(f"vllm:num_requests_waiting{labels}") == 0
                   and prometheus.query(f"vllm:kv_cache_usage_perc{labels}") == 0, "0 running, 0 waiting, no cache in use")
        streamed_prompts = sum(prompt_tokens(server, start))
        # One whole request more, of two choices: its tokens and timings are counted as its answer says.
        status, _, answer = post(server, {"prompt": "Hello", "max_tokens": 5, "n": 2, "temperature": 0.8, "seed": 3})
        assert status == 200 and answer["usage"]["completion_tokens"] == 10
        streamed = sum(int(n) for n in re.findall(r"disconnected after (\d+) tokens", "".join(server.lines[start:])))
        _, content_type, text = get(server, "/metrics")
        assert content_type.startswith("text/plain; version=0.0.4")
        samples = dict(re.findall(r"^(\S+) (\S+)$", text, re.MULTILINE))
        assert float(samples[f"lumen_generation_tokens_total{labels}"]) == streamed + 10
        # A request's prompt counts once, whatever its number of choices.
        assert float(samples[f"lumen_prompt_tokens_total{labels}"]) == streamed_prompts + answer["usage"]["prompt_tokens"]
        # Five requests got a first token; every later token of a choice is one inter-token interval.
        assert float(samples[f"lumen_time_to_first_token_seconds_count{labels}"]) == 5
        assert float(samples[f"lumen_inter_token_latency_seconds_count{labels}"]) == (streamed - 4) + (10 - 2)
        assert float(samples[f'lumen_requests_finished_total{{model_name="{MODEL}",finished_reason="cancelled"}}']) == 4
        assert float(samples[f'lumen_requests_finished_total{{model_name="{MODEL}",finished_reason="length"}}']) == 2
        # The four decoded together: passes of 4 sequences were counted.
        assert float(samples[f'lumen_decode_passes_total{{model_name="{MODEL}",sequences="4"}}']) > 0
        wait_until(lambda: prometheus.query(f"lumen_generation_tokens_total{labels}") == streamed + 10, "Prometheus reading the token counter")
    finally:
        if prometheus:
            prometheus.stop()
        server.stop()


def prompt_tokens(server, start):
    """Each run's prompt tokens, from the server's log lines from index `start` on."""
    return [int(n) for n in re.findall(r"session \d+: started, (\d+) prompt tokens", "".join(server.lines[start:]))]


def test_health_and_readiness_and_a_drain_that_first_turns_readiness_off(tmp_path):
    """/health and /ready answer without the key; at SIGTERM /ready turns 503 while requests are
    still answered during --drain-delay; a second signal exits at once."""
    env_key = "LUMEN_TEST_METRICS_KEY"
    os.environ[env_key] = "sk-metrics-test"
    try:
        server = serve(tmp_path, "--drain-delay", "600", "--api-key-env", env_key)
    finally:
        del os.environ[env_key]
    try:
        assert get(server, "/health")[0::2] == (200, '{"status":"ok"}')
        assert get(server, "/ready")[0::2] == (200, '{"status":"ready"}')
        assert get(server, "/metrics")[0] == 200
        # The API itself still wants the key.
        assert post(server, {"prompt": "Hi", "max_tokens": 1})[0] == 401
        server.process.send_signal(signal.SIGTERM)
        server.wait_for(r"not ready: draining in 600")
        assert get(server, "/ready")[0::2] == (503, '{"status":"draining"}')
        assert get(server, "/health")[0] == 200
        # Still taking requests during the delay.
        request = urllib.request.Request(server.url + "/completions", data=json.dumps({"prompt": "Hi", "max_tokens": 2}).encode(),
                                         headers={"Content-Type": "application/json", "Authorization": "Bearer sk-metrics-test"})
        with urllib.request.urlopen(request, timeout=60) as response:
            assert json.loads(response.read())["usage"]["completion_tokens"] == 2
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        server.stop()
