"""JupyterLab in a real (headless) browser: a load bar redrawn in place, a streaming generate whose
text grows while the cell runs, a table and an SVG chart, the toolbar's stop button
interrupting a long generation, and the look-inside heatmaps (logit lens, attention, a tensor).
Screenshots of each step go to .build/e2e/."""
import os
import time

import pytest
from playwright.sync_api import expect, sync_playwright

from lab_session import SHOTS, open_notebook, output_text, run_cell, serve_lab, wait_idle

CELLS = [
    'let m = load("stories260K")',
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


@pytest.fixture(scope="module")
def lab():
    yield from serve_lab(CELLS, "e2e.ipynb")


def test_streaming_rich_output_and_interrupt_in_jupyterlab(lab):
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, lab, "e2e.ipynb")
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
