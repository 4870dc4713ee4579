"""JupyterLab in a real (headless) browser: a load bar redrawn in place, a streaming generate whose
text grows while the cell runs, a table and an SVG chart, the toolbar's stop button
interrupting a long generation, and the look-inside heatmaps (logit lens, attention, a tensor).
Screenshots of each step go to .build/e2e/."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest
from playwright.sync_api import expect, sync_playwright

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHOTS = os.path.join(ROOT, ".build", "e2e")
TOKEN = "lumen-e2e"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def lab():
    binary = os.environ["LUMEN_BIN"]
    models = os.path.join(os.environ.get("LUMEN_TEST_DATA", ""), "models")
    work = tempfile.mkdtemp(prefix="lumen-e2e-")
    subprocess.run([binary, "install", "--prefix", work], check=True, capture_output=True)
    cells = [
        f'let m = load("stories260K")',
        'generate(m, "Once upon a time", maxTokens: 300, temperature: 0.8, seed: 5)',
        'table([["model": "15M", "tok/s": 550], ["model": "110M", "tok/s": 88]])',
        'chart([3, 1, 2], labels: ["a", "b", "c"], title: "bars")',
        # Many long generations: the cell streams for as long as the test needs, at any engine speed.
        'for _ in 0..<1000 { generate(m, "Lily and Ben were", maxTokens: 2000, temperature: 0.8) }',
        '6 * 7',
        'logitLens(m, "Once upon a time")',
        'attentionPatterns(m, "Once upon a time", block: 1, heads: 0..<2)',
        'trace(m, "Once upon a time", keep: ["attn"]).attn[1][0]',
    ]
    notebook = {"cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [], "source": c}
                          for i, c in enumerate(cells)],
                "metadata": {"kernelspec": {"name": "lumen", "display_name": "Lumen", "language": "lumen"}},
                "nbformat": 4, "nbformat_minor": 5}
    with open(os.path.join(work, "e2e.ipynb"), "w") as handle:
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


def output_text(page, index):
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea").inner_text()


def run_cell(page, index):
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def wait_idle(page, timeout=30):
    """Waits until the status bar says the Lumen kernel is idle."""
    page.get_by_text("Lumen | Idle").wait_for(timeout=timeout * 1000)


def test_streaming_rich_output_and_interrupt_in_jupyterlab(lab):
    os.makedirs(SHOTS, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{lab}/lab/tree/e2e.ipynb?token={TOKEN}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60000)
        wait_idle(page, 60)
        page.screenshot(path=os.path.join(SHOTS, "1-opened.png"))

        run_cell(page, 0)
        page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".jp-OutputArea-output").first.wait_for(timeout=30000)
        wait_idle(page)
        # The load bar is stream text whose states start with \r: JupyterLab shows only the last.
        expect(page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".jp-OutputArea")).to_contain_text("100%", timeout=30000)
        loaded = output_text(page, 0)
        assert "loading stories260K" in loaded and "░" not in loaded and loaded.count("loading") == 1, loaded

        run_cell(page, 1)
        wait_idle(page)
        # The text streams as stdout, then the summary line; the browser renders on its own time.
        expect(page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea")).to_contain_text("· length]", timeout=30000)
        page.screenshot(path=os.path.join(SHOTS, "2-generated.png"))

        run_cell(page, 2)
        run_cell(page, 3)
        wait_idle(page)
        assert page.locator(".jp-Notebook .jp-Cell").nth(2).locator("table").count() == 1
        assert page.locator(".jp-Notebook .jp-Cell").nth(3).locator("svg").count() >= 1
        page.screenshot(path=os.path.join(SHOTS, "3-table-and-chart.png"))

        run_cell(page, 4)
        lengths = []
        for _ in range(400):
            lengths.append(len(output_text(page, 4)))
            if len({length for length in lengths if length > 0}) >= 5:
                break
            time.sleep(0.02)
        growing = {length for length in lengths if length > 0}
        assert len(growing) >= 5, f"the text did not grow while the cell ran: {lengths}"
        page.screenshot(path=os.path.join(SHOTS, "4-streaming.png"))
        page.locator("[data-command='notebook:interrupt-kernel']").first.click()
        wait_idle(page)
        expect(page.locator(".jp-Notebook .jp-Cell").nth(4).locator(".jp-OutputArea")).to_contain_text("Interrupted", timeout=30000)
        text = output_text(page, 4)
        page.screenshot(path=os.path.join(SHOTS, "5-interrupted.png"))
        assert "· interrupted]" in text and "Interrupted" in text

        run_cell(page, 5)
        wait_idle(page)
        assert "42" in output_text(page, 5)
        page.screenshot(path=os.path.join(SHOTS, "6-alive.png"))

        # The look-inside views are tables whose cells are shaded by value: heatmaps.
        for index, shot in [(6, "7-logit-lens.png"), (7, "8-attention.png"), (8, "9-tensor.png")]:
            run_cell(page, index)
            wait_idle(page)
            cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
            cell.locator("table").first.wait_for(timeout=30000)
            shaded = cell.locator("td[style*='background: rgba(']")
            assert shaded.count() >= 4, cell.inner_html()[:2000]
            cell.scroll_into_view_if_needed()
            page.screenshot(path=os.path.join(SHOTS, shot))
        assert page.locator(".jp-Notebook .jp-Cell").nth(7).locator("table").count() == 2
        browser.close()
