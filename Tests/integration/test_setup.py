"""The README's two set-up commands: `make run` needs no browser (only `make test` installs one)."""
import os
import subprocess

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_make_run_installs_no_browser_and_make_test_does():
    def planned(target):
        return subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "chromium" not in planned("run")
    assert "chromium" in planned("test") and "cmake" in planned("test")
