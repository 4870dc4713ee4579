"""Interrupts, the control and heartbeat channels while busy, hostile input, shutdown and restart."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import zmq
from jupyter_client.session import Session

from conftest import TIMEOUT, collect_iopub, lumen_bin, run, shell_reply, start_kernel


def wait_until_running(client, msg_id):
    while True:
        message = client.get_iopub_msg(timeout=TIMEOUT)
        if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "execute_input":
            return


def interrupt_during_sleep(manager, client):
    msg_id = client.execute("sleep(30)")
    wait_until_running(client, msg_id)
    manager.interrupt_kernel()
    return shell_reply(client, msg_id, timeout=5)


@pytest.mark.parametrize("spec", ["lumen", "lumen-signal"])
def test_interrupt_cancels_the_running_cell(kernelspecs, spec):
    manager, client = start_kernel(spec)
    try:
        assert manager.kernel_spec.interrupt_mode == ("signal" if spec == "lumen-signal" else "message")
        run(client, 'print("before")')
        reply = interrupt_during_sleep(manager, client)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "Interrupted"
        assert manager.is_alive()
        after, messages = run(client, 'print("after")')
        assert after["content"]["status"] == "ok"
        assert [m["content"]["text"] for m in messages if m["msg_type"] == "stream"] == ["after\n"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_interrupt_with_no_cell_running_does_nothing(kernel):
    _, client = kernel
    request = client.session.msg("interrupt_request", {})
    client.control_channel.send(request)
    reply = client.control_channel.get_msg(timeout=TIMEOUT)
    assert reply["msg_type"] == "interrupt_reply" and reply["content"] == {"status": "ok"}
    reply, _ = run(client, "1")
    assert reply["content"]["status"] == "ok"


def test_control_and_heartbeat_answer_while_busy(kernel):
    manager, client = kernel
    msg_id = client.execute("sleep(3)")
    wait_until_running(client, msg_id)
    request = client.session.msg("kernel_info_request", {})
    client.control_channel.send(request)
    reply = client.control_channel.get_msg(timeout=1)
    assert reply["msg_type"] == "kernel_info_reply"
    assert reply["parent_header"]["msg_id"] == request["header"]["msg_id"]

    context = zmq.Context.instance()
    heartbeat = context.socket(zmq.REQ)
    heartbeat.linger = 0
    heartbeat.connect(f"tcp://{manager.ip}:{manager.hb_port}")
    heartbeat.send(b"ping")
    assert heartbeat.poll(1000), "no heartbeat echo while a cell runs"
    assert heartbeat.recv() == b"ping"
    heartbeat.close()
    manager.interrupt_kernel()
    assert shell_reply(client, msg_id)["content"]["ename"] == "Interrupted"


def raw_shell_socket(manager):
    socket = zmq.Context.instance().socket(zmq.DEALER)
    socket.linger = 0
    socket.connect(f"tcp://{manager.ip}:{manager.shell_port}")
    return socket


def signed_frames(session, msg_type, content, header_overrides=None):
    message = session.msg(msg_type, content)
    header = dict(message["header"], **(header_overrides or {}))
    parts = [session.pack(header), b"{}", b"{}", session.pack(content)]
    return [b"<IDS|MSG>", session.sign(parts)] + parts, message["header"]["msg_id"]


def test_hostile_messages_are_dropped_and_the_kernel_stays_alive(kernel):
    manager, client = kernel
    session = Session(key=manager.session.key)
    socket = raw_shell_socket(manager)
    frames, _ = signed_frames(session, "kernel_info_request", {})
    bad_signature = frames[:1] + [b"0" * 64] + frames[2:]
    no_signature = frames[:1] + [b""] + frames[2:]
    not_json = frames[:1] + [session.sign([b"{not json", b"{}", b"{}", b"{}"]), b"{not json", b"{}", b"{}", b"{}"]
    no_type = signed_frames(session, "kernel_info_request", {}, {"msg_type": None})[0]
    list_content = frames[:1] + [session.sign(frames[2:5] + [b"[1,2]"])] + frames[2:5] + [b"[1,2]"]
    for garbage in [bad_signature, no_signature, not_json, no_type, list_content,
                    [b"no delimiter at all"], [b"<IDS|MSG>", b"abc"], [b"\xff\xfe" * 100]]:
        socket.send_multipart(garbage)
    assert socket.poll(500) == 0, "a hostile message was answered"
    replayed, msg_id = signed_frames(session, "kernel_info_request", {})
    socket.send_multipart(replayed)
    socket.send_multipart(replayed)
    assert socket.poll(TIMEOUT * 1000)
    answer = session.deserialize(session.feed_identities(socket.recv_multipart())[1])
    assert answer["parent_header"]["msg_id"] == msg_id
    assert socket.poll(500) == 0, "a replayed message was answered"
    socket.close()
    assert manager.is_alive()
    reply, _ = run(client, 'print("still here")')
    assert reply["content"]["status"] == "ok"


def test_invalid_request_content_gets_an_error_reply(kernel):
    manager, _ = kernel
    session = Session(key=manager.session.key)
    socket = raw_shell_socket(manager)
    frames, msg_id = signed_frames(session, "execute_request", {"code": 5})
    socket.send_multipart(frames)
    assert socket.poll(TIMEOUT * 1000)
    reply = session.deserialize(session.feed_identities(socket.recv_multipart())[1])
    assert reply["msg_type"] == "execute_reply"
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "InvalidRequest"
    socket.close()


def test_unknown_message_type_is_ignored(kernel):
    manager, client = kernel
    message = client.session.msg("no_such_request", {})
    client.shell_channel.send(message)
    reply, _ = run(client, "1")
    assert reply["content"]["status"] == "ok"
    assert manager.is_alive()


@pytest.mark.parametrize("restart", [False, True])
def test_shutdown_request(kernelspecs, restart):
    manager, client = start_kernel("lumen")
    try:
        msg_id = client.shutdown(restart=restart)
        reply = client.control_channel.get_msg(timeout=TIMEOUT)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"] == {"status": "ok", "restart": restart}
        process = manager.provisioner.process
        assert process.wait(timeout=TIMEOUT) == 0
        assert not manager.is_alive()
    finally:
        client.stop_channels()
        manager.cleanup_resources()


def test_shutdown_reply_on_control_while_a_cell_runs(kernelspecs):
    manager, client = start_kernel("lumen")
    try:
        # The cell would run far longer than any wait here: the reply comes while it runs.
        running = client.execute("sleep(3600)")
        wait_until_running(client, running)
        request = client.session.msg("shutdown_request", {"restart": False})
        client.control_channel.send(request)
        reply = client.control_channel.get_msg(timeout=TIMEOUT)
        assert reply["msg_type"] == "shutdown_reply"
        assert reply["content"] == {"status": "ok", "restart": False}
        assert manager.provisioner.process.wait(timeout=TIMEOUT) == 0
    finally:
        client.stop_channels()
        manager.cleanup_resources()


def test_restart_gives_a_fresh_kernel(kernel):
    manager, client = kernel
    run(client, "1")
    manager.restart_kernel(now=False)
    client.wait_for_ready(timeout=TIMEOUT)
    reply, _ = run(client, "2")
    assert reply["content"]["status"] == "ok"
    assert reply["content"]["execution_count"] == 1


def test_bad_connection_file_is_a_clear_error(tmp_path):
    missing = subprocess.run([lumen_bin(), "kernel", "-f", str(tmp_path / "nope.json")], capture_output=True, text=True)
    assert missing.returncode != 0 and "nope.json" in missing.stderr
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"ip": "127.0.0.1", "transport": "tcp"}))
    result = subprocess.run([lumen_bin(), "kernel", "-f", str(broken)], capture_output=True, text=True)
    assert result.returncode != 0 and "shell_port" in result.stderr


def test_install_and_uninstall_are_seen_by_jupyter(tmp_path):
    env = dict(os.environ, JUPYTER_PATH=str(tmp_path / "share" / "jupyter"))
    subprocess.run([lumen_bin(), "install", "--prefix", str(tmp_path), "--name", "lumen-test", "--display-name", "Lumen Test"],
                   check=True, capture_output=True)
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / "lumen-test"
    spec = json.loads((spec_dir / "kernel.json").read_text())
    assert spec["argv"][0] == os.path.realpath(lumen_bin())
    assert spec["argv"][1:] == ["kernel", "-f", "{connection_file}"]
    assert spec["display_name"] == "Lumen Test" and spec["language"] == "lumen"
    assert spec["interrupt_mode"] == "message"
    assert (spec_dir / "logo-32x32.png").exists() and (spec_dir / "logo-64x64.png").exists()
    listed = subprocess.run([sys.executable, "-m", "jupyter", "kernelspec", "list", "--json"], env=env, capture_output=True, text=True, check=True)
    assert "lumen-test" in json.loads(listed.stdout)["kernelspecs"]
    subprocess.run([lumen_bin(), "uninstall", "--prefix", str(tmp_path), "--name", "lumen-test"], check=True, capture_output=True)
    assert not spec_dir.exists()


def test_interrupt_stops_an_endless_loop_and_control_stays_responsive(kernel):
    manager, client = kernel
    # The interrupt is sent once the cell has printed, so it cannot land before the loop's state
    # exists (execute_input only says the cell was received).
    msg_id = client.execute('var spins = 1\nprint("spinning")\nwhile true { spins += 1 }')
    while True:
        message = client.get_iopub_msg(timeout=TIMEOUT)
        if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "stream":
            break
    request = client.session.msg("kernel_info_request", {})
    client.control_channel.send(request)
    assert client.control_channel.get_msg(timeout=2)["msg_type"] == "kernel_info_reply"
    manager.interrupt_kernel()
    reply = shell_reply(client, msg_id, timeout=5)
    assert reply["content"]["ename"] == "Interrupted"
    after, _ = run(client, "spins >= 1")
    assert after["content"]["status"] == "ok"


LAUNCHER = """
import sys
import time
from jupyter_client.manager import KernelManager
manager = KernelManager(kernel_name="lumen")
manager.start_kernel()
client = manager.client()
client.start_channels()
client.wait_for_ready(timeout=20)
if sys.argv[1] == "busy":
    client.execute("sleep(300)")
print(manager.provisioner.process.pid, flush=True)
sys.stdin.read()
"""


def process_has_ended(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("state", ["idle", "busy"])
def test_the_kernel_ends_when_its_launcher_is_killed(kernelspecs, state):
    # jupyter_client names itself in JPY_PARENT_PID; killed with SIGKILL it cannot shut the kernel
    # down, so the kernel must notice by itself (ipykernel does), idle or in the middle of a cell.
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER, state], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    kernel_pid = None
    try:
        kernel_pid = int(launcher.stdout.readline())
        assert not process_has_ended(kernel_pid)
        launcher.kill()
        launcher.wait(timeout=TIMEOUT)
        deadline = time.monotonic() + TIMEOUT
        while not process_has_ended(kernel_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process_has_ended(kernel_pid), "the kernel outlived the process that launched it"
    finally:
        launcher.kill()
        if kernel_pid is not None and not process_has_ended(kernel_pid):
            os.kill(kernel_pid, signal.SIGKILL)
