"""`lumen repl` on a real pseudo-terminal (TERM=xterm), typed at as a person would: line editing,
history across sessions, completion, help, multi-line strings, passwords, Ctrl-C, background
output while typing, progress bars and wide tables. What the person would see is read back with
pyte, a terminal emulator, from the bytes the REPL wrote."""
import os
import tempfile
import time

import pexpect
import pyte

from conftest import lumen_bin

STORIES = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
UP = "\x1b[A"
COLUMNS, ROWS = 80, 40


class Terminal:
    """The REPL on an 80×40 terminal, with everything it wrote kept for the emulator."""

    def __init__(self, data_home=None):
        env = dict(os.environ, TERM="xterm", LUMEN_LOG="0", XDG_DATA_HOME=data_home or tempfile.mkdtemp(prefix="lumen-history-"))
        self.child = pexpect.spawn(lumen_bin(), ["repl"], env=env, encoding="utf-8", timeout=60, dimensions=(ROWS, COLUMNS))
        self.written = []
        self.child.logfile_read = self
        self.prompt = 0

    # pexpect's log sink: keeps every byte read from the terminal.
    def write(self, text):
        self.written.append(text)

    def flush(self):
        pass

    def __getattr__(self, name):
        return getattr(self.child, name)

    def screen(self):
        """The screen's lines as the terminal shows them now, trailing blanks dropped."""
        screen = pyte.Screen(COLUMNS, ROWS)
        stream = pyte.Stream(screen)
        stream.feed("".join(self.written))
        return [line.rstrip() for line in screen.display]

    def expect_screen(self, text, timeout=60):
        """Reads what the REPL writes until `text` is on the screen (libedit redraws only what
        changed, so the bytes alone need not contain it). Only for waits with no prompt among
        the bytes read: they bypass pexpect's buffer."""
        deadline = time.monotonic() + timeout
        while text not in "\n".join(self.screen()):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{text!r} never appeared on the screen:\n" + "\n".join(self.screen())
            try:
                self.child.read_nonblocking(size=4096, timeout=remaining)
            except pexpect.TIMEOUT:
                pass

    def expect_prompt(self, same=False):
        """Waits for the next cell's prompt (or, after Ctrl-C at the prompt, the same one again);
        by its number, as a prompt is redrawn when output arrives while it is up."""
        self.prompt += 0 if same else 1
        self.child.expect(rf"In \[{self.prompt}\]: ")
        return self.child.before

    def run(self, cell):
        """Types a cell, runs it and waits for the next prompt."""
        self.child.send(cell + "\r")
        return self.expect_prompt()


def test_history_is_recalled_with_the_arrows_in_a_later_session_and_searched_with_ctrl_r():
    data_home = tempfile.mkdtemp(prefix="lumen-history-")
    first = Terminal(data_home)
    try:
        first.expect_prompt()
        first.run("let marker = 4242")
        first.run("let other = 1")
        first.send("exit\r")
        first.expect(pexpect.EOF)
    finally:
        first.close(force=True)
    second = Terminal(data_home)
    try:
        second.expect_prompt()
        # Up twice: the cell before last of the earlier session, run again.
        second.send(UP)
        second.expect_screen("In [1]: let other = 1")
        second.send(UP)
        second.expect_screen("In [1]: let marker = 4242")
        second.send(" + 1\r")
        second.expect_prompt()
        second.run("marker")
        assert "Out[2]: 4243" in second.screen()
        # Ctrl-R searches the history backwards as it is typed.
        second.send("\x12")
        second.send("other =")
        second.expect_screen("let other = 1")
        second.send("\r")
        second.expect_prompt()
        second.run("other")
        assert "Out[4]: 1" in second.screen()
        second.run("%history")
        assert "let marker = 4242 + 1" in second.screen()
    finally:
        second.close(force=True)


def test_tab_completes_a_member_and_an_argument_label():
    term = Terminal()
    try:
        term.expect_prompt()
        term.run(f'let m = load("{STORIES}")')
        term.send("m.gene\t")
        term.expect_screen("In [2]: m.generate")
        term.send('("Once", maxT\t')
        term.expect_screen('m.generate("Once", maxTokens:')
        term.send(" 3, temperature: 0)\r")
        term.expect_prompt()
        screen = term.screen()
        line = next(line for line in screen if line.startswith("In [2]: "))
        assert line == 'In [2]: m.generate("Once", maxTokens: 3, temperature: 0)', screen
        assert any("[3 tokens" in line for line in screen), screen
        # Several candidates that share nothing more are listed below the line, which stays.
        term.send("m.\t")
        term.expect_screen("nextTokens")
        assert "In [3]: m." in term.screen()
        term.send("\x15exit\r")
        term.expect(pexpect.EOF)
    finally:
        term.close(force=True)


def test_help_and_cell_magics_and_multi_line_strings():
    term = Terminal()
    try:
        term.expect_prompt()
        # `sleep?` shows help at once (it used to wait for a continuation line).
        output = term.run("sleep?")
        assert "Pauses for `seconds`" in output
        # %%time spans the cell until a blank line, as in IPython's terminal.
        term.send("%%time\r")
        term.send('print("timed")\r')
        term.send("\r")
        term.expect("Wall time")
        term.expect_prompt()
        # A """ string typed over several lines is one cell.
        term.send('let s = """\r')
        term.send("first\r")
        term.send("second\r")
        term.send('"""\r')
        term.expect_prompt()
        term.run("s.split(\"\\n\").count")
        assert "Out[4]: 2" in term.screen()
    finally:
        term.close(force=True)


def test_a_password_is_not_echoed():
    term = Terminal()
    try:
        term.expect_prompt()
        term.send('let secret = input("password: ", password: true)\r')
        term.expect("password: ")
        term.send("hunter2\r")
        term.expect_prompt()
        term.run("secret.count")
        screen = term.screen()
        assert "Out[2]: 7" in screen
        assert not any("hunter2" in line for line in screen), screen
        # An echoed input() shows what is typed.
        term.send('let name = input("name: ")\r')
        term.expect("name: ")
        term.send("Ada\r")
        term.expect_prompt()
        assert any(line == "name: Ada" for line in term.screen())
    finally:
        term.close(force=True)


def test_ctrl_c_clears_the_line_at_the_prompt_and_interrupts_a_generation():
    term = Terminal()
    try:
        term.expect_prompt()
        term.send("half typed")
        term.expect_screen("In [1]: half typed")
        term.sendintr()
        term.expect_prompt(same=True)
        term.run("1 + 1")
        assert "Out[1]: 2" in term.screen()
        term.run(f'let m = load("{STORIES}")')
        term.send('m.generate("Once", maxTokens: 100000, temperature: 0)\r')
        term.expect("time, there")
        term.sendintr()
        term.expect(r"interrupted\]")
        term.expect_prompt()
        term.run("40 + 2")
        assert "Out[4]: 42" in term.screen()
    finally:
        term.close(force=True)


def test_background_output_is_printed_above_the_line_being_typed():
    term = Terminal()
    try:
        term.expect_prompt()
        term.run('let job = spawn { for i in 0..<600 { print("tick \\(i)"); sleep(0.1) } }')
        term.send("let typed")
        term.expect_screen("In [2]: let typed")
        # Two ticks printed while the line is being typed...
        term.expect(r"tick (\d+)")
        first = int(term.match.group(1))
        term.expect_screen(f"tick {first + 1}\n")
        term.send(" = 5\r")
        term.expect_prompt()
        term.run("job.cancel()")
        screen = term.screen()
        # ...went above the prompt, which was redrawn below them with what had been typed.
        typed = [index for index, line in enumerate(screen) if line.startswith("In [2]: let typed")]
        assert typed and screen[typed[-1]] == "In [2]: let typed = 5", screen
        assert any(line == f"tick {first + 1}" for line in screen[:typed[-1]]), screen
        term.run("typed")
        assert "Out[4]: 5" in term.screen()
    finally:
        term.close(force=True)


def test_a_progress_bar_leaves_one_final_line_and_a_wide_table_fits_the_terminal():
    term = Terminal()
    try:
        term.expect_prompt()
        term.run(f'let m = load("{STORIES}")')
        term.run('let b = batch(m, ["A", "B", "C"], maxTokens: 4, temperature: 0)')
        screen = term.screen()
        assert sum("3/3" in line for line in screen) == 1, screen
        assert not any("0/3" in line or "1/3" in line for line in screen), screen
        # load's bar became the model's table: no 0 % bar remains, nor when a load fails.
        assert not any(line.endswith(" 0%") for line in screen), screen
        term.run('load("/dev/null")')
        screen = term.screen()
        assert "loading /dev/null failed" in screen and not any(line.endswith(" 0%") for line in screen), screen
        term.run('table([["name": "' + "x" * 150 + '", "n": 1]])')
        screen = term.screen()
        heading = max(index for index, line in enumerate(screen) if line.startswith("name "))
        row = screen[heading + 2]
        assert len(row) <= COLUMNS and row.endswith("…  1"), screen
    finally:
        term.close(force=True)


def test_clear_erases_the_cells_output_and_next_tokens_draws_bars():
    term = Terminal()
    try:
        term.expect_prompt()
        term.run('print("gone 1"); print("gone 2"); clear(); print("kept")')
        screen = term.screen()
        assert not any(line.startswith("gone") for line in screen), screen
        assert "kept" in screen
        # With wait: true, the old output goes when the new arrives.
        term.run('print("old"); clear(wait: true); print("new")')
        screen = term.screen()
        assert "old" not in screen and "new" in screen, screen
        term.run(f'let m = load("{STORIES}")')
        term.run('nextTokens(m, "Once upon a", k: 3)')
        screen = term.screen()
        assert any(line.startswith('378  " time"') and line.endswith("█" * 40) for line in screen), screen
    finally:
        term.close(force=True)


def test_with_stdout_piped_the_prompt_goes_to_the_terminal_and_results_down_the_pipe():
    env = dict(os.environ, TERM="xterm", LUMEN_LOG="0", XDG_DATA_HOME=tempfile.mkdtemp(prefix="lumen-history-"))
    child = pexpect.spawn("sh", ["-c", f"'{lumen_bin()}' repl | cat"], env=env, encoding="utf-8", timeout=60, dimensions=(ROWS, COLUMNS))
    try:
        child.expect(r"In \[1\]: ")
        child.send("20 + 22\r")
        # The result reaches the terminal through the pipe and `cat`, the next prompt directly:
        # they may arrive in either order, and both must arrive.
        patterns = [r"Out\[1\]: 42", r"In \[2\]: "]
        first = child.expect(patterns)
        child.expect(patterns[1 - first])
        child.send("exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
