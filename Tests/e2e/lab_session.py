"""JupyterLab served for the browser tests: a notebook of given cells, the Lumen kernelspec installed
in a prefix of its own, the shared models on LUMEN_MODEL_PATH."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHOTS = os.path.join(ROOT, ".build", "e2e")
TOKEN = "lumen-e2e"

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

def serve_lab(cells, notebook_name):
    """Starts JupyterLab on a notebook `notebook_name` of `cells`; yields its URL, then stops it."""
    binary = os.environ["LUMEN_BIN"]
    models = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models")
    work = tempfile.mkdtemp(prefix="lumen-e2e-")
    subprocess.run([binary, "install", "--prefix", work], check=True, capture_output=True)
    notebook = {"cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [], "source": c}
                          for i, c in enumerate(cells)],
                "metadata": {"kernelspec": {"name": "lumen", "display_name": "Lumen", "language": "lumen"}},
                "nbformat": 4, "nbformat_minor": 5}
    with open(os.path.join(work, notebook_name), "w") as handle:
        json.dump(notebook, handle)
    port = free_port()
    env = dict(os.environ, JUPYTER_PATH=os.path.join(work, "share", "jupyter"), LUMEN_MODEL_PATH=models)
    server = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
                               f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={work}", "--allow-root"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait(timeout=20)

def cell(page, index):
    return page.locator(".jp-Notebook .jp-Cell").nth(index)

def output_text(page, index):
    return cell(page, index).locator(".jp-OutputArea").inner_text()

def run_cell(page, index):
    cell(page, index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")

def wait_idle(page, timeout=30):
    """Waits until the status bar says the Lumen kernel is idle."""
    page.get_by_text("Lumen | Idle").wait_for(timeout=timeout * 1000)

def open_notebook(playwright, url, notebook_name):
    """A headless Chromium page on the notebook, its kernel idle."""
    os.makedirs(SHOTS, exist_ok=True)
    browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{url}/lab/tree/{notebook_name}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60000)
    wait_idle(page, 60)
    return browser, page
