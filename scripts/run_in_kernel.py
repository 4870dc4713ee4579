"""Runs a .lumen file as one cell through the installed `lumen` kernelspec with jupyter_client,
printing what a front end would show. Exits non-zero when the cell fails."""
import sys

from jupyter_client.manager import start_new_kernel


def main(path: str) -> int:
    code = open(path, encoding="utf-8").read()
    manager, client = start_new_kernel(kernel_name="lumen")
    status = "error"
    try:
        def show(message):
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                (sys.stdout if content["name"] == "stdout" else sys.stderr).write(content["text"])
            elif kind in ("display_data", "execute_result"):
                print(content["data"].get("text/plain", ""))
            elif kind == "error":
                print("\n".join(content["traceback"]), file=sys.stderr)

        reply = client.execute_interactive(code, output_hook=show, timeout=60)
        status = reply["content"]["status"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel()
    return 0 if status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
