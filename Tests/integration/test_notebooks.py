"""Every code cell of notebooks/ runs without error through the kernel as on a fresh clone: only the
models `make models` fetches, no ../shared and no LUMEN_MODEL_PATH; remote.ipynb against llama.cpp's
OpenAI-compatible server (llama-cpp-python)."""
import json
import os

import pytest

from conftest import run, start_kernel
from servers import start_llama_server

NOTEBOOKS = os.path.join(os.path.dirname(__file__), "..", "..", "notebooks")
# A notebook's cells are experiments, not probes: inside.ipynb's activation patching (96 traces)
# takes 5 s in the debug build on an idle machine, several times that beside the other tests. The
# limit only tells a cell that never ends from a slow one.
CELL_TIMEOUT = 300


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(NOTEBOOKS) if n.endswith(".ipynb") and not n.endswith(".out.ipynb")))
def test_notebook_runs(kernelspecs, name, tmp_path):
    notebook = json.load(open(os.path.join(NOTEBOOKS, name)))
    for cell in notebook["cells"]:
        assert "stories260K" not in "".join(cell["source"]) and "../shared" not in "".join(cell["source"]), f"{name} needs ../shared"
    server = start_llama_server() if name == "remote.ipynb" else None
    env = {key: value for key, value in os.environ.items() if key not in ("LUMEN_TEST_DATA", "LUMEN_MODEL_PATH")}
    manager, client = start_kernel("lumen", env=env, cwd=str(tmp_path))
    try:
        for index, cell in enumerate(notebook["cells"]):
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            if server and "parameters" in cell["metadata"].get("tags", []):
                source = f'let url = "{server.url}"'
            reply, _ = run(client, source, timeout=CELL_TIMEOUT)
            assert reply["content"]["status"] == "ok", f"{name} cell {index}: {reply['content'].get('evalue')}"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        if server:
            server.stop()
