"""A streaming generation as Jupyter front ends see it: one display, bounded live updates, the
result, and interrupt_request in the middle of a long generation."""
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
    assert kinds[:3] == ["busy", "execute_input", "display_data"]
    # The live display is the output: the value is not shown a second time as execute_result.
    assert kinds[-2:] == ["update_display_data", "idle"] and "execute_result" not in kinds
    display_id = messages[2]["content"]["transient"]["display_id"]
    updates = [m for m in messages if m["msg_type"] == "update_display_data"]
    assert 1 <= len(updates) <= 33
    assert all(m["content"]["transient"]["display_id"] == display_id for m in updates)
    final = updates[-1]["content"]["data"]["text/plain"]
    assert final.startswith(", there was a little girl named Lily") and final.endswith("· length]")
    reply, messages = run(kc, 'let g = generate(m, "Once upon a time", maxTokens: 64, temperature: 0)\ng.text.count')
    assert next(m for m in messages if m["msg_type"] == "execute_result")["content"]["data"]["text/plain"] == str(len(final.split("\n[")[0]))
    shown_live = [m for m in messages if m["msg_type"] == "update_display_data"][-1]["content"]["data"]["text/plain"]
    reply, messages = run(kc, 'g')
    assert next(m for m in messages if m["msg_type"] == "execute_result")["content"]["data"]["text/plain"] == shown_live


def test_interrupt_request_mid_generation(kernel, model_path):
    manager, client = kernel
    run(client, f'let m = load("{model_path}")')
    msg_id = client.execute('generate(m, "Once upon a time", maxTokens: 1000000, temperature: 0.8, seed: 3)')
    while True:
        message = client.get_iopub_msg(timeout=20)
        if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "update_display_data":
            break
    manager.interrupt_kernel()
    reply = shell_reply(client, msg_id, timeout=5)
    assert reply["content"]["ename"] == "Interrupted"
    rest = collect_iopub(client, msg_id)
    last_update = [m for m in rest if m["msg_type"] == "update_display_data"][-1]
    assert last_update["content"]["data"]["text/plain"].endswith("· interrupted]")
    after, _ = run(client, 'm.generate("Lily", maxTokens: 4, temperature: 0).tokens.count')
    assert after["content"]["status"] == "ok"
