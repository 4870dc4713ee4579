"""Jupyter's own conformance suite (jupyter_kernel_test) with every attribute set."""
import json
import os
import subprocess
import tempfile
import unittest

import jupyter_kernel_test as jkt

from conftest import lumen_bin


class LumenKernelTests(jkt.KernelTests):
    kernel_name = "lumen"
    language_name = "lumen"
    file_extension = ".lumen"

    code_hello_world = 'print("hello, world")'
    code_stderr = 'eprint("a warning")'
    completion_samples = [
        {"text": "pri", "matches": {"print"}},
        {"text": '"hi".upp', "matches": {"uppercased"}},
        {"text": "[1, 2].co", "matches": {"contains", "count"}},
    ]
    complete_code_samples = ["1 + 1", 'print("hello")', "func twice(x) { return 2 * x }", "for i in 0..<3 {\n print(i)\n}"]
    incomplete_code_samples = ['print("a",', "func f(x) {", 'let story = """\nonce', "let total = 1 +"]
    invalid_code_samples = ["let = 3", "print(1))", "1 +* 2"]
    code_page_something = "print?"
    code_generate_error = "this_name_is_undefined"
    code_execute_result = [
        {"code": "6 * 7", "result": "42"},
        {"code": 'html("<b>bold</b>")', "mime": "text/html", "result": "<b>bold</b>"},
    ]
    code_display_data = [
        {"code": 'display(html: "<b>hi</b>")', "mime": "text/html"},
        {"code": "display(chart([1, 3, 2]))", "mime": "image/svg+xml"},
    ]
    code_history_pattern = "6 *"
    supported_history_operations = ("tail", "range", "search")
    code_inspect_sample = "sleep"
    code_clear_output = "clear()"

    @classmethod
    def setUpClass(cls):
        cls.prefix = tempfile.TemporaryDirectory()
        subprocess.run([lumen_bin(), "install", "--prefix", cls.prefix.name], check=True, capture_output=True)
        os.environ["JUPYTER_PATH"] = os.path.join(cls.prefix.name, "share", "jupyter")
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.prefix.cleanup()


if __name__ == "__main__":
    unittest.main()
