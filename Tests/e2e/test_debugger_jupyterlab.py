"""The Jupyter debugger in JupyterLab in a real (headless) browser, as a user meets it: the bug
icon switches the debugger on for the Lumen kernel, a click in a cell's gutter sets a breakpoint,
the cell stops there, the Variables panel lists the cell's variable with its value and the Call
Stack shows the cell; Continue runs it to its end. Screenshots of each step go to .build/e2e/."""
import os
import re

import pytest
from playwright.sync_api import expect, sync_playwright

from lab_session import SHOTS, cell, open_notebook, serve_lab, wait_idle

CELLS = ["var total = 0\nfor i in 0..<3 {\n    total += i * 10\n}\ntotal"]


@pytest.fixture(scope="module")
def lab():
    yield from serve_lab(CELLS, "debugger.ipynb")


def switch_debugger_on(page):
    """Clicks the bug icon until the debugger is on. JupyterLab drops a click while the notebook is
    not the shell's current widget, or while it checks the kernel again (the button is disabled for
    that moment), and a loaded machine stretches both; a click that starts the debugger leaves the
    button pressed, well within the wait."""
    bug = page.locator(".jp-DebuggerBugButton").first
    for _ in range(5):
        expect(bug).to_be_enabled(timeout=30000)
        cell(page, 0).locator(".jp-InputPrompt").click()  # the notebook has the focus
        bug.click()
        try:
            expect(bug).to_have_attribute("aria-pressed", "true", timeout=15000)
            return
        except AssertionError:
            page.screenshot(path=os.path.join(SHOTS, "debugger-0-not-on.png"))
    raise AssertionError("five clicks on the bug icon did not switch the debugger on")


def test_a_breakpoint_set_in_the_gutter_stops_the_cell_and_shows_its_variables(lab):
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, lab, "debugger.ipynb")
        switch_debugger_on(page)
        # The gutter takes breakpoints once the debugger is on.
        gutter = cell(page, 0).locator(".cm-breakpoint-gutter .cm-gutterElement")
        expect(gutter.nth(3)).to_be_visible(timeout=30000)
        gutter.nth(3).click()  # line 3 (the first element is the gutter's spacer)
        expect(page.locator(".jp-DebuggerBreakpoint")).to_have_count(1, timeout=30000)
        # The debugger's sidebar: JupyterLab may have opened it when the session started (by now it
        # has); its tab toggles it.
        sidebar = page.locator("#jp-debugger-sidebar")
        if not sidebar.is_visible():
            page.locator("[data-id='jp-debugger-sidebar']").click()
        expect(sidebar).to_be_visible(timeout=30000)
        page.screenshot(path=os.path.join(SHOTS, "debugger-1-breakpoint.png"))

        cell(page, 0).locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        frames = page.locator(".jp-DebuggerCallstackFrame")
        expect(frames.first).to_be_visible(timeout=30000)
        expect(page.locator(".jp-DebuggerCallstackFrame-name").first).to_contain_text("Cell In[1]")
        # The loop's variable, with its value, in the frame's locals (the panel's first scope).
        variables = page.locator(".jp-DebuggerVariables-body").first
        expect(variables.locator(".jp-DebuggerVariables-name")).to_have_text("i", timeout=30000)
        expect(variables).to_contain_text(re.compile(r"^\s*i\W*0\s*$"), timeout=30000)
        page.screenshot(path=os.path.join(SHOTS, "debugger-2-stopped.png"))

        # Without the breakpoint, Continue runs the cell to its end.
        page.locator(".jp-DebuggerBreakpoint").first.hover()
        gutter.nth(3).click()
        expect(page.locator(".jp-DebuggerBreakpoint")).to_have_count(0, timeout=30000)
        page.locator("[data-command='debugger:continue']").first.click()
        wait_idle(page)
        expect(cell(page, 0).locator(".jp-OutputArea")).to_contain_text("30", timeout=30000)
        page.screenshot(path=os.path.join(SHOTS, "debugger-3-continued.png"))
        browser.close()
