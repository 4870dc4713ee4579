"""Widgets in JupyterLab with ipywidgets' front end (jupyterlab_widgets), in a real headless
browser: a slider moved with the keyboard re-runs an interact form, a Stop button ends one
streaming generation while the cell goes on, and a dropdown chooses between two models.
Screenshots go to .build/e2e/widgets-*.png."""
import os

import pytest
from playwright.sync_api import Error as PlaywrightError, expect, sync_playwright

from lab_session import SHOTS, cell, open_notebook, output_text, run_cell, serve_lab, wait_idle

CELLS = [
    'let small = load("stories260K")\nlet smol = load("smollm2")',
    'interact({ n in print("n is \\(n)") }, n: 5)',
    # Stories until one is stopped by its button (a story may end before a click reaches it).
    'for _ in 0..<100 {\n  let g = conversation(smol).say("Tell me a long story about a dragon.", maxTokens: 4000, stopButton: true)\n'
    '  print("after: \\(g.finishReason)")\n  if g.finishReason == "interrupted" { break }\n}\nprint("the cell went on")',
    'interact({ model in print("chosen: \\(model.name)") }, model: [small, smol])',
]


@pytest.fixture(scope="module")
def lab():
    yield from serve_lab(CELLS, "widgets.ipynb")


def test_widgets_in_jupyterlab(lab):
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, lab, "widgets.ipynb")
        run_cell(page, 0)
        wait_idle(page, 120)
        expect(cell(page, 0).locator(".jp-OutputArea")).to_contain_text("100%", timeout=60000)

        # A slider moved with the keyboard: its form re-runs and the output below it follows.
        run_cell(page, 1)
        form = cell(page, 1)
        output = form.locator(".widget-output")
        expect(output).to_contain_text("n is 5", timeout=30000)
        form.locator(".noUi-handle").first.focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        expect(output).to_contain_text("n is 7", timeout=30000)
        assert "n is 5" not in output.inner_text()
        form.scroll_into_view_if_needed()
        page.screenshot(path=os.path.join(SHOTS, "widgets-1-slider.png"))

        # A Stop button beside a streaming generation ends it alone: the cell goes on.
        run_cell(page, 2)
        streaming = cell(page, 2)
        area = streaming.locator(".jp-OutputArea")
        streaming.get_by_role("button", name="Stop").first.wait_for(timeout=60000)
        page.screenshot(path=os.path.join(SHOTS, "widgets-2-streaming.png"))
        for _ in range(600):
            if "after: interrupted" in area.inner_text():
                break
            buttons = streaming.get_by_role("button", name="Stop")
            if buttons.count():
                try:
                    buttons.first.click(timeout=2000)
                except PlaywrightError:
                    pass  # the story ended, and its button went, before the click
            else:
                page.wait_for_timeout(50)
        expect(area).to_contain_text("the cell went on", timeout=60000)
        wait_idle(page)
        text = output_text(page, 2)
        assert "· interrupted]" in text and "after: interrupted" in text, text
        assert "Interrupted" not in text, "only the generation was stopped, not the cell"
        assert streaming.get_by_role("button", name="Stop").count() == 0
        page.screenshot(path=os.path.join(SHOTS, "widgets-3-stopped.png"))

        # A dropdown of two models: choosing the second re-runs the form with it.
        run_cell(page, 3)
        chooser = cell(page, 3)
        expect(chooser.locator(".widget-output")).to_contain_text("chosen: stories260K", timeout=30000)
        select = chooser.locator(".widget-dropdown select")
        labels = select.locator("option").all_inner_texts()
        assert len(labels) == 2, labels
        select.select_option(index=1)
        expect(chooser.locator(".widget-output")).to_contain_text("chosen: SmolLM2", timeout=30000)
        chooser.scroll_into_view_if_needed()
        page.screenshot(path=os.path.join(SHOTS, "widgets-4-dropdown.png"))
        browser.close()
