"""notebooks/ run through Jupyter's own runner (nbclient, as nbconvert --execute uses it) and
through `lumen run`: every code cell runs without error as on a fresh clone (only the models `make
models` fetches, no ../shared and no LUMEN_MODEL_PATH; remote.ipynb against llama.cpp's
OpenAI-compatible server, llama-cpp-python; adapters.ipynb on the adapters `make adapters`
writes), and both give the same outputs, up to ids, execution
counts and timings."""
import json
import os
import re
import subprocess

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import lumen_bin
from servers import start_llama_server

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NOTEBOOKS = os.path.join(REPOSITORY, "notebooks")
NAMES = sorted(n for n in os.listdir(NOTEBOOKS) if n.endswith(".ipynb") and not n.endswith(".out.ipynb"))
# Widgets are live where the front end has comms (nbclient's kernel) and text in lumen run, where
# interact runs its function once: these notebooks run in both, their outputs are not compared.
WIDGET_NOTEBOOKS = {"interactive.ipynb"}
# A notebook's cells are experiments, not probes: inside.ipynb's activation patching (96 traces)
# takes 5 s in the debug build on an idle machine, several times that beside the other tests. The
# limit only tells a cell that never ends from a slow one.
CELL_TIMEOUT = 300


def text(value):
    return "".join(value) if isinstance(value, list) else value


def normalized(outputs):
    """Output types, MIME types and text with numbers (and the spacing they cause) masked;
    consecutive streams merged."""
    result = []
    for output in outputs:
        kind = output["output_type"]
        if kind == "stream" and result and result[-1][0] == "stream" and result[-1][1] == output["name"]:
            result[-1] = ("stream", output["name"], result[-1][2] + text(output["text"]))
            continue
        if kind == "stream":
            result.append(("stream", output["name"], text(output["text"])))
        elif kind == "error":
            result.append(("error", output["ename"], output["evalue"]))
        else:
            data = output["data"]
            # Timings vary: mask numbers, and the column widths and rules that follow their width.
            plain = re.sub(r"\d+(\.\d+)?", "N", text(data.get("text/plain", "")))
            plain = re.sub(r"-+", "-", re.sub(r" +", " ", plain))
            result.append((kind, tuple(sorted(data)), plain))
    return result


@pytest.mark.parametrize("name", NAMES)
def test_notebooks_run_alike_in_nbclient_and_lumen_run(kernelspecs, tmp_path, name):
    source = os.path.join(NOTEBOOKS, name)
    for cell in nbformat.read(source, as_version=4).cells:
        assert "stories260K" not in cell.source and "../shared" not in cell.source, f"{name} needs ../shared"
    ours = tmp_path / "ours.ipynb"
    # As on a fresh clone: neither the shared folder nor a model path.
    env = {key: value for key, value in os.environ.items() if key not in ("LUMEN_TEST_DATA", "LUMEN_MODEL_PATH")}
    # remote.ipynb runs against llama.cpp's server, its URL set in the parameters cell of a copy;
    # adapters.ipynb on the adapters `make adapters` writes, their folder set the same way;
    # features.ipynb on the tests' own SAE, its path made absolute.
    server = start_llama_server() if name == "remote.ipynb" else None
    try:
        parameters = {"remote.ipynb": lambda: f'let url = "{server.url}"',
                      "adapters.ipynb": lambda: f'let adapters = "{os.path.abspath(os.environ.get("LUMEN_ADAPTERS", ".build/adapters"))}"',
                      "features.ipynb": lambda: f'let model = "smollm2"\nlet sae = "{os.path.join(REPOSITORY, "Tests", "reference", "sae", "saelens-jumprelu-bf16")}"\nlet feature = 0'}
        if name in parameters:
            notebook = nbformat.read(source, as_version=4)
            next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])).source = parameters[name]()
            source = str(tmp_path / name)
            nbformat.write(notebook, source)
        result = subprocess.run([lumen_bin(), "run", source, "-o", str(ours), "--quiet"], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        notebook = nbformat.read(source, as_version=4)
        # A cell that fails raises CellExecutionError, naming it.
        NotebookClient(notebook, kernel_name="lumen", timeout=CELL_TIMEOUT).execute(env=env, cwd=str(tmp_path))
    finally:
        if server:
            server.stop()
    # A background job's output arrives after its cell has finished: nbclient records a cell's
    # messages only while it runs, lumen run keeps them, so cells that spawn jobs are left out.
    def comparable(cells):
        return [normalized(cell.get("outputs", [])) for cell in cells
                if cell["cell_type"] == "code" and "spawn" not in "".join(cell["source"])]
    if name in WIDGET_NOTEBOOKS:
        return
    assert comparable(json.load(open(ours))["cells"]) == comparable(notebook.cells)


def test_jupyter_execute_and_papermill_run_a_notebook(kernelspecs, tmp_path):
    os.environ["LUMEN_MODEL_PATH"] = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models")
    source = os.path.join(NOTEBOOKS, "looking-inside.ipynb")
    converted = subprocess.run([os.sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                                "--ExecutePreprocessor.kernel_name=lumen", "--output-dir", str(tmp_path), source], capture_output=True, text=True)
    assert converted.returncode == 0, converted.stderr
    papermill = subprocess.run([os.sys.executable, "-m", "papermill", "-k", "lumen", source, str(tmp_path / "pm.ipynb")],
                               capture_output=True, text=True)
    assert papermill.returncode == 0, papermill.stderr
