"""The Jupyter debugger (debug_request on control, debug_event on IOPub: the Debug Adapter
Protocol with Jupyter's additions), driven the way JupyterLab drives it, against ipykernel 7 with
debugpy as the reference: every step both kernels can take runs on both and their answers are
compared; the rest (stepping into functions, errors, interrupts, bad input) on Lumen alone.

No sleeps: each step waits for the reply or event it needs."""
import os
import queue
import time

import pytest
from ipykernel.compiler import get_tmp_hash_seed, murmur2_x86

from conftest import TIMEOUT, collect_iopub, run, shell_reply, start_kernel

# A cell whose third line runs three times, in each kernel's language.
LOOP = {
    "lumen": "var total = 0\nfor i in 0..<3 {\n    total += i\n}\ntotal",
    "python3": "total = 0\nfor i in range(3):\n    total += i\n\ntotal",
}


class Debugger:
    """A debug client as JupyterLab is one: requests on control, events from IOPub."""

    def __init__(self, client):
        self.client = client
        self.seq = 0
        self.events = []

    def request(self, command, arguments=None):
        self.seq += 1
        message = self.client.session.msg("debug_request", {"type": "request", "seq": self.seq, "command": command,
                                                            "arguments": arguments or {}})
        self.client.control_channel.send(message)
        while True:
            reply = self.client.get_control_msg(timeout=TIMEOUT)
            if reply["parent_header"].get("msg_id") == message["header"]["msg_id"]:
                assert reply["msg_type"] == "debug_reply"
                content = reply["content"]
                # (ipykernel's richInspectVariables names it `sequence_seq`, a slip of its own.)
                assert content.get("request_seq", content.get("sequence_seq")) == self.seq, content
                return content

    def event(self, name, timeout=60):
        """The next `debug_event` named `name` (earlier ones of other names are kept)."""
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event["event"] == name:
                    return self.events.pop(index)
            message = self.client.get_iopub_msg(timeout=max(0.01, deadline - time.monotonic()))
            if message["msg_type"] == "debug_event":
                self.events.append(message["content"])

    def stream(self, text, timeout=60):
        """Waits until the cell prints `text` (debug events read meanwhile are kept)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.client.get_iopub_msg(timeout=max(0.01, deadline - time.monotonic()))
            if message["msg_type"] == "debug_event":
                self.events.append(message["content"])
            elif message["msg_type"] == "stream" and text in message["content"]["text"]:
                return

    def start(self):
        """What JupyterLab sends when the debugger is switched on."""
        assert self.request("debugInfo")["success"]
        initialized = self.request("initialize", {"clientID": "jupyterlab", "clientName": "JupyterLab", "adapterID": "python",
                                                  "pathFormat": "path", "linesStartAt1": True, "columnsStartAt1": True,
                                                  "supportsVariableType": True, "supportsVariablePaging": True,
                                                  "supportsRunInTerminalRequest": True, "locale": "en"})
        assert initialized["success"], initialized
        assert self.request("attach")["success"]
        info = self.request("debugInfo")
        assert self.request("configurationDone")["success"]
        return initialized, info


@pytest.fixture(params=["lumen", "python3"])
def debugged(request, kernelspecs):
    manager, client = start_kernel(request.param)
    yield request.param, client, Debugger(client)
    client.stop_channels()
    manager.shutdown_kernel(now=True)


@pytest.fixture
def lumen(kernelspecs):
    manager, client = start_kernel("lumen")
    yield client, Debugger(client)
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def variables_of_frame(debugger, frame_id):
    """Every variable the frame's scopes list, by name (the innermost first wins)."""
    found = {}
    for scope in debugger.request("scopes", {"frameId": frame_id})["body"]["scopes"]:
        listed = debugger.request("variables", {"variablesReference": scope["variablesReference"]})["body"]["variables"]
        for variable in listed:
            found.setdefault(variable["name"], variable)
    return found


def test_kernel_info_advertises_the_debugger_as_ipykernel_does(debugged):
    name, client, _ = debugged
    reply = client.kernel_info(reply=True, timeout=TIMEOUT)["content"]
    assert "debugger" in reply["supported_features"]
    # Protocol 5.4's field too, which ipykernel 7 (protocol 5.5) no longer sends.
    assert name == "python3" or reply["debugger"] is True


def test_lumen_kernelspec_carries_debugger_metadata(kernelspecs):
    import json
    assert json.loads((kernelspecs / "lumen" / "kernel.json").read_text())["metadata"]["debugger"] is True


def test_a_breakpoint_stops_the_cell_as_in_ipykernel(debugged):
    name, client, debugger = debugged
    initialized, info = debugger.start()
    # The cell's path is the one JupyterLab computes: prefix + murmur2(code, seed) + suffix,
    # with ipykernel's own murmur2 as the oracle of the hash.
    assert info["body"]["isStarted"] is True
    assert info["body"]["hashMethod"] == "Murmur2"
    assert info["body"]["hashSeed"] == get_tmp_hash_seed()
    assert any(f["filter"] in ("raised", "uncaught") for f in initialized["body"]["exceptionBreakpointFilters"])
    code = LOOP[name]
    path = debugger.request("dumpCell", {"code": code})["body"]["sourcePath"]
    assert path == info["body"]["tmpFilePrefix"] + str(murmur2_x86(code, get_tmp_hash_seed())) + info["body"]["tmpFileSuffix"]
    assert debugger.request("source", {"source": {"path": path}})["body"]["content"] == code
    placed = debugger.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": 3}], "lines": [3],
                                                 "sourceModified": False})
    assert [(b["verified"], b["line"]) for b in placed["body"]["breakpoints"]] == [(True, 3)]
    assert debugger.request("debugInfo")["body"]["breakpoints"] == [{"source": path, "breakpoints": [{"line": 3}]}]

    msg_id = client.execute(code)
    stopped = debugger.event("stopped")["body"]
    assert stopped["reason"] == "breakpoint"
    thread = stopped["threadId"]
    assert thread in debugger.request("debugInfo")["body"]["stoppedThreads"]
    assert thread in [t["id"] for t in debugger.request("threads")["body"]["threads"]]
    frames = debugger.request("stackTrace", {"threadId": thread})["body"]["stackFrames"]
    assert frames[0]["line"] == 3 and frames[0]["source"]["path"] == path
    variables = variables_of_frame(debugger, frames[0]["id"])
    assert (variables["total"]["value"], variables["i"]["value"]) == ("0", "0")
    evaluated = debugger.request("evaluate", {"expression": "total + 10", "frameId": frames[0]["id"], "context": "repl"})
    assert evaluated["success"] and evaluated["body"]["result"] == "10"

    # Without the breakpoint, a step stops again in the same cell, then the cell runs to its end.
    assert debugger.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [], "lines": []})["success"]
    assert debugger.request("next", {"threadId": thread})["success"]
    assert debugger.event("stopped")["body"]["reason"] == "step"
    assert debugger.request("continue", {"threadId": thread})["success"]
    assert shell_reply(client, msg_id, timeout=60)["content"]["status"] == "ok"
    results = [m for m in collect_iopub(client, msg_id) if m["msg_type"] == "execute_result"]
    assert results[0]["content"]["data"]["text/plain"] == "3"

    # Not stopped: the Variables panel's globals, and a variable's rich display.
    listed = {v["name"]: v for v in debugger.request("inspectVariables")["body"]["variables"]}
    assert listed["total"]["value"] == "3"
    rich = debugger.request("richInspectVariables", {"variableName": "total"})
    assert rich["success"] and rich["body"]["data"]["text/plain"] == "3"
    assert debugger.request("disconnect", {"restart": False, "terminateDebuggee": False})["success"]
    assert debugger.request("debugInfo")["body"]["isStarted"] is False


def test_disconnecting_while_stopped_resumes_the_cell_as_in_ipykernel(debugged):
    name, client, debugger = debugged
    debugger.start()
    code = LOOP[name]
    path = debugger.request("dumpCell", {"code": code})["body"]["sourcePath"]
    debugger.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": 3}]})
    msg_id = client.execute(code)
    debugger.event("stopped")
    assert debugger.request("disconnect", {"restart": False, "terminateDebuggee": False})["success"]
    assert shell_reply(client, msg_id, timeout=60)["content"]["status"] == "ok"


FUNCTIONS = """func square(x) {
    let y = x * x
    return y
}
let a = square(3)
let b = square(4)
a + b"""


def test_stepping_into_over_and_out_of_functions(lumen):
    client, debugger = lumen
    debugger.start()
    path = debugger.request("dumpCell", {"code": FUNCTIONS})["body"]["sourcePath"]
    debugger.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": 5}]})
    msg_id = client.execute(FUNCTIONS)
    thread = debugger.event("stopped")["body"]["threadId"]

    def where():
        frames = debugger.request("stackTrace", {"threadId": thread})["body"]["stackFrames"]
        return [(f["name"], f["line"]) for f in frames]

    assert where()[0][1] == 5
    debugger.request("stepIn", {"threadId": thread})
    assert debugger.event("stopped")["body"]["reason"] == "step"
    assert [line for _, line in where()] == [2, 5] and where()[0][0] == "square"
    frame = debugger.request("stackTrace", {"threadId": thread})["body"]["stackFrames"][0]
    assert variables_of_frame(debugger, frame["id"])["x"]["value"] == "3"
    debugger.request("next", {"threadId": thread})
    debugger.event("stopped")
    assert [line for _, line in where()] == [3, 5]
    debugger.request("stepOut", {"threadId": thread})
    debugger.event("stopped")
    assert where()[0][1] == 6
    debugger.request("next", {"threadId": thread})
    debugger.event("stopped")
    assert where()[0][1] == 7
    frame = debugger.request("stackTrace", {"threadId": thread})["body"]["stackFrames"][0]
    assert debugger.request("copyToGlobals", {"srcVariableName": "b", "dstVariableName": "copied", "srcFrameId": frame["id"]})["success"]
    debugger.request("continue", {"threadId": thread})
    assert shell_reply(client, msg_id, timeout=60)["content"]["status"] == "ok"
    listed = {v["name"]: v["value"] for v in debugger.request("inspectVariables")["body"]["variables"]}
    assert (listed["a"], listed["b"], listed["copied"]) == ("9", "16", "16")


def test_an_error_stops_where_it_is_raised_when_asked(lumen):
    client, debugger = lumen
    debugger.start()
    code = "func inner(x) {\n    return x + undefinedName\n}\ninner(1)"
    debugger.request("dumpCell", {"code": code})
    assert debugger.request("setExceptionBreakpoints", {"filters": ["raised"]})["success"]
    msg_id = client.execute(code)
    stopped = debugger.event("stopped")["body"]
    assert stopped["reason"] == "exception" and "undefinedName" in stopped["text"]
    frames = debugger.request("stackTrace", {"threadId": stopped["threadId"]})["body"]["stackFrames"]
    assert [(f["name"], f["line"]) for f in frames] == [("inner", 2), ("Cell In[1]", 4)]
    debugger.request("continue", {"threadId": stopped["threadId"]})
    reply = shell_reply(client, msg_id, timeout=60)["content"]
    assert reply["status"] == "error" and reply["ename"] == "NameError"
    # The error stopped once, at the innermost statement, not again in its caller.
    assert not [e for e in debugger.events if e["event"] == "stopped"]


def test_control_subshells_and_comms_work_while_stopped_and_an_interrupt_ends_the_cell(lumen):
    client, debugger = lumen
    debugger.start()
    code = LOOP["lumen"]
    path = debugger.request("dumpCell", {"code": code})["body"]["sourcePath"]
    debugger.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": 3}]})
    msg_id = client.execute(code)
    debugger.event("stopped")
    # Control keeps working while the cell is stopped: another cell on a subshell runs too.
    subshell = client.session.msg("create_subshell_request", {})
    client.control_channel.send(subshell)
    while (reply := client.get_control_msg(timeout=TIMEOUT))["parent_header"].get("msg_id") != subshell["header"]["msg_id"]:
        pass
    sub = client.session.msg("execute_request", {"code": "40 + 2", "silent": False, "store_history": False, "user_expressions": {},
                                                 "allow_stdin": False, "stop_on_error": True})
    sub["header"]["subshell_id"] = reply["content"]["subshell_id"]
    client.shell_channel.send(sub)
    assert shell_reply(client, sub["header"]["msg_id"])["content"]["status"] == "ok"
    # And comm messages are taken: one for a target no one registered is closed, as ipykernel does.
    comm = client.session.msg("comm_open", {"comm_id": "c1", "target_name": "nosuch", "data": {}})
    client.shell_channel.send(comm)
    assert [m["msg_type"] for m in collect_iopub(client, comm["header"]["msg_id"])] == ["status", "stream", "comm_close", "status"]
    interrupt = client.session.msg("interrupt_request", {})
    client.control_channel.send(interrupt)
    reply = shell_reply(client, msg_id, timeout=60)["content"]
    assert reply["status"] == "error" and reply["ename"] == "Interrupted"
    assert debugger.event("continued")["body"]["threadId"]


def test_bad_requests_are_answered_and_never_crash(lumen):
    client, debugger = lumen
    refused = debugger.request("stackTrace", {"threadId": 1})
    assert not refused["success"] and "not started" in refused["message"]
    debugger.start()
    unknown = debugger.request("flyToTheMoon")
    assert not unknown["success"] and "flyToTheMoon" in unknown["message"]
    missing = debugger.request("dumpCell", {})
    assert not missing["success"] and "code" in missing["message"]
    never_dumped = debugger.request("setBreakpoints", {"source": {"path": "/nowhere/42.lumen"}, "breakpoints": [{"line": 1}]})
    assert never_dumped["success"] and never_dumped["body"]["breakpoints"][0]["verified"] is False
    path = debugger.request("dumpCell", {"code": "let a = 1\n\nlet b = 2"})["body"]["sourcePath"]
    blank = debugger.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": 2}, {"line": 3}, {"line": 99}]})
    assert [b["verified"] for b in blank["body"]["breakpoints"]] == [False, True, False]
    assert not debugger.request("stackTrace", {"threadId": 12345})["success"]
    assert not debugger.request("variables", {"variablesReference": 999999})["success"]
    assert not debugger.request("continue", {"threadId": 777})["success"]
    assert not debugger.request("setExceptionBreakpoints", {"filters": ["everything"]})["success"]
    assert not debugger.request("evaluate", {"expression": "1 +", "context": "repl"})["success"]
    # A cell cleared of its breakpoints (as JupyterLab clears a deleted cell) is forgotten: a
    # breakpoint on it is not verified until the cell is dumped again.
    other = debugger.request("dumpCell", {"code": "let deleted = 1"})["body"]["sourcePath"]
    assert debugger.request("setBreakpoints", {"source": {"path": other}, "breakpoints": []})["body"]["breakpoints"] == []
    forgotten = debugger.request("setBreakpoints", {"source": {"path": other}, "breakpoints": [{"line": 1}]})
    assert forgotten["body"]["breakpoints"][0]["verified"] is False
    assert not debugger.request("source", {"source": {"path": other}})["success"]
    # The kernel still runs cells, and the verified breakpoint on line 3 stops that cell.
    msg_id = client.execute("let a = 1\n\nlet b = 2")
    thread = debugger.event("stopped")["body"]["threadId"]
    debugger.request("continue", {"threadId": thread})
    assert shell_reply(client, msg_id, timeout=60)["content"]["status"] == "ok"


def test_pause_stops_a_running_cell_at_its_next_statement(lumen):
    client, debugger = lumen
    debugger.start()
    msg_id = client.execute('var n = 0\nprint("looping")\nwhile n >= 0 {\n    n += 1\n}')
    started = debugger.event("thread")["body"]
    assert started["reason"] == "started"
    # Paused only once line 2 has run, so the next statement is the loop's, whatever the load.
    debugger.stream("looping")
    assert debugger.request("pause", {"threadId": started["threadId"]})["success"]
    stopped = debugger.event("stopped")["body"]
    assert stopped["reason"] == "pause" and stopped["threadId"] == started["threadId"]
    frames = debugger.request("stackTrace", {"threadId": stopped["threadId"]})["body"]["stackFrames"]
    assert frames[0]["line"] in (3, 4)
    client.control_channel.send(client.session.msg("interrupt_request", {}))
    assert shell_reply(client, msg_id, timeout=60)["content"]["ename"] == "Interrupted"
    assert debugger.event("thread")["body"] == {"reason": "exited", "threadId": started["threadId"]}


def test_a_model_expands_into_its_file_architecture_and_sessions(lumen):
    """The Variables panel shows a loaded model as its card, and expands it: its file, and its
    card's entries (architecture, the sessions it decodes in parallel)."""
    client, debugger = lumen
    path = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
    if not os.path.exists(path):
        pytest.fail("LUMEN_TEST_DATA must name the shared folder with models/stories260K.gguf (make test sets it)")
    debugger.start()
    reply, _ = run(client, f'let m = load("{path}", parallel: 2)')
    assert reply["content"]["status"] == "ok", reply["content"]
    listed = {v["name"]: v for v in debugger.request("inspectVariables")["body"]["variables"]}
    model = listed["m"]
    # The card on one line, its table's rules left out.
    assert model["value"].startswith("model  stories260K  architecture  llama") and model["variablesReference"] > 0
    children = {v["name"]: v for v in debugger.request("variables", {"variablesReference": model["variablesReference"]})["body"]["variables"]}
    assert children["path"]["value"] == f'"{path}"'
    info = {v["name"]: v["value"] for v in debugger.request("variables", {"variablesReference": children["info"]["variablesReference"]})["body"]["variables"]}
    assert (info['"architecture"'], info['"parallel"']) == ('"llama"', "2")
