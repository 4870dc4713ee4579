"""The interrupt soak: a thousand interrupts of streaming generations on a loaded machine. Every cell
must end `Interrupted` (its output so far stays), none may hang, and the model's greedy output must
be the same before and after. LUMEN_SOAK_INTERRUPTS sets the count; the load is two busy loops
unless LUMEN_SOAK_BUSY_LOOPS says another number (CI sets 0 and runs the portable Swift suite
beside the soak, so the load is work that needs doing anyway)."""
import os
import subprocess
import time

import pytest

from conftest import TIMEOUT, collect_iopub, run, shell_reply, start_kernel

INTERRUPTS = int(os.environ.get("LUMEN_SOAK_INTERRUPTS", "1000"))
BUSY_LOOPS = int(os.environ.get("LUMEN_SOAK_BUSY_LOOPS", "2"))
STORIES = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
GREEDY = 'm.generate("Once upon a time", maxTokens: 48, temperature: 0).text'


def result_text(messages):
    return next(m for m in messages if m["msg_type"] == "execute_result")["content"]["data"]["text/plain"]


def test_a_thousand_interrupts_of_streaming_generations_under_load(kernelspecs, capsys):
    load_before = os.getloadavg()[0]
    if not os.path.exists(STORIES):
        pytest.fail("LUMEN_TEST_DATA must name the shared folder with models/stories260K.gguf (make test sets it)")
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(BUSY_LOOPS)]
    manager, client = start_kernel("lumen")
    try:
        run(client, f'let m = load("{STORIES}")')
        _, messages = run(client, GREEDY)
        before = result_text(messages)
        started = time.monotonic()
        slowest = 0.0
        for index in range(INTERRUPTS):
            # Generations one after another (a single one may end at its end-of-text token first).
            msg_id = client.execute(f'for seed in {index}..<1000000 {{ generate(m, "Once upon a time", maxTokens: 200, temperature: 0.8, seed: seed) }}')
            # Interrupt once the generation is streaming: its first text has arrived.
            while True:
                message = client.get_iopub_msg(timeout=TIMEOUT)
                if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "stream":
                    break
            asked = time.monotonic()
            manager.interrupt_kernel()
            reply = shell_reply(client, msg_id, timeout=TIMEOUT)
            slowest = max(slowest, time.monotonic() - asked)
            assert reply["content"].get("ename") == "Interrupted", (index, reply["content"])
            rest = collect_iopub(client, msg_id)
            assert any(m["msg_type"] == "error" for m in rest), index
        elapsed = time.monotonic() - started
        _, messages = run(client, GREEDY)
        assert result_text(messages) == before
        with capsys.disabled():
            print(f"\ninterrupt soak: {INTERRUPTS} interrupts beside {BUSY_LOOPS} busy loops in {elapsed:.1f} s "
                  f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after), all Interrupted, "
                  f"slowest interrupt-to-reply {1000 * slowest:.0f} ms, greedy output unchanged")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        for process in busy:
            process.kill()
            process.wait()
