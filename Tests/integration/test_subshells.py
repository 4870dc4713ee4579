"""Subshells (JEP 91) against ipykernel 7, the reference: each scenario runs on both kernels and
their answers are compared. A cell waiting for input() keeps a shell busy without any timing."""
import pytest

from conftest import TIMEOUT, collect_iopub, shell_reply, start_kernel, types

# The code each kernel runs for the same step.
CODE = {
    "lumen": {"wait": 'input("go? ")', "sum": "1 + 1", "wait_then_fail": 'input("fail? ")\nundefined_name'},
    "python3": {"wait": 'input("go? ")', "sum": "1 + 1", "wait_then_fail": 'input("fail? ")\nundefined_name'},
}


@pytest.fixture(params=["lumen", "python3"])
def any_kernel(request, kernelspecs):
    manager, client = start_kernel(request.param)
    yield request.param, client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def control(client, msg_type, content=None):
    msg = client.session.msg(msg_type, content or {})
    client.control_channel.send(msg)
    while True:
        reply = client.get_control_msg(timeout=TIMEOUT)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return reply["content"]


def send_shell(client, msg_type, content, subshell=None):
    msg = client.session.msg(msg_type, content)
    if subshell is not None:
        msg["header"]["subshell_id"] = subshell
    client.shell_channel.send(msg)
    return msg["header"]["msg_id"]


def execute(client, code, subshell=None, **options):
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": True, "stop_on_error": True}
    content.update(options)
    return send_shell(client, "execute_request", content, subshell)


def replies(client, msg_ids):
    """The shell replies to `msg_ids`, whatever order they come in."""
    wanted, found = set(msg_ids), {}
    while wanted - found.keys():
        reply = client.get_shell_msg(timeout=TIMEOUT)
        if reply["parent_header"].get("msg_id") in wanted:
            found[reply["parent_header"]["msg_id"]] = reply
    return [found[msg_id] for msg_id in msg_ids]


def test_subshells_are_advertised_created_listed_and_deleted_as_ipykernel_does(any_kernel):
    name, client = any_kernel
    info = shell_reply(client, client.kernel_info())["content"]
    assert "kernel subshells" in info["supported_features"]
    created = [control(client, "create_subshell_request") for _ in range(2)]
    assert all(reply["status"] == "ok" for reply in created)
    ids = [reply["subshell_id"] for reply in created]
    assert len(set(ids)) == 2
    assert control(client, "list_subshell_request") == {"status": "ok", "subshell_id": ids}
    assert control(client, "delete_subshell_request", {"subshell_id": ids[0]}) == {"status": "ok"}
    assert control(client, "delete_subshell_request", {"subshell_id": ids[0]}) == {
        "status": "error", "evalue": f"Unknown subshell_id '{ids[0]}'"}
    assert control(client, "list_subshell_request") == {"status": "ok", "subshell_id": ids[1:]}


def test_a_request_for_an_unknown_subshell_is_refused_as_ipykernel_does(any_kernel):
    name, client = any_kernel
    msg_id = execute(client, CODE[name]["sum"], subshell="nope")
    reply = shell_reply(client, msg_id)
    assert reply["msg_type"] == "execute_reply"
    assert reply["content"] == {"status": "error", "ename": "UnknownSubshellError", "evalue": "Unknown subshell_id 'nope'", "traceback": []}
    assert types(collect_iopub(client, msg_id)) == ["busy", "idle"]
    comm = send_shell(client, "comm_msg", {"comm_id": "x", "data": {}}, subshell="nope")
    assert types(collect_iopub(client, comm)) == ["busy", "idle"]


def test_a_subshell_runs_cells_while_the_main_shell_is_busy(any_kernel):
    name, client = any_kernel
    subshell = control(client, "create_subshell_request")["subshell_id"]
    main = execute(client, CODE[name]["wait"])
    assert client.get_stdin_msg(timeout=TIMEOUT)["content"]["prompt"] == "go? "
    beside = execute(client, CODE[name]["sum"], subshell=subshell)
    reply = shell_reply(client, beside)
    assert reply["content"]["status"] == "ok"
    results = [m["content"]["data"]["text/plain"] for m in collect_iopub(client, beside) if m["msg_type"] == "execute_result"]
    assert results == ["2"]
    assert reply["parent_header"]["subshell_id"] == subshell
    client.input("now")
    assert shell_reply(client, main)["content"]["status"] == "ok"


def test_a_failure_on_a_subshell_aborts_its_queue_only(any_kernel):
    name, client = any_kernel
    subshell = control(client, "create_subshell_request")["subshell_id"]
    # The subshell's cell waits for input, so what follows is queued behind it before it fails.
    failing = execute(client, CODE[name]["wait_then_fail"], subshell=subshell)
    assert client.get_stdin_msg(timeout=TIMEOUT)["content"]["prompt"] == "fail? "
    queued = execute(client, CODE[name]["sum"], subshell=subshell)
    main = execute(client, CODE[name]["sum"])
    assert shell_reply(client, main)["content"]["status"] == "ok"
    client.input("now")
    assert [r["content"]["status"] for r in replies(client, [failing, queued])] == ["error", "aborted"]
    assert types(collect_iopub(client, queued)) == ["busy", "idle"]
    after = execute(client, CODE[name]["sum"], subshell=subshell)
    assert shell_reply(client, after)["content"]["status"] == "ok"


def test_an_interrupt_reaches_only_the_main_shell_and_deleting_a_subshell_ends_its_cell(kernel):
    _, client = kernel
    subshell = control(client, "create_subshell_request")["subshell_id"]
    waiting = execute(client, "sleep(3600)", subshell=subshell)
    assert "busy" in types(collect_until(client, waiting, "execute_input"))
    assert control(client, "interrupt_request") == {"status": "ok"}
    # The main shell answers; the subshell's cell is still running.
    assert shell_reply(client, execute(client, "1"))["content"]["status"] == "ok"
    assert control(client, "delete_subshell_request", {"subshell_id": subshell}) == {"status": "ok"}
    reply = shell_reply(client, waiting)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "Interrupted"


def collect_until(client, msg_id, msg_type):
    """IOPub messages for `msg_id` up to the first of `msg_type`."""
    messages = []
    while True:
        message = client.get_iopub_msg(timeout=TIMEOUT)
        if message["parent_header"].get("msg_id") == msg_id:
            messages.append(message)
            if message["msg_type"] == msg_type:
                return messages


def test_messages_for_unknown_comms_are_answered_as_ipykernel_does(any_kernel):
    name, client = any_kernel
    answers = []
    for msg_type, content in [("comm_msg", {"comm_id": "nosuchid", "data": {}}), ("comm_close", {"comm_id": "nosuchid", "data": {}}),
                              ("comm_open", {"comm_id": "c1", "target_name": "nosuch", "data": {}})]:
        msg_id = send_shell(client, msg_type, content)
        answers.append([(m["msg_type"], m["content"]) for m in collect_iopub(client, msg_id)])
    busy, idle = ("status", {"execution_state": "busy"}), ("status", {"execution_state": "idle"})
    assert answers == [
        [busy, ("stream", {"name": "stderr", "text": "No such comm: nosuchid\n"}), idle],
        [busy, ("stream", {"name": "stderr", "text": "No such comm: nosuchid\n"}), idle],
        [busy, ("stream", {"name": "stderr", "text": "No such comm target registered: nosuch\n"}), ("comm_close", {"comm_id": "c1", "data": {}}), idle],
    ]


def test_a_subshell_runs_cells_while_the_main_shell_streams_a_generation(kernel):
    import os
    _, client = kernel
    model = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
    shell_reply(client, execute(client, f'let m = load("{model}")'))
    subshell = control(client, "create_subshell_request")["subshell_id"]
    main = execute(client, 'for _ in 0..<1000 { generate(m, "Once upon a time", maxTokens: 2000, temperature: 0.8) }')
    collect_until(client, main, "stream")
    beside = execute(client, "m.name", subshell=subshell)
    results = [m["content"]["data"]["text/plain"] for m in collect_iopub(client, beside) if m["msg_type"] == "execute_result"]
    assert results == ['"stories260K"']
    assert shell_reply(client, beside)["content"]["status"] == "ok"
    # IOPub is one ordered stream: the main shell's text goes on after the subshell's idle.
    collect_until(client, main, "stream")
    assert control(client, "interrupt_request") == {"status": "ok"}
    assert shell_reply(client, main)["content"]["ename"] == "Interrupted"
