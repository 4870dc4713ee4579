"""Measures the kernel with jupyter_client: start-up time to the first kernel_info_reply, the
round trip of a trivial execute, and interrupt latency during `sleep(30)`, in message and signal
interrupt modes. Prints a table and, with --json, the raw figures."""
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


def summary(values):
    ms = [v * 1000 for v in values]
    return {"median_ms": statistics.median(ms), "p90_ms": sorted(ms)[int(len(ms) * 0.9) - 1], "min_ms": min(ms), "n": len(ms)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200, help="trivial executes to time")
    parser.add_argument("--interrupts", type=int, default=20, help="interrupts to time per mode")
    parser.add_argument("--startups", type=int, default=10, help="kernel start-ups to time")
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
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(f"{'measure':<26}{'median ms':>10}{'p90 ms':>10}{'min ms':>10}{'n':>6}")
        for key, value in results.items():
            print(f"{key:<26}{value['median_ms']:>10.2f}{value['p90_ms']:>10.2f}{value['min_ms']:>10.2f}{value['n']:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
