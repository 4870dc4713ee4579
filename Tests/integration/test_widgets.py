"""Jupyter widgets (ipywidgets 8's protocol over comms), with ipywidgets itself as the oracle: the
state each widget opens its comm with is ipywidgets' `get_state()`, and the same scenario run on
ipykernel with ipywidgets gives the same messages as on Lumen."""
import json
import os
import re
import subprocess

import ipywidgets
import pytest
from ipywidgets._version import __protocol_version__
from ipywidgets.widgets.widget import _instances as ipywidgets_instances

from conftest import TIMEOUT, collect_iopub, run, shell_reply, start_kernel, types

KINDS = ["IntSlider", "FloatSlider", "Dropdown", "Checkbox", "ToggleButton", "Text", "Textarea", "Button", "Label", "HTML",
         "IntProgress", "FloatProgress", "Output", "HBox", "VBox"]
REFERENCE = re.compile(r"^IPY_MODEL_([0-9a-f]{32})$")


def opened(messages):
    """The comms opened, in order, as (comm_id, state, metadata)."""
    return [(m["content"]["comm_id"], m["content"]["data"], m["metadata"]) for m in messages if m["msg_type"] == "comm_open"]


def resolved(state, models):
    """`state` with each `IPY_MODEL_` reference replaced by the state it refers to."""
    def value(item):
        if isinstance(item, str) and (match := REFERENCE.match(item)):
            return resolved(models[match.group(1)], models)
        if isinstance(item, list):
            return [value(element) for element in item]
        return item
    return {key: value(item) for key, item in state.items()}


def ipywidgets_state(widget):
    """ipywidgets' own state of `widget` as JSON carries it, references resolved the same way."""
    def value(item):
        if isinstance(item, str) and item.startswith("IPY_MODEL_"):
            return ipywidgets_state(ipywidgets_instances[item[len("IPY_MODEL_"):]])
        if isinstance(item, list):
            return [value(element) for element in item]
        return item
    return {key: value(item) for key, item in json.loads(json.dumps(widget.get_state())).items()}


def lumen_state(kc, code):
    """The state of the widget `code` makes (its last comm), its references resolved."""
    reply, messages = run(kc, code)
    assert reply["content"]["status"] == "ok", reply["content"]
    comms = opened(messages)
    assert comms, "no comm was opened"
    models = {comm_id: data["state"] for comm_id, data, _ in comms}
    assert all(data["buffer_paths"] == [] and metadata == {"version": __protocol_version__} for _, data, metadata in comms)
    views = [m["content"]["data"]["application/vnd.jupyter.widget-view+json"] for m in messages if m["msg_type"] == "execute_result"]
    assert views == [{"version_major": 2, "version_minor": 0, "model_id": comms[-1][0]}]
    return resolved(comms[-1][1]["state"], models)


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_widget_has_ipywidgets_default_state(kc, kind):
    assert lumen_state(kc, f"{kind}()") == ipywidgets_state(getattr(ipywidgets, kind)())


@pytest.mark.parametrize("lumen, python", [
    ('IntSlider(value: 3, min: 1, max: 9, step: 2, description: "n", continuousUpdate: false)',
     'IntSlider(value=3, min=1, max=9, step=2, description="n", continuous_update=False)'),
    ('FloatSlider(value: 0.5, max: 2, readoutFormat: ".3f")', 'FloatSlider(value=0.5, max=2, readout_format=".3f")'),
    ('IntSlider(value: 50, max: 10)', 'IntSlider(value=50, max=10)'),
    ('Dropdown(options: ["a", "b", "c"], value: "b", description: "pick")', 'Dropdown(options=["a", "b", "c"], value="b", description="pick")'),
    ('Dropdown(options: [1, 2.5, "x"])', 'Dropdown(options=[1, 2.5, "x"])'),
    ('Button(description: "Stop", buttonStyle: "danger", tooltip: "ends it")', 'Button(description="Stop", button_style="danger", tooltip="ends it")'),
    ('Textarea(value: "hi", rows: 4, placeholder: "type")', 'Textarea(value="hi", rows=4, placeholder="type")'),
    ('HBox([Button(description: "a"), Label(value: "b")])', 'HBox([Button(description="a"), Label(value="b")])'),
    ('VBox([IntProgress(value: 7, barStyle: "success")], boxStyle: "info")', 'VBox([IntProgress(value=7, bar_style="success")], box_style="info")'),
])
def test_a_widget_made_with_arguments_has_ipywidgets_state(kc, lumen, python):
    assert lumen_state(kc, lumen) == ipywidgets_state(eval(python, vars(ipywidgets)))


# The same scenario in each language: (Lumen's code, Python's code).
SETUP = {
    "slider": ('var s = IntSlider(value: 5, max: 10)\ns.observe { c in print("changed", c["old"], c["new"]) }',
               'import ipywidgets as w\ns = w.IntSlider(value=5, max=10)\ns.observe(lambda c: print("changed", c["old"], c["new"]), names="value")'),
    "button": ('var b = Button(description: "go")\nb.onClick { b in print("clicked", b.description) }',
               'import ipywidgets as w\nb = w.Button(description="go")\nb.on_click(lambda b: print("clicked", b.description))'),
    "dropdown": ('var d = Dropdown(options: ["a", "b", "c"])\nd.observe { c in print("picked", c["new"]) }',
                 'import ipywidgets as w\nd = w.Dropdown(options=["a", "b", "c"])\nd.observe(lambda c: print("picked", c["new"]), names="value")'),
}
SET_IN_A_CELL = {"slider": ("s.value = 3", "s.value = 3"), "dropdown": ('d.value = "b"', 'd.value = "b"')}


def transcript(client, msg_id):
    """What IOPub says in answer to `msg_id`: statuses, comm messages' data and streams' text."""
    entries = []
    for message in collect_iopub(client, msg_id):
        content = message["content"]
        if message["msg_type"] == "status":
            entries.append(content["execution_state"])
        elif message["msg_type"] in ("comm_msg", "comm_open", "comm_close"):
            entries.append((message["msg_type"], content["data"]))
        elif message["msg_type"] == "stream":
            entries.append((content["name"], content["text"]))
    return entries


def scenario(client, language, widget, frontend_messages):
    """Runs `widget`'s setup, sends `frontend_messages` on its comm, sets it in a cell; the transcripts."""
    index = 0 if language == "lumen" else 1
    reply, messages = run(client, SETUP[widget][index])
    assert reply["content"]["status"] == "ok", reply["content"]
    comm_id = opened(messages)[-1][0]
    transcripts = []
    for data in frontend_messages:
        msg = client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        client.shell_channel.send(msg)
        transcripts.append(transcript(client, msg["header"]["msg_id"]))
    if widget in SET_IN_A_CELL:
        msg_id = client.execute(SET_IN_A_CELL[widget][index])
        transcripts.append(transcript(client, msg_id))
        assert shell_reply(client, msg_id)["content"]["status"] == "ok"
    return transcripts


SCENARIOS = {
    "slider": [{"method": "update", "state": {"value": 7}, "buffer_paths": []},
               {"method": "update", "state": {"value": 12}, "buffer_paths": []},
               {"method": "request_state"}],
    "button": [{"method": "custom", "content": {"event": "click"}}, {"method": "custom", "content": {"event": "click"}}],
    "dropdown": [{"method": "update", "state": {"index": 2}, "buffer_paths": []}],
}


@pytest.fixture(scope="module")
def both_kernels(kernelspecs):
    started = {name: start_kernel(name) for name in ("lumen", "python3")}
    yield {name: client for name, (_, client) in started.items()}
    for manager, client in started.values():
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@pytest.mark.parametrize("widget", sorted(SCENARIOS))
def test_the_front_end_and_the_session_change_a_widget_as_with_ipywidgets(both_kernels, widget):
    lumen = scenario(both_kernels["lumen"], "lumen", widget, SCENARIOS[widget])
    python = scenario(both_kernels["python3"], "python3", widget, SCENARIOS[widget])
    # Python's execute_input is not a comm message; the state sent on request is compared as a whole.
    assert normalised(lumen) == normalised(python)


def normalised(transcripts):
    """Transcripts with a full state's layout and style references made comparable."""
    def entry(item):
        if isinstance(item, tuple) and item[0] == "comm_msg" and "state" in item[1]:
            state = {k: ("IPY_MODEL_" if isinstance(v, str) and REFERENCE.match(v) else v) for k, v in item[1]["state"].items()}
            return ("comm_msg", {**item[1], "state": state})
        return item
    return [[entry(item) for item in transcript] for transcript in transcripts]


def test_a_widget_changes_while_the_main_shell_waits(kc):
    reply, messages = run(kc, 'var t = Text()\nt.observe { c in print("typed", c["new"]) }')
    comm_id = opened(messages)[-1][0]
    main = kc.execute('input("go? ")', allow_stdin=True)
    assert kc.get_stdin_msg(timeout=TIMEOUT)["content"]["prompt"] == "go? "
    msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "update", "state": {"value": "hello"}, "buffer_paths": []}})
    kc.shell_channel.send(msg)
    assert ("stdout", "typed hello\n") in transcript(kc, msg["header"]["msg_id"])
    kc.input("done")
    assert shell_reply(kc, main)["content"]["status"] == "ok"
    reply, messages = run(kc, "t.value")
    assert [m["content"]["data"]["text/plain"] for m in messages if m["msg_type"] == "execute_result"] == ['"hello"']


def test_bad_widget_messages_are_reported_and_the_kernel_goes_on(kc):
    reply, messages = run(kc, "var s = IntSlider(value: 4)")
    comm_id = opened(messages)[-1][0]
    for data, complaint in [
        ({"method": "update", "state": {"value": "abc"}, "buffer_paths": []}, "the front end set 'value' to \"abc\", but it takes an Int"),
        ({"method": "teleport"}, 'Unknown front-end to back-end widget msg with method "teleport"'),
        ({"state": {}}, "a widget message without a method"),
        # ipywidgets refuses it too ("setting min > max"): both bounds stay as they were.
        ({"method": "update", "state": {"min": 10, "max": 0}, "buffer_paths": []}, "the front end set min 10 above max 0; both are left as they were"),
        ({"method": "update", "state": {"min": 200}, "buffer_paths": []}, "the front end set min 200 above max 100; both are left as they were"),
    ]:
        msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        kc.shell_channel.send(msg)
        streams = [entry for entry in transcript(kc, msg["header"]["msg_id"]) if isinstance(entry, tuple) and entry[0] == "stderr"]
        assert len(streams) == 1 and complaint in streams[0][1]
    malformed = kc.session.msg("comm_msg", {"data": {}})
    kc.shell_channel.send(malformed)
    assert types(collect_iopub(kc, malformed["header"]["msg_id"])) == ["busy", "idle"]
    reply, messages = run(kc, "[s.value, s.min, s.max]")
    assert [m["content"]["data"]["text/plain"] for m in messages if m["msg_type"] == "execute_result"] == ["[4, 0, 100]"]


def test_comm_info_lists_open_widgets_until_closed(kc):
    reply, messages = run(kc, "var s = IntSlider()")
    ids = [comm_id for comm_id, _, _ in opened(messages)]
    info = kc.session.msg("comm_info_request", {"target_name": "jupyter.widget"})
    kc.shell_channel.send(info)
    comms = shell_reply(kc, info["header"]["msg_id"])["content"]["comms"]
    assert set(ids) <= set(comms) and all(comms[i] == {"target_name": "jupyter.widget"} for i in ids)
    close = kc.session.msg("comm_close", {"comm_id": ids[-1], "data": {}})
    kc.shell_channel.send(close)
    collect_iopub(kc, close["header"]["msg_id"])
    reply, messages = run(kc, "s.close()")
    assert [m["content"]["comm_id"] for m in messages if m["msg_type"] == "comm_close"] == [ids[-1]]
    info = kc.session.msg("comm_info_request", {})
    kc.shell_channel.send(info)
    assert ids[-1] not in shell_reply(kc, info["header"]["msg_id"])["content"]["comms"]


def stories260k():
    path = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
    if not os.path.exists(path):
        pytest.fail("LUMEN_TEST_DATA must name the shared folder with models/stories260K.gguf (make test sets it)")
    return path


def comm_states(messages):
    """Each comm opened in `messages`: id → state."""
    return {comm_id: data["state"] for comm_id, data, _ in opened(messages)}


def send_comm(kc, comm_id, data):
    msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    kc.shell_channel.send(msg)
    return msg["header"]["msg_id"]


def next_outputs(kc, comm_id, accept, seen=()):
    """The first `outputs` update of Output widget `comm_id` that `accept` takes, among the messages
    `seen` already or those IOPub brings next."""
    for message in seen:
        data = message["content"].get("data", {})
        if message["msg_type"] == "comm_msg" and message["content"]["comm_id"] == comm_id and "outputs" in data.get("state", {}):
            if accept(data["state"]["outputs"]):
                return data["state"]["outputs"]
    while True:
        message = kc.get_iopub_msg(timeout=TIMEOUT)
        data = message["content"].get("data", {})
        if message["msg_type"] == "comm_msg" and message["content"]["comm_id"] == comm_id and "outputs" in data.get("state", {}):
            if accept(data["state"]["outputs"]):
                return data["state"]["outputs"]


def stream_text(outputs):
    return "".join(o["text"] for o in outputs if o["output_type"] == "stream")


def test_interact_makes_ipywidgets_controls_and_reruns_on_change_cancelling_the_run_going_on(kc):
    reply, messages = run(kc, '''func show(t, n, word) {
    if n == 1 { sleep(3600) }
    print("t=\\(t) n=\\(n) \\(word)")
}
interact(show, t: 0.5, n: 3, word: "hi")''')
    assert reply["content"]["status"] == "ok", reply["content"]
    states = comm_states(messages)
    by_model = {}
    for comm_id, state in states.items():
        by_model.setdefault(state["_model_name"], []).append((comm_id, state))
    form = ipywidgets.interactive(lambda t, n, word: None, t=0.5, n=3, word="hi")
    expected = [json.loads(json.dumps(child.get_state())) for child in form.children[:3]]
    for (model, (_, state)), reference in zip([("FloatSliderModel", by_model["FloatSliderModel"][0]), ("IntSliderModel", by_model["IntSliderModel"][0]),
                                               ("TextModel", by_model["TextModel"][0])], expected):
        for key in ("value", "min", "max", "step", "description"):
            if key in reference:
                assert state[key] == reference[key], (model, key)
    output_id = by_model["OutputModel"][0][0]
    box = [state for _, state in by_model["VBoxModel"]][0]
    assert box["children"][-1] == "IPY_MODEL_" + output_id and len(box["children"]) == 4
    slider = by_model["IntSliderModel"][0][0]
    next_outputs(kc, output_id, lambda outputs: stream_text(outputs) == "t=0.5 n=3 hi\n", seen=messages)
    send_comm(kc, slider, {"method": "update", "state": {"value": 1}, "buffer_paths": []})
    send_comm(kc, slider, {"method": "update", "state": {"value": 2}, "buffer_paths": []})
    # The run for n=1 sleeps until the change to n=2 cancels it; only n=2's output shows.
    outputs = next_outputs(kc, output_id, lambda outputs: stream_text(outputs) != "")
    assert stream_text(outputs) == "t=0.5 n=2 hi\n"


def test_interact_outside_widgets_runs_once(tmp_path):
    script = tmp_path / "form.lumen"
    script.write_text('let r = interact({ a, b in a + b }, a: 2, b: [10, 20])\nprint(r)\n')
    result = subprocess.run([os.environ["LUMEN_BIN"], "repl", str(script)], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("12")


def test_a_stop_button_ends_one_generation_and_the_cell_goes_on(kc):
    run(kc, f'let m = load("{stories260k()}")')
    cell = kc.execute('var ends = []\nfor _ in 0..<1000 {\n  ends.append(generate(m, "Once upon a time", maxTokens: 100000, temperature: 0.8, stopButton: true).finishReason)\n}')
    # Each generation shows a Stop button; each is pressed. A fast model may end a generation
    # before the click arrives, so this goes on until a footer says a click stopped one.
    stopped, buttons_after = False, 0
    while buttons_after == 0:
        message = kc.get_iopub_msg(timeout=TIMEOUT)
        if message["parent_header"].get("msg_id") != cell:
            continue
        content = message["content"]
        if message["msg_type"] == "comm_open" and content["data"]["state"]["_model_name"] == "ButtonModel":
            assert content["data"]["state"]["description"] == "Stop"
            if stopped:
                buttons_after += 1
            else:
                send_comm(kc, content["comm_id"], {"method": "custom", "content": {"event": "click"}})
        elif message["msg_type"] == "display_data" and "tok/s" in content["data"].get("text/plain", ""):
            stopped = stopped or "interrupted" in content["data"]["text/plain"]
        elif message["msg_type"] == "update_display_data":
            assert content["data"] == {"text/plain": ""}, "a finished generation's button is replaced by nothing"
    # The next generation started: the click ended only its own.
    assert control_interrupt(kc) == {"status": "ok"}
    assert shell_reply(kc, cell)["content"]["ename"] == "Interrupted"
    reply, messages = run(kc, 'ends.contains("interrupted")')
    assert [m["content"]["data"]["text/plain"] for m in messages if m["msg_type"] == "execute_result"] == ["true"]


def control_interrupt(kc):
    msg = kc.session.msg("interrupt_request", {})
    kc.control_channel.send(msg)
    while True:
        reply = kc.get_control_msg(timeout=TIMEOUT)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return reply["content"]


def test_a_chat_widget_sends_a_message_and_streams_the_reply_into_its_transcript(kc):
    reply, messages = run(kc, f'let m = load("{stories260k()}")\nchatWidget(conversation(m), maxTokens: 12, temperature: 0)')
    assert reply["content"]["status"] == "ok", reply["content"]
    states = comm_states(messages)
    find = lambda model: [comm_id for comm_id, state in states.items() if state["_model_name"] == model]
    transcript, box, send = find("OutputModel")[0], find("TextModel")[0], find("ButtonModel")[0]
    send_comm(kc, box, {"method": "update", "state": {"value": "Tell me a story"}, "buffer_paths": []})
    send_comm(kc, send, {"method": "custom", "content": {"event": "click"}})
    outputs = next_outputs(kc, transcript, lambda outputs: any("tok/s" in json.dumps(o) for o in outputs))
    assert outputs[0]["data"]["text/plain"] == "You: Tell me a story"
    assert stream_text(outputs).strip(), outputs
    # Send is disabled while the reply streams and enabled again after it.
    while True:
        message = kc.get_iopub_msg(timeout=TIMEOUT)
        content = message["content"]
        if message["msg_type"] == "comm_msg" and content["comm_id"] == send and content["data"]["state"].get("disabled") is False:
            break
    reply, messages = run(kc, "1")
    assert reply["content"]["status"] == "ok"
