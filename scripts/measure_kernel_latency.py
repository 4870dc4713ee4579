"""Measures the kernel with jupyter_client: start-up time to the first kernel_info_reply, the
round trip of a trivial execute, and interrupt latency during `sleep(30)`, in message and signal
interrupt modes; and what the debugger costs a cell without breakpoints (a 200,000-iteration loop
and, with --model, a 64-token generation), debugger off and started in alternating rounds. Prints
a table and, with --json, the raw figures."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from jupyter_client.manager import KernelManager


def install_specs(binary: str, prefix: str) -> None:
    subprocess.run([binary, "install", "--prefix", prefix], check=True, capture_output=True)
    kernels = os.path.join(prefix, "share", "jupyter", "kernels")
    spec = json.load(open(os.path.join(kernels, "lumen", "kernel.json")))
    spec["interrupt_mode"] = "signal"
    os.makedirs(os.path.join(kernels, "lumen-signal"))
    json.dump(spec, open(os.path.join(kernels, "lumen-signal", "kernel.json"), "w"))
    os.environ["JUPYTER_PATH"] = os.path.join(prefix, "share", "jupyter")


def reply_to(client, msg_id, channel="shell"):
    get = client.get_shell_msg if channel == "shell" else client.control_channel.get_msg
    while True:
        message = get(timeout=30)
        if message["parent_header"].get("msg_id") == msg_id:
            return message


def startup_seconds(name: str) -> float:
    started = time.perf_counter()
    manager = KernelManager(kernel_name=name)
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    while True:
        msg_id = client.kernel_info()
        try:
            reply_to(client, msg_id)
            break
        except Exception:
            continue
    elapsed = time.perf_counter() - started
    client.stop_channels()
    manager.shutdown_kernel(now=True)
    return elapsed


def drain_iopub_until_idle(client, msg_id):
    while True:
        message = client.get_iopub_msg(timeout=30)
        if (message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "status"
                and message["content"]["execution_state"] == "idle"):
            return


def round_trips(client, count: int) -> list:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        msg_id = client.execute("1")
        reply_to(client, msg_id)
        times.append(time.perf_counter() - started)
        drain_iopub_until_idle(client, msg_id)
    return times


def interrupt_latencies(manager, client, count: int) -> list:
    times = []
    for _ in range(count):
        msg_id = client.execute("sleep(30)")
        while True:
            message = client.get_iopub_msg(timeout=30)
            if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "execute_input":
                break
        started = time.perf_counter()
        manager.interrupt_kernel()
        reply_to(client, msg_id)
        times.append(time.perf_counter() - started)
        drain_iopub_until_idle(client, msg_id)
    return times


def debug_request(client, command, arguments=None):
    message = client.session.msg("debug_request", {"type": "request", "seq": 1, "command": command, "arguments": arguments or {}})
    client.control_channel.send(message)
    return reply_to(client, message["header"]["msg_id"], channel="control")["content"]


def timed_cell(client, code):
    started = time.perf_counter()
    msg_id = client.execute(code)
    reply = reply_to(client, msg_id)
    elapsed = time.perf_counter() - started
    assert reply["content"]["status"] == "ok", reply["content"]
    drain_iopub_until_idle(client, msg_id)
    return elapsed


def debugger_overhead(client, cells: dict, rounds: int) -> dict:
    """Each cell's best time with the debugger off and started (no breakpoints), in alternating
    rounds, and their ratio."""
    times = {(name, state): [] for name in cells for state in ("off", "started")}
    for _ in range(rounds):
        for state in ("off", "started"):
            assert debug_request(client, "initialize" if state == "started" else "disconnect")["success"]
            for name, code in cells.items():
                times[(name, state)].append(timed_cell(client, code))
    return {name: {"off_ms": min(times[(name, "off")]) * 1000, "started_ms": min(times[(name, "started")]) * 1000,
                   "ratio": min(times[(name, "started")]) / min(times[(name, "off")])} for name in cells}


def summary(values):
    ms = [v * 1000 for v in values]
    return {"median_ms": statistics.median(ms), "p90_ms": sorted(ms)[int(len(ms) * 0.9) - 1], "min_ms": min(ms), "n": len(ms)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200, help="trivial executes to time")
    parser.add_argument("--interrupts", type=int, default=20, help="interrupts to time per mode")
    parser.add_argument("--startups", type=int, default=10, help="kernel start-ups to time")
    parser.add_argument("--debugger-rounds", type=int, default=5, help="alternating rounds of the debugger's cost")
    parser.add_argument("--model", help="a GGUF model for the generation cell of the debugger's cost (stories260K)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    binary = os.environ.get("LUMEN_BIN")
    if not binary:
        print("set LUMEN_BIN to the lumen binary", file=sys.stderr)
        return 2
    results = {}
    with tempfile.TemporaryDirectory() as prefix:
        install_specs(binary, prefix)
        results["startup"] = summary([startup_seconds("lumen") for _ in range(args.startups)])
        for name, mode in [("lumen", "message"), ("lumen-signal", "signal")]:
            manager = KernelManager(kernel_name=name)
            manager.start_kernel()
            client = manager.client()
            client.start_channels()
            client.wait_for_ready(timeout=30)
            if mode == "message":
                round_trips(client, 20)
                results["execute_round_trip"] = summary(round_trips(client, args.runs))
            results[f"interrupt_{mode}"] = summary(interrupt_latencies(manager, client, args.interrupts))
            if mode == "message":
                cells = {"loop": "var s = 0\nfor i in 0..<200000 { s += i }\ns"}
                if args.model:
                    timed_cell(client, f'let m = load("{args.model}")')
                    cells["generate"] = 'm.generate("Once upon a time", maxTokens: 64, temperature: 0)'
                debugger = debugger_overhead(client, cells, args.debugger_rounds)
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    if args.json:
        print(json.dumps({**results, "debugger": debugger}, indent=1))
    else:
        print(f"{'measure':<26}{'median ms':>10}{'p90 ms':>10}{'min ms':>10}{'n':>6}")
        for key, value in results.items():
            print(f"{key:<26}{value['median_ms']:>10.2f}{value['p90_ms']:>10.2f}{value['min_ms']:>10.2f}{value['n']:>6}")
        print(f"\n{'cell':<26}{'off ms':>10}{'started ms':>12}{'ratio':>8}")
        for key, value in debugger.items():
            print(f"{key:<26}{value['off_ms']:>10.1f}{value['started_ms']:>12.1f}{value['ratio']:>8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
