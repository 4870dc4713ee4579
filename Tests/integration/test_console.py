"""`jupyter console --kernel lumen`, driven through a pseudo-terminal as a person would use it."""
import os
import sys

import pexpect


def spawn_console(timeout):
    """jupyter console with the Lumen kernel on a pseudo-terminal."""
    return pexpect.spawn(
        sys.executable, ["-m", "jupyter_console", "--kernel", "lumen", "--simple-prompt", "--no-confirm-exit"],
        env=dict(os.environ, TERM="dumb"), encoding="utf-8", timeout=timeout,
    )


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
        console.expect(r"· interrupted\]")
        console.expect("Interrupted")
        console.expect(r"In \[\d+\]: ")
        console.sendline("exit")
        console.expect(pexpect.EOF)
    finally:
        console.close(force=True)
