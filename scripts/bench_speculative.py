#!/usr/bin/env python3
"""Speculative decoding against plain decoding and against llama.cpp's, in the same run, greedy,
2 threads each, prompt cache off. Two tasks: `copy` (repeating a paragraph of the prompt: drafts
from the context are mostly right) and `story` (free text: drafts mostly fail, so what is measured
is what failed drafts cost). For each model: `lumen generate` plain and with --lookup-ngram 3, and
llama-server's /completion plain and with prompt lookup (--spec-type ngram-simple, lookup 3,
drafts up to 16). With --draft TARGET DRAFT, the same for a draft model (--model-draft; llama-server
-md). Best generation tok/s of ROUNDS rounds; every output is checked to be plain decoding's.
Usage: bench_speculative.py LUMEN LLAMA_SERVER MODEL... [--draft TARGET DRAFT] [--rounds N]"""
import argparse
import json
import re
import socket
import subprocess
import time
import urllib.request

PARAGRAPH = ("The city council met on Tuesday evening to discuss the new budget for the coming year. After a long debate, the members agreed "
             "to increase funding for public parks, repair the old bridge over the river, and hire more teachers for the primary schools. "
             "The mayor thanked everyone for their hard work and promised that the changes would make the city a better place to live for "
             "all of its residents.")
TASKS = {
    "copy": f"Copy the text below exactly.\n\nText: {PARAGRAPH}\n\nCopy: The city council",
    "story": "Write a short story about a robot who learns to paint.\n\nStory:",
}
TOKENS = 96
NGRAM = 3
DRAFT_MAX = 16


def lumen_run(lumen, model, prompt, extra):
    arguments = [lumen, "generate", model, prompt, "-n", str(TOKENS), "--temp", "0", "-t", "2", "--no-log", "--json"] + extra
    result = subprocess.run(arguments, capture_output=True, text=True, check=True)
    speed = float(re.search(r"generated at ([\d.]+) tok/s", result.stderr).group(1))
    accepted = re.search(r"(\d+) drafted, (\d+) accepted", result.stderr)
    return speed, json.loads(result.stdout)["ids"], accepted.groups() if accepted else ("0", "0")


def start_server(llama_server, model, extra):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([llama_server, "-m", model, "--port", str(port), "-t", "2", "--ctx-size", "1024", "--parallel", "1"] + extra,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return server, port
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"llama-server did not start for {model}")


def llama_run(port, prompt):
    body = {"prompt": prompt, "n_predict": TOKENS, "temperature": 0, "cache_prompt": False}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.loads(response.read())
    timings = answer["timings"]
    return timings["predicted_per_second"], (timings.get("draft_n", 0), timings.get("draft_n_accepted", 0))


def compare(lumen, llama_server, label, model, lumen_extra, server_extra, rounds):
    plain_server, plain_port = start_server(llama_server, model, [])
    spec_server, spec_port = start_server(llama_server, model, server_extra)
    try:
        for task, prompt in TASKS.items():
            best = {"plain": 0.0, "spec": 0.0, "llama plain": 0.0, "llama spec": 0.0}
            for _ in range(rounds):
                speed, plain_ids, _ = lumen_run(lumen, model, prompt, [])
                best["plain"] = max(best["plain"], speed)
                speed, ids, counts = lumen_run(lumen, model, prompt, lumen_extra)
                best["spec"] = max(best["spec"], speed)
                if ids != plain_ids:
                    raise RuntimeError(f"{label} {task}: speculative output differs from plain")
                best["llama plain"] = max(best["llama plain"], llama_run(plain_port, prompt)[0])
                speed, llama_counts = llama_run(spec_port, prompt)
                best["llama spec"] = max(best["llama spec"], speed)
            print(f"| {label} | {task} | {best['plain']:.1f} | {best['spec']:.1f} | {best['spec'] / best['plain']:.2f} | {counts[1]}/{counts[0]} | "
                  f"{best['llama plain']:.1f} | {best['llama spec']:.1f} | {best['llama spec'] / best['llama plain']:.2f} | "
                  f"{llama_counts[1]}/{llama_counts[0]} | {best['spec'] / best['llama spec']:.2f} |", flush=True)
    finally:
        for server in (plain_server, spec_server):
            server.terminate()
            server.wait()


def main():
    parser = argparse.ArgumentParser(description="Speculative against plain decoding, and against llama.cpp's.")
    parser.add_argument("lumen")
    parser.add_argument("llama_server")
    parser.add_argument("models", nargs="*")
    parser.add_argument("--draft", nargs=2, metavar=("TARGET", "DRAFT"))
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    print("| model | task | lumen plain t/s | lumen speculative t/s | ÷ plain | accepted/drafted | llama.cpp plain t/s | llama.cpp speculative t/s | "
          "÷ plain | accepted/drafted | lumen ÷ llama.cpp (speculative) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model in options.models:
        compare(options.lumen, options.llama_server, f"{model.rsplit('/', 1)[-1]}, lookup {NGRAM}", model,
                ["--lookup-ngram", str(NGRAM), "--draft-max", str(DRAFT_MAX)],
                ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", str(NGRAM), "--spec-ngram-simple-size-m", str(DRAFT_MAX)],
                options.rounds)
    if options.draft:
        target, draft = options.draft
        compare(options.lumen, options.llama_server, f"{target.rsplit('/', 1)[-1]}, draft {draft.rsplit('/', 1)[-1]}", target,
                ["--model-draft", draft, "--draft-max", str(DRAFT_MAX)], ["--spec-type", "draft-simple", "-md", draft, "--spec-draft-n-max", str(DRAFT_MAX)], options.rounds)


if __name__ == "__main__":
    main()
