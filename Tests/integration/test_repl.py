"""`lumen repl` driven as a person would: through a pseudo-terminal, and through pipes and files."""
import os
import subprocess
import tempfile

import pexpect

from conftest import lumen_bin

PROMPT = r"In \[(\d+)\]: "


def spawn(data_home=None):
    """The REPL on a pseudo-terminal, its history in a folder of its own."""
    env = dict(os.environ, TERM="dumb", XDG_DATA_HOME=data_home or tempfile.mkdtemp(prefix="lumen-history-"))
    return pexpect.spawn(lumen_bin(), ["repl"], env=env, encoding="utf-8", timeout=20)


def test_multiline_input_and_state():
    repl = spawn()
    try:
        repl.expect(PROMPT)
        # Enter on an incomplete cell starts a new line of the same cell (edited as one unit).
        repl.sendline("func twice(x) {")
        repl.sendline("return 2 * x")
        repl.sendline("}")
        repl.expect(PROMPT)
        assert "Error" not in repl.before, repl.before
        repl.sendline("twice(21)")
        repl.expect(r"Out\[\d+\]: 42")
        # A multi-line value starts on its own line, so its columns line up.
        model = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
        repl.sendline(f'tokenize(load("{model}"), "Hi")')
        repl.expect(r"Out\[\d+\]:\r\nindex +id +piece")
        repl.expect(PROMPT)
        repl.sendline('print("a",')
        repl.sendline('"b")')
        repl.expect("a b")
        repl.expect(PROMPT)
        repl.sendeof()
        repl.expect(pexpect.EOF)
    finally:
        repl.close(force=True)


def test_ctrl_c_interrupts_a_running_cell_and_keeps_state():
    repl = spawn()
    try:
        repl.expect(PROMPT)
        repl.sendline("let kept = 7")
        repl.expect(PROMPT)
        repl.sendline('print("sleeping"); sleep(30)')
        repl.expect("\r\nsleeping\r\n")
        repl.sendintr()
        repl.expect("Interrupted")
        repl.expect(PROMPT)
        repl.sendline("kept * 6")
        repl.expect(r"Out\[\d+\]: 42")
    finally:
        repl.close(force=True)


def test_ctrl_c_twice_at_an_empty_prompt_quits():
    repl = spawn()
    try:
        repl.expect(PROMPT)
        repl.sendintr()
        repl.expect("press Ctrl-C again")
        repl.expect(PROMPT)
        repl.sendintr()
        repl.expect(pexpect.EOF)
    finally:
        repl.close(force=True)
    assert repl.exitstatus == 0


def test_misspelt_names_and_labels_get_a_hint():
    result = subprocess.run([lumen_bin(), "repl", "--keep-going"], input='prnt(1)\nprint(1, seperator: "-")\n', capture_output=True, text=True)
    assert "NameError: 'prnt' is not defined (did you mean 'print'?)" in result.stderr
    assert "TypeError: print() has no argument labelled 'seperator:' (did you mean 'separator:'?)" in result.stderr


def test_piped_script_exit_status(tmp_path):
    ok = subprocess.run([lumen_bin(), "repl"], input='let x = 20\nprint(x + 1)\n', capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout == "21\n"
    failing = subprocess.run([lumen_bin(), "repl"], input='print(1)\nnope\nprint(2)\n', capture_output=True, text=True)
    assert failing.returncode == 1 and failing.stdout == "1\n"
    assert "NameError: 'nope' is not defined" in failing.stderr
    keep_going = subprocess.run([lumen_bin(), "repl", "--keep-going"], input='nope\nprint(2)\n', capture_output=True, text=True)
    assert keep_going.returncode == 1 and keep_going.stdout == "2\n"
    script = tmp_path / "script.lumen"
    script.write_text('for i in 0..<3 {\n  print(i)\n}\n')
    from_file = subprocess.run([lumen_bin(), "repl", str(script)], capture_output=True, text=True)
    assert from_file.returncode == 0 and from_file.stdout == "0\n1\n2\n"


def test_scripts_print_only_what_they_print_and_take_multiline_strings(tmp_path):
    script = 'let s = """\n  two\n  lines\n  """\n1 + 1\ns\nprint(s)\n'
    piped = subprocess.run([lumen_bin(), "repl"], input=script, capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stdout == "two\nlines\n", piped.stdout + piped.stderr
    path = tmp_path / "strings.lumen"
    path.write_text(script)
    from_file = subprocess.run([lumen_bin(), "repl", str(path)], capture_output=True, text=True)
    assert from_file.returncode == 0 and from_file.stdout == "two\nlines\n", from_file.stdout + from_file.stderr


def test_examples_run_as_on_a_fresh_clone(tmp_path):
    # Only the models `make models` fetches: no ../shared, no LUMEN_MODEL_PATH, another folder.
    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    env = {key: value for key, value in os.environ.items() if key not in ("LUMEN_TEST_DATA", "LUMEN_MODEL_PATH")}
    for name in sorted(os.listdir(examples)):
        if name.endswith(".lumen"):
            result = subprocess.run([lumen_bin(), "repl", os.path.abspath(os.path.join(examples, name))], capture_output=True, text=True,
                                    env=env, cwd=tmp_path)
            assert result.returncode == 0, f"{name}: {result.stderr}"


def test_a_script_error_names_the_file_and_its_line(tmp_path):
    script = tmp_path / "script.lumen"
    script.write_text('let a = 1\n\n// a comment\nfor i in 0..<2 {\n  print(i)\n}\nlet b = missing + a\nprint("never")\n')
    result = subprocess.run([lumen_bin(), "repl", str(script)], capture_output=True, text=True)
    assert result.returncode == 1 and result.stdout == "0\n1\n"
    assert f'  File "{script}", line 7\n    let b = missing + a\n            ^\nNameError' in result.stderr, result.stderr
    assert "Cell In" not in result.stderr
    piped = subprocess.run([lumen_bin(), "repl"], input="print(1)\n\nnope(\n  2)\n", capture_output=True, text=True)
    assert piped.returncode == 1 and '  File "<stdin>", line 3' in piped.stderr, piped.stderr


def test_help_without_an_argument_lists_the_built_ins():
    result = subprocess.run([lumen_bin(), "repl"], input="help()\n", capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    names = [line.split()[0] for line in lines[4:] if line.strip()]
    assert {"load", "generate", "conversation", "help", "print", "perplexity"} <= set(names), result.stdout
    assert names == sorted(names) and len(names) == len(set(names))


def test_input_prompts_in_the_terminal():
    repl = spawn()
    try:
        repl.expect(PROMPT)
        repl.sendline('let who = input("name? ")')
        repl.expect("name\\? ")
        repl.sendline("Ada")
        repl.expect(PROMPT)
        repl.sendline('"hello \\(who)"')
        repl.expect(r'Out\[\d+\]: "hello Ada"')
    finally:
        repl.close(force=True)


def test_changing_displays_redraw_in_place_on_a_terminal_and_show_their_final_state_in_a_pipe():
    model = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
    cells = f'let m = load("{model}")\nlet b = batch(m, ["A", "B"], maxTokens: 4, temperature: 0)\nm.generate("Once", maxTokens: 6, temperature: 0)\n'
    piped = subprocess.run([lumen_bin(), "repl"], input=cells, capture_output=True, text=True, env=dict(os.environ, LUMEN_LOG="0"))
    assert piped.returncode == 0, piped.stderr
    # The table once; the progress bars once each, finished, on stderr (stdout is the script's
    # output); the generation streams as text.
    assert piped.stdout.count("prompt  text") == 1 and "2/2" not in piped.stdout and "loading" not in piped.stdout, piped.stdout
    assert piped.stderr.count("2/2") == 1 and piped.stderr.count("loading") == 1 and "0/2" not in piped.stderr, piped.stderr
    assert " upon a time" in piped.stdout and "\x1b[" not in piped.stdout
    repl = spawn()
    try:
        repl.expect(PROMPT)
        repl.sendline(cells.splitlines()[0])
        repl.expect(PROMPT)
        repl.sendline(cells.splitlines()[1])
        repl.expect(PROMPT)
        batch_output = repl.before
    finally:
        repl.close(force=True)
    # On a terminal the progress bar is redrawn where it stands (back to its line's start, clear
    # to the end of the screen, draw again); the table follows once.
    assert "\r\x1b[J1/2" in batch_output and "\r\x1b[J2/2" in batch_output, repr(batch_output)
    assert batch_output.count("prompt  text") == 1 and batch_output.index("2/2") < batch_output.index("prompt  text")


def test_a_generation_timeout_returns_the_partial_text_marked_timeout():
    from servers import SMOLLM2
    # Greedy: SmolLM2 then writes over a thousand tokens without its end token, so only the
    # timeout can end the generation (a sampled one sometimes ended within the half second).
    result = subprocess.run([lumen_bin(), "repl"], capture_output=True, text=True, timeout=300,
                            input=f'let m = load("{SMOLLM2}")\n'
                                  'let g = generate(m, "Once upon a time", maxTokens: 100000, temperature: 0, timeout: 0.5)\n'
                                  'print(g.finishReason, g.tokens.count > 0, g.text.count > 0)\n')
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "timeout true true"
    assert "· timeout]" in result.stdout
