"""The kernel's protocol behaviour as jupyter_client sees it: replies, IOPub order, counts,
output, errors, aborts, stdin and introspection."""
from conftest import collect_iopub, run, shell_reply, types


def test_kernel_info(kc):
    msg_id = kc.kernel_info()
    reply = shell_reply(kc, msg_id)
    content = reply["content"]
    assert reply["msg_type"] == "kernel_info_reply"
    assert content["status"] == "ok"
    assert tuple(int(x) for x in content["protocol_version"].split(".")) >= (5, 4)
    assert content["implementation"] == "lumen"
    assert content["implementation_version"]
    info = content["language_info"]
    assert info["name"] == "lumen"
    assert info["file_extension"] == ".lumen"
    assert info["pygments_lexer"] == "swift"
    assert info["codemirror_mode"] == "swift"
    assert info["mimetype"]
    assert content["banner"]
    assert all({"text", "url"} <= set(link) for link in content["help_links"])
    assert content["supported_features"] == ["iopub_welcome", "kernel subshells", "debugger"]
    assert content["debugger"] is True
    assert tuple(int(x) for x in reply["header"]["version"].split(".")) >= (5, 4)


def test_every_new_iopub_subscriber_is_welcomed(kernel):
    """JEP 65: a subscriber learns IOPub is connected from an iopub_welcome on its own topic,
    each subscriber (a repeated topic too), without sending any request."""
    import zmq
    manager, client = kernel
    context = zmq.Context.instance()
    endpoint = f"{client.transport}://{client.ip}:{client.iopub_port}"
    for topic in (b"", b"", b"kernel."):
        subscriber = context.socket(zmq.SUB)
        try:
            subscriber.connect(endpoint)
            subscriber.setsockopt(zmq.SUBSCRIBE, topic)
            assert subscriber.poll(20000), "no iopub_welcome"
            identities, message = client.session.feed_identities(subscriber.recv_multipart())
            message = client.session.deserialize(message)
            assert message["msg_type"] == "iopub_welcome" and message["content"] == {"subscription": topic.decode()}
            assert identities == [topic]
        finally:
            subscriber.close(linger=0)


def test_message_order_over_many_executions(kc):
    for index in range(25):
        reply, messages = run(kc, f'print("line {index}")')
        assert reply["content"]["status"] == "ok"
        assert types(messages) == ["busy", "execute_input", "stream", "idle"]
        assert messages[2]["content"] == {"name": "stdout", "text": f"line {index}\n"}


def test_execution_counts(kc):
    first, messages = run(kc, "1")
    count = first["content"]["execution_count"]
    assert messages[1]["content"]["execution_count"] == count
    result = next(m for m in messages if m["msg_type"] == "execute_result")
    assert result["content"]["execution_count"] == count
    second, _ = run(kc, "2")
    assert second["content"]["execution_count"] == count + 1
    not_stored, messages = run(kc, "3", store_history=False)
    assert not_stored["content"]["execution_count"] == count + 1
    silent, messages = run(kc, "4", silent=True)
    assert "execute_input" not in types(messages)
    assert "execute_result" not in types(messages)
    assert silent["content"]["execution_count"] == count + 1
    third, _ = run(kc, "5")
    assert third["content"]["execution_count"] == count + 2


def test_stdout_and_stderr_streams(kc):
    reply, messages = run(kc, 'print("to out", 42)\neprint("to err")')
    assert reply["content"]["status"] == "ok"
    streams = [m["content"] for m in messages if m["msg_type"] == "stream"]
    assert streams == [{"name": "stdout", "text": "to out 42\n"}, {"name": "stderr", "text": "to err\n"}]


def test_display_data_html(kc):
    reply, messages = run(kc, 'display(html: "<b>hi</b>")')
    assert reply["content"]["status"] == "ok"
    displays = [m for m in messages if m["msg_type"] == "display_data"]
    assert len(displays) == 1
    assert displays[0]["content"]["data"]["text/html"] == "<b>hi</b>"
    assert displays[0]["content"]["data"]["text/plain"] == "hi"


def test_execute_result_for_bare_expression(kc):
    _, messages = run(kc, '"text"\n2.5')
    results = [m["content"]["data"] for m in messages if m["msg_type"] == "execute_result"]
    assert results == [{"text/plain": "2.5"}]


def test_name_error(kc):
    reply, messages = run(kc, 'print("ok")\nprin("x")')
    content = reply["content"]
    assert content["status"] == "error"
    assert content["ename"] == "NameError"
    assert "prin" in content["evalue"]
    errors = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert len(errors) == 1 and errors[0]["ename"] == "NameError"
    traceback = "\n".join(content["traceback"])
    assert "line 2" in traceback and 'prin("x")' in traceback and "^" in traceback


def test_syntax_error_points_at_the_column(kc):
    reply, _ = run(kc, 'print("a" "b")')
    content = reply["content"]
    assert content["ename"] == "SyntaxError"
    caret_line = content["traceback"][-2]
    assert caret_line.index("^") == content["traceback"][-3].index('"b"')


def test_queued_cells_are_aborted_after_an_error(kc):
    failing = kc.execute("sleep(0.3)\nundefined_name")
    queued = [kc.execute(f"print({n})") for n in range(3)]
    failed = shell_reply(kc, failing)
    assert failed["content"]["status"] == "error"
    for msg_id in queued:
        reply = shell_reply(kc, msg_id)
        assert reply["content"]["status"] == "aborted"
        assert reply["content"]["execution_count"] == failed["content"]["execution_count"]
        assert types(collect_iopub(kc, msg_id)) == ["busy", "idle"]
    after, messages = run(kc, 'print("runs")')
    assert after["content"]["status"] == "ok"
    assert [m["content"]["text"] for m in messages if m["msg_type"] == "stream"] == ["runs\n"]


def test_stop_on_error_false_keeps_the_queue(kc):
    failing = kc.execute("sleep(0.2)\nundefined_name", stop_on_error=False)
    queued = kc.execute("print(1)")
    assert shell_reply(kc, failing)["content"]["status"] == "error"
    assert shell_reply(kc, queued)["content"]["status"] == "ok"


def test_input_request_round_trip(kc):
    msg_id = kc.execute('print(input("name? "))', allow_stdin=True)
    request = kc.get_stdin_msg(timeout=10)
    assert request["msg_type"] == "input_request"
    assert request["content"] == {"prompt": "name? ", "password": False}
    kc.input("Ada")
    messages = collect_iopub(kc, msg_id)
    assert [m["content"]["text"] for m in messages if m["msg_type"] == "stream"] == ["Ada\n"]
    assert shell_reply(kc, msg_id)["content"]["status"] == "ok"


def test_input_without_stdin_is_an_error(kc):
    reply, _ = run(kc, 'input("name? ")', allow_stdin=False)
    assert reply["content"]["status"] == "error"
    assert "not available" in reply["content"]["evalue"]


def test_introspection_replies(kc):
    complete = shell_reply(kc, kc.complete("pri", 3))["content"]
    assert complete["status"] == "ok" and "print" in complete["matches"]
    assert (complete["cursor_start"], complete["cursor_end"]) == (0, 3)
    inspect = shell_reply(kc, kc.inspect("sleep", 5))["content"]
    assert inspect["status"] == "ok" and inspect["found"] is True
    assert "sleep(" in inspect["data"]["text/plain"]
    for code, status in [('print("a")', "complete"), ('print("a"', "incomplete"), ('print("a)', "invalid"), ("print(1))", "invalid")]:
        reply = shell_reply(kc, kc.is_complete(code))["content"]
        assert reply["status"] == status, code
    run(kc, 'print("history me")')
    history = shell_reply(kc, kc.history(hist_access_type="tail", n=1))["content"]
    assert history["status"] == "ok"
    assert history["history"][-1][2] == 'print("history me")'
    msg = kc.session.msg("comm_info_request", {})
    kc.shell_channel.send(msg)
    assert shell_reply(kc, msg["header"]["msg_id"])["content"] == {"status": "ok", "comms": {}}


def test_comm_open_for_unknown_target_is_closed(kc):
    msg = kc.session.msg("comm_open", {"comm_id": "c1", "target_name": "nothing.here", "data": {}})
    kc.shell_channel.send(msg)
    messages = collect_iopub(kc, msg["header"]["msg_id"])
    closes = [m["content"] for m in messages if m["msg_type"] == "comm_close"]
    assert closes == [{"comm_id": "c1", "data": {}}]
