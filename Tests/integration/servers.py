"""Real OpenAI-compatible servers for the tests: `lumen serve` and llama-cpp-python's server
(llama.cpp), each a process whose stderr is read on a thread so tests can wait for its lines."""
import os
import pathlib
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request

from conftest import lumen_bin

CACHE = pathlib.Path(os.environ.get("LUMEN_MODEL_CACHE", pathlib.Path.home() / ".cache" / "lumen" / "models"))
SMOLLM2 = CACHE / "SmolLM2-135M-Instruct.Q4_1.gguf"
STARTUP = 120


class Server:
    """A server process whose stderr is collected on a thread, so tests can wait for lines."""

    def __init__(self, arguments, env=None, preexec_fn=None):
        self.process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, env=env, preexec_fn=preexec_fn)
        self.lines = []
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stderr:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()

    def wait_for(self, pattern, timeout=STARTUP, start=0):
        """The first match of `pattern` in a line from index `start` on."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for line in self.lines[start:]:
                    match = re.search(pattern, line)
                    if match:
                        return match
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    raise AssertionError(f"no line matching {pattern!r}; stderr: {''.join(self.lines)[-3000:]}")
                self.changed.wait(remaining)

    def wait_for_count(self, pattern, count, timeout=STARTUP, start=0):
        """Waits until `count` lines from index `start` on match `pattern`."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while sum(1 for line in self.lines[start:] if re.search(pattern, line)) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    raise AssertionError(f"fewer than {count} lines matching {pattern!r}; stderr: {''.join(self.lines)[-3000:]}")
                self.changed.wait(remaining)

    def stop(self):
        """Ends the process (SIGTERM, then SIGKILL after 20 s) and reads the rest of its stderr."""
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=20)


def start_lumen_serve(*extra, env=None, preexec_fn=None):
    """`lumen serve` on SmolLM2 on a free port; `.url` is its base URL, read from its stderr."""
    return start_lumen_serve_of(SMOLLM2, *extra, env=env, preexec_fn=preexec_fn)


def start_lumen_serve_of(model, *extra, env=None, preexec_fn=None):
    """`lumen serve` on `model` (from the model cache) on a free port; `.url` is its base URL."""
    if not model.exists():
        raise AssertionError(f"{model} is missing (make models fetches it)")
    server = Server([lumen_bin(), "serve", str(model), "--port", "0", "--log-level", "info", *extra], env=env, preexec_fn=preexec_fn)
    server.url = server.wait_for(r"at (http://\S+/v1)").group(1)
    return server


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_llama_cpp_server(*extra, model=SMOLLM2):
    """llama.cpp's own `llama-server` (LLAMA_SERVER names the binary; `make llama-server` builds it
    from llama-cpp-python's source package) on `model` (SmolLM2 unless told), one thread, with
    `extra` arguments, once it is healthy."""
    binary = os.environ.get("LLAMA_SERVER", "")
    if not os.path.exists(binary):
        raise AssertionError("LLAMA_SERVER must name llama.cpp's llama-server (make test builds it with make llama-server)")
    if not model.exists():
        raise AssertionError(f"{model} is missing (make models or make synthetic-models writes it)")
    port = free_port()
    server = Server([binary, "--model", str(model), "--host", "127.0.0.1", "--port", str(port), "--threads", "1", "--ctx-size", "2048", *extra])
    server.url = f"http://127.0.0.1:{port}/v1"
    server.wait_for(r"listening on http")
    return server


def start_llama_server():
    """llama-cpp-python's OpenAI-compatible server on SmolLM2 (logprobs on, one thread; concurrent requests
    queue instead of interrupting each other), once it answers."""
    if not SMOLLM2.exists():
        raise AssertionError(f"{SMOLLM2} is missing (make models fetches it)")
    port = free_port()
    server = Server([sys.executable, "-m", "llama_cpp.server", "--model", str(SMOLLM2), "--host", "127.0.0.1", "--port", str(port),
                     "--n_ctx", "2048", "--logits_all", "true", "--n_threads", "1",
                     "--interrupt_requests", "false"])
    server.url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + STARTUP
    while True:
        try:
            with urllib.request.urlopen(server.url + "/models", timeout=5):
                return server
        except OSError:
            if time.monotonic() > deadline or server.process.poll() is not None:
                server.stop()
                raise AssertionError("llama_cpp.server did not start: " + "".join(server.lines)[-3000:])
            time.sleep(0.2)
