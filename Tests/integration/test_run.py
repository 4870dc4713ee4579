"""`lumen run` on notebooks, as CI uses it: exit codes, outputs, parameters, timeouts, SIGINT."""
import json
import os
import signal
import subprocess

from conftest import lumen_bin


def notebook(path, sources, tags=None, minor=5):
    cells = []
    for index, source in enumerate(sources):
        if source.startswith("# "):
            cells.append({"cell_type": "markdown", "id": f"m{index}", "metadata": {"custom": True}, "source": [source]})
            continue
        metadata = {"tags": tags[index]} if tags and tags.get(index) else {}
        cells.append({"cell_type": "code", "id": f"c{index}", "metadata": metadata, "execution_count": None, "outputs": [], "source": source})
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "lumen"}, "keep": [1, 2]},
                                "nbformat": 4, "nbformat_minor": minor}))
    return path


def run(*arguments, env=None):
    return subprocess.run([lumen_bin(), "run", *map(str, arguments)], capture_output=True, text=True, env=env)


def code_outputs(path):
    return [cell.get("outputs") for cell in json.load(open(path))["cells"] if cell["cell_type"] == "code"]


def test_a_failing_third_cell_exits_1_names_it_and_keeps_cells_one_to_three(tmp_path):
    source = notebook(tmp_path / "fails.ipynb", ['print("one")', 'print("two")\nprint("two again")', "undefined_name", 'print("four")'])
    result = run(source, "-o", tmp_path / "out.ipynb")
    assert result.returncode == 1
    assert "cell 3 failed: NameError" in result.stderr
    outputs = code_outputs(tmp_path / "out.ipynb")
    assert outputs[0] == [{"name": "stdout", "output_type": "stream", "text": ["one\n"]}]
    assert outputs[1] == [{"name": "stdout", "output_type": "stream", "text": ["two\n", "two again\n"]}]
    assert outputs[2][0]["output_type"] == "error" and outputs[2][0]["ename"] == "NameError"
    assert outputs[3] == []
    kept = run(source, "-o", tmp_path / "all.ipynb", "--allow-errors")
    assert kept.returncode == 1
    assert code_outputs(tmp_path / "all.ipynb")[3][0]["text"] == ["four\n"]


def test_results_metadata_and_formatting_are_kept(tmp_path):
    source = notebook(tmp_path / "ok.ipynb", ["# Title", "6 * 7", 'display(html: "<b>x</b>", id: "d")\nupdate(html("<i>y</i>"), id: "d")'])
    assert run(source, "--inplace", "--quiet").returncode == 0
    first = source.read_text()
    document = json.loads(first)
    assert document["metadata"]["keep"] == [1, 2] and document["cells"][0]["metadata"] == {"custom": True}
    assert document["cells"][1]["outputs"] == [{"data": {"text/plain": ["42"]}, "execution_count": 1, "metadata": {}, "output_type": "execute_result"}]
    assert document["cells"][2]["outputs"][0]["data"]["text/html"] == ["<i>y</i>"]
    assert first == json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    assert run(source, "--inplace", "--quiet").returncode == 0
    assert source.read_text() == first


def test_parameters_are_injected_after_the_parameters_cell(tmp_path):
    source = notebook(tmp_path / "p.ipynb", ['let count = 1\nlet name = "x"', 'print(count * 2, name)'], tags={0: ["parameters"]})
    result = run(source, "-o", tmp_path / "out.ipynb", "--param", "count=21", "--param", "name=Ada Lovelace")
    assert result.returncode == 0, result.stderr
    cells = json.load(open(tmp_path / "out.ipynb"))["cells"]
    assert cells[1]["metadata"]["tags"] == ["injected-parameters"]
    assert "".join(cells[1]["source"]) == 'let count = 21\nlet name = "Ada Lovelace"'
    assert cells[2]["outputs"][0]["text"] == ["42 Ada Lovelace\n"]


def test_parameters_without_a_parameters_cell_warn_and_go_first(tmp_path):
    source = notebook(tmp_path / "p.ipynb", ['print(count * 2)'])
    result = run(source, "-o", tmp_path / "out.ipynb", "--param", "count=21")
    assert result.returncode == 0 and "has no cell tagged 'parameters'" in result.stderr, result.stderr
    cells = json.load(open(tmp_path / "out.ipynb"))["cells"]
    assert cells[0]["metadata"]["tags"] == ["injected-parameters"] and cells[1]["outputs"][0]["text"] == ["42\n"]
    tagged = notebook(tmp_path / "t.ipynb", ['let count = 1', 'print(count)'], tags={0: ["parameters"]})
    assert "warning" not in run(tagged, "-o", tmp_path / "t.out.ipynb", "--param", "count=2").stderr


def test_bad_notebooks_exit_2_naming_the_problem(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "1", "metadata": {}, "outputs": []},
                                         {"cell_type": "picture", "source": "", "metadata": {}}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    result = run(bad)
    assert result.returncode == 2 and "cell 1: cell_type must be" in result.stderr
    (tmp_path / "junk.ipynb").write_text("{not json")
    assert run(tmp_path / "junk.ipynb").returncode == 2
    assert run(tmp_path / "missing.ipynb").returncode == 2


def test_cell_timeout_cancels_the_cell(tmp_path):
    source = notebook(tmp_path / "slow.ipynb", ['print("start")', "sleep(30)", 'print("not reached")'])
    result = run(source, "-o", tmp_path / "out.ipynb", "--cell-timeout", "0.3")
    assert result.returncode == 1
    outputs = code_outputs(tmp_path / "out.ipynb")
    assert outputs[1][0]["ename"] == "TimeoutError" and outputs[2] == []


def test_a_run_timeout_is_a_failure_reported_as_a_timeout(tmp_path):
    source = notebook(tmp_path / "slow.ipynb", ["# Slow", 'print("start")', "sleep(30)", 'print("not reached")'])
    result = run(source, "-o", tmp_path / "out.ipynb", "--timeout", "1.5")
    assert result.returncode == 1, result.stderr
    assert "run timed out after 1.5 s in cell 3" in result.stderr
    assert "interrupted" not in result.stderr
    outputs = code_outputs(tmp_path / "out.ipynb")
    assert outputs[0][0]["text"] == ["start\n"] and outputs[2] == []


def test_usage_errors_exit_2_with_the_usage(tmp_path):
    source = notebook(tmp_path / "nb.ipynb", ['print("ran")'])
    for arguments in [(source, "-o", tmp_path / "out.ipynb", "--inplace"), (source, "--bogus"), (source, "-o", source),
                      (source, "--param", "novalue")]:
        result = run(*arguments)
        assert result.returncode == 2, (arguments, result.returncode, result.stderr)
        assert "Usage: lumen run" in result.stderr and "ran" not in result.stdout


def test_sigint_during_a_long_generation_exits_130_and_keeps_the_partial_text(tmp_path):
    model = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
    source = notebook(tmp_path / "long.ipynb", [f'let m = load("{model}")', 'generate(m, "Once upon a time", maxTokens: 100000000, temperature: 0.8)'])
    process = subprocess.Popen([lumen_bin(), "run", str(source), "-o", str(tmp_path / "out.ipynb")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    echoed = b""
    while b"100%\n" not in echoed:
        chunk = process.stderr.read1(256)
        assert chunk, "the run ended before generating"
        echoed += chunk
    while len(echoed.split(b"100%\n", 1)[-1]) < 80:
        echoed += process.stderr.read1(256)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 130, stderr.decode()
    outputs = code_outputs(tmp_path / "out.ipynb")
    text = "".join("".join(output["text"]) for output in outputs[1] if output["output_type"] == "stream")
    footer = "".join(next(output for output in outputs[1] if output["output_type"] == "display_data")["data"]["text/plain"])
    assert footer.endswith("· interrupted]") and len(text) > 40, outputs[1]


def test_output_onto_the_notebook_itself_is_refused_without_inplace(tmp_path):
    source = notebook(tmp_path / "self.ipynb", ['print("ran")'])
    before = source.read_bytes()
    os.symlink(source, tmp_path / "link.ipynb")
    for target in [source, tmp_path / "." / "self.ipynb", tmp_path / "link.ipynb"]:
        result = run(source, "-o", target)
        assert result.returncode == 2 and "is the notebook being run" in result.stderr and "--inplace" in result.stderr
        assert "ran" not in result.stdout
    assert source.read_bytes() == before


def test_an_output_directory_that_does_not_exist_is_named_before_any_cell_runs(tmp_path):
    source = notebook(tmp_path / "nb.ipynb", ['print("ran")'])
    result = run(source, "-o", tmp_path / "missing" / "out.ipynb")
    assert result.returncode != 0
    assert f"directory {tmp_path / 'missing'} does not exist" in result.stderr
    assert "ran" not in result.stdout and ".tmp" not in result.stderr


def test_without_a_terminal_each_progress_bar_is_one_line_when_it_finishes(tmp_path):
    # A CI log: the load and quantize bars each print their finished state once, not every state.
    model = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models", "stories260K.gguf")
    source = notebook(tmp_path / "bars.ipynb", [f'let m = load("{model}")',
                                                 f'let q = quantize(m, to: "Q8_0", path: "{tmp_path}/q.gguf")',
                                                 'perplexity(q, "Once upon a time there was a girl. She liked to play.", context: 4)'])
    result = run(source, "-o", tmp_path / "out.ipynb")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert [line for line in lines if "loading" in line] == [f"loading {model} " + "█" * 20 + " 100%"], result.stderr
    quantized = [line for line in lines if "Q8_0" in line]
    assert len(quantized) == 1 and quantized[0].startswith("stories260K → Q8_0: 1.19 MB → 0.38 MB"), result.stderr
    assert len([line for line in lines if "perplexity:" in line]) == 1, result.stderr
    assert "\r" not in result.stderr
    # The notebook keeps each bar as a Jupyter kernel sends it (stream text whose states start
    # with \r), so nbclient's notebook and lumen run's agree.
    outputs = code_outputs(tmp_path / "out.ipynb")
    quantize = "".join(outputs[1][0]["text"])
    assert outputs[1][0]["output_type"] == "stream" and quantize.startswith("\rquantizing stories260K to Q8_0")
    assert quantize.split("\r")[-1].startswith("stories260K → Q8_0") and quantize.endswith("\n")
