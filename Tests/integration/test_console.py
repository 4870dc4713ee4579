"""`jupyter console --kernel lumen`, driven through a pseudo-terminal as a person would use it."""
import io
import os
import signal
import sys

import pexpect


def spawn_console(timeout):
    """jupyter console with the Lumen kernel on a pseudo-terminal, keeping all it printed.

    Python's fault handler is on, so `expect_or_dump` can show where each of its threads was."""
    console = pexpect.spawn(
        sys.executable, ["-X", "faulthandler", "-m", "jupyter_console", "--kernel", "lumen", "--simple-prompt", "--no-confirm-exit"],
        env=dict(os.environ, TERM="dumb"), encoding="utf-8", timeout=timeout,
    )
    console.logfile_read = io.StringIO()
    return console


def expect_or_dump(console, pattern):
    """Waits for `pattern`; when it does not come, fails with the whole transcript and the
    console's threads' stacks (SIGABRT makes the fault handler print them), so a hang shows
    whether the console or the kernel stopped."""
    try:
        console.expect(pattern)
    except pexpect.TIMEOUT:
        os.kill(console.pid, signal.SIGABRT)
        try:
            console.expect(pexpect.EOF, timeout=10)
        except pexpect.TIMEOUT:
            pass
        raise AssertionError(f"no {pattern!r} within {console.timeout} s; the console printed:\n{console.logfile_read.getvalue()}") from None


def test_console_runs_cells_and_interrupts(kernelspecs):
    console = spawn_console(timeout=30)
    try:
        console.expect(r"In \[1\]: ")
        console.sendline('print("hello")')
        console.expect("hello")
        console.expect(r"In \[2\]: ")
        console.sendline('print("sleeping"); sleep(60)')
        console.expect("sleeping\r\n")
        console.sendintr()
        console.expect("Interrupted")
        console.expect(r"In \[\d+\]: ")
        console.sendline('"still alive"')
        console.expect(r'Out\[\d+\]: "still alive"')
        console.expect(r"In \[\d+\]: ")
        # `exit` ends the console as it does with ipykernel (the ask_exit payload).
        console.sendline("exit")
        console.expect(pexpect.EOF)
    finally:
        console.close(force=True)


def test_console_shows_a_load_and_a_generation_as_they_happen(kernelspecs):
    # jupyter console ignores update_display_data: the load bar and the tokens must arrive as
    # messages it prints (streams), while the cell is still running.
    console = spawn_console(timeout=60)
    try:
        console.expect(r"In \[1\]: ")
        console.sendline('let m = load("smollm2")')
        console.expect("loading smollm2")
        console.expect("100%")
        console.expect(r"In \[2\]: ")
        # A generation far longer than the test: its first words show while it runs, then the
        # interrupt ends it with its summary line. (llama.cpp's greedy words, each ahead of the
        # next likeliest by 0.38 or more; its next, " New" over " Nova", by only 0.06.)
        console.sendline('generate(m, "Once upon a time", maxTokens: 100000, temperature: 0)')
        console.expect(", the city of")
        console.sendintr()
        expect_or_dump(console, r"· interrupted\]")
        console.expect("Interrupted")
        console.expect(r"In \[\d+\]: ")
        console.sendline("exit")
        console.expect(pexpect.EOF)
    finally:
        console.close(force=True)
