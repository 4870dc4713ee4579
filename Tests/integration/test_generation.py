"""A streaming generation as Jupyter front ends see it: the text as `stream` messages (which every
front end shows live, jupyter console included), at most 25 a second, then the summary line, and
interrupt_request in the middle of a long generation."""
import os

import pytest

from conftest import collect_iopub, run, shell_reply, types


@pytest.fixture
def model_path():
    shared = os.environ.get("LUMEN_TEST_DATA", "")
    path = os.path.join(shared, "models", "stories260K.gguf")
    if not os.path.exists(path):
        pytest.fail("LUMEN_TEST_DATA must name the shared folder with models/stories260K.gguf (make test sets it)")
    return path


def test_streaming_generation_message_sequence(kc, model_path):
    run(kc, f'let m = load("{model_path}")')
    reply, messages = run(kc, 'generate(m, "Once upon a time", maxTokens: 64, temperature: 0)')
    assert reply["content"]["status"] == "ok"
    kinds = types(messages)
    assert kinds[:3] == ["busy", "execute_input", "stream"]
    # The streamed text and the summary line are the output: the value is not shown a second
    # time as execute_result, and nothing relies on display updates.
    assert kinds[-2:] == ["display_data", "idle"] and "execute_result" not in kinds and "update_display_data" not in kinds
    streams = [m["content"] for m in messages if m["msg_type"] == "stream"]
    assert 1 <= len(streams) <= 34 and all(s["name"] == "stdout" for s in streams)
    text = "".join(s["text"] for s in streams)
    footer = messages[-2]["content"]["data"]["text/plain"]
    assert text.startswith(", there was a little girl named Lily") and text.endswith("\n") and footer.endswith("· length]")
    reply, messages = run(kc, 'let g = generate(m, "Once upon a time", maxTokens: 64, temperature: 0)\ng.text.count')
    assert next(m for m in messages if m["msg_type"] == "execute_result")["content"]["data"]["text/plain"] == str(len(text.rstrip("\n")))
    reply, messages = run(kc, 'g')
    # Shown as a value later, the generation is its text and its summary line.
    shown = next(m for m in messages if m["msg_type"] == "execute_result")["content"]["data"]["text/plain"]
    assert shown.startswith(text + "[64 tokens") and shown.endswith("· length]")


def test_interrupt_request_mid_generation(kernel, model_path):
    manager, client = kernel
    run(client, f'let m = load("{model_path}")')
    msg_id = client.execute('generate(m, "Once upon a time", maxTokens: 1000000, temperature: 0.8, seed: 3)')
    while True:
        message = client.get_iopub_msg(timeout=20)
        if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "stream":
            break
    manager.interrupt_kernel()
    reply = shell_reply(client, msg_id, timeout=5)
    assert reply["content"]["ename"] == "Interrupted"
    rest = collect_iopub(client, msg_id)
    footer = [m for m in rest if m["msg_type"] == "display_data"][-1]
    assert footer["content"]["data"]["text/plain"].endswith("· interrupted]")
    after, _ = run(client, 'm.generate("Lily", maxTokens: 4, temperature: 0).tokens.count')
    assert after["content"]["status"] == "ok"
