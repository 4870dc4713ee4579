"""Fixtures that run the real `lumen` binary as a Jupyter kernel through jupyter_client."""
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest
from jupyter_client.manager import KernelManager

# The Python helpers the tests share with the scripts (gguf_header) live in scripts/.
sys.path.append(str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))

TIMEOUT = 20


def lumen_bin() -> str:
    path = os.environ.get("LUMEN_BIN")
    if not path or not os.path.exists(path):
        pytest.exit("LUMEN_BIN must name the built lumen binary (make test sets it)", returncode=2)
    return path


@pytest.fixture(scope="session", autouse=True)
def run_log(tmp_path_factory):
    """Every test's runs go to a log of the test session's own, never the user's."""
    os.environ["LUMEN_LOG_PATH"] = str(tmp_path_factory.mktemp("run-log") / "runs.sqlite")
    return os.environ["LUMEN_LOG_PATH"]


@pytest.fixture(scope="session")
def kernelspecs(tmp_path_factory):
    """Installs the kernelspec with `lumen install --prefix` and a signal-mode variant of it."""
    prefix = tmp_path_factory.mktemp("jupyter-prefix")
    subprocess.run([lumen_bin(), "install", "--prefix", str(prefix)], check=True, capture_output=True)
    kernels = prefix / "share" / "jupyter" / "kernels"
    signal_spec = kernels / "lumen-signal"
    signal_spec.mkdir()
    spec = json.loads((kernels / "lumen" / "kernel.json").read_text())
    spec["interrupt_mode"] = "signal"
    spec["display_name"] = "Lumen (signal interrupts)"
    (signal_spec / "kernel.json").write_text(json.dumps(spec))
    os.environ["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    return kernels


def start_kernel(name: str, **options):
    """A kernel of the kernelspec `name`; `options` go to KernelManager.start_kernel (env, cwd)."""
    manager = KernelManager(kernel_name=name)
    manager.start_kernel(**options)
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=TIMEOUT)
    return manager, client


@pytest.fixture
def kernel(kernelspecs):
    manager, client = start_kernel("lumen")
    yield manager, client
    client.stop_channels()
    if manager.is_alive():
        manager.shutdown_kernel(now=True)


@pytest.fixture
def kc(kernel):
    return kernel[1]


def run(client, code, timeout=TIMEOUT, **options):
    """Executes `code`; returns (reply, iopub messages for it, in order, busy to idle). `timeout`
    (seconds) only catches a kernel that never answers: a cell may take longer on a loaded machine."""
    msg_id = client.execute(code, **options)
    messages = collect_iopub(client, msg_id, timeout)
    reply = shell_reply(client, msg_id, timeout)
    return reply, messages


def shell_reply(client, msg_id, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        reply = client.get_shell_msg(timeout=max(0.01, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def collect_iopub(client, msg_id, timeout=TIMEOUT):
    """The IOPub messages whose parent is `msg_id`, up to and including its idle status."""
    deadline = time.monotonic() + timeout
    messages = []
    while True:
        message = client.get_iopub_msg(timeout=max(0.01, deadline - time.monotonic()))
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(message)
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return messages


def types(messages):
    return [m["msg_type"] if m["msg_type"] != "status" else m["content"]["execution_state"] for m in messages]
