"""LumenKit, the engine as a Swift library: what a program that depends on it links, and the
example package in examples/ streaming a generation as llama.cpp makes it."""
import json
import os
import pathlib
import re
import subprocess

import pytest

from servers import SMOLLM2

ROOT = pathlib.Path(__file__).resolve().parents[2]

# What a program embedding the engine must not link: the kernel and its ZeroMQ, the language and
# its front ends, the server and its HTTP stack, the run log and its database.
EXCLUDED_TARGETS = {"ZeroMQ", "CZeroMQ", "JupyterKernel", "JupyterProtocol", "LumenLanguage", "ModelBuiltins", "Evaluation", "Display",
                    "Widgets", "Notebook", "Terminal", "Serve", "OpenAIAPI", "Remote", "RunLog", "lumen"}


def closure(description, product):
    """The targets and the packages' products a product of the package description links."""
    targets = {target["name"]: target for target in description["targets"]}
    waiting = list(next(p for p in description["products"] if p["name"] == product)["targets"])
    seen, packages = set(), set()
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        waiting += targets[name].get("target_dependencies", [])
        packages |= {dependency.split(".")[0] if "." in dependency else dependency for dependency in targets[name].get("product_dependencies", [])}
    return seen, packages


def test_the_library_links_neither_kernel_language_nor_server():
    description = json.loads(subprocess.run(["swift", "package", "describe", "--type", "json"], cwd=ROOT, capture_output=True, text=True,
                                            check=True).stdout)
    targets, products = closure(description, "LumenKit")
    assert {"LumenKit", "Inference", "CKernels", "Tokenizers", "ChatTemplates", "RunRecords"} <= targets
    assert not targets & EXCLUDED_TARGETS, targets & EXCLUDED_TARGETS
    # The one external product it links, by name: swift-crypto, for digests.
    assert products == {"Crypto"}, products
    # The command-line tool, by contrast, links them all: the check can tell.
    tool_targets, tool_products = closure(description, "lumen")
    assert {"ZeroMQ", "LumenLanguage", "Serve", "RunLog"} <= tool_targets
    assert "GRDB" in tool_products


def test_the_cpu_backend_is_the_only_code_on_the_c_kernels():
    """The backend seam: of the package's targets (tests aside, which check the kernels
    themselves) only CPUBackend depends on CKernels, and no Swift source elsewhere imports it."""
    description = json.loads(subprocess.run(["swift", "package", "describe", "--type", "json"], cwd=ROOT, capture_output=True, text=True,
                                            check=True).stdout)
    dependents = {target["name"] for target in description["targets"]
                  if "CKernels" in target.get("target_dependencies", []) and target["type"] != "test"}
    assert dependents == {"CPUBackend"}, dependents
    importers = [path for path in pathlib.Path(ROOT, "Sources").rglob("*.swift")
                 if re.search(r"^(@\w+ )?import CKernels\b", path.read_text(), re.MULTILINE) and path.parent.name != "CPUBackend"]
    assert importers == [], importers


def test_architectures_compute_only_through_the_backend_protocol():
    """The other side of the seam: an architecture's stages reach the CPU only through the
    session's `ComputeBackend` (`state.backend`), never the CPU backend's own types."""
    cpu_types = re.compile(r"\b(Operations|MatrixMultiplier|AttentionKernels|CPUCompute|FormatKernels)\b|\.pool\b")
    callers = [f"{path.name}:{number}" for path in pathlib.Path(ROOT, "Sources/Inference/Architectures").glob("*.swift")
               for number, line in enumerate(path.read_text().splitlines(), 1)
               if cpu_types.search(line) and not line.lstrip().startswith("///")]
    assert callers == [], callers


def test_a_sessions_memory_and_adapter_products_go_through_the_backend():
    """A session's buffers (activations, KV cache, recurrent states, adapters' room) are ones its
    `ComputeBackend` made (`makeBuffer`), and LoRA's `B (A x)` reach it as `LowRankTerm`s: no file
    of Inference allocates memory of its own or calls a format's kernels."""
    own = re.compile(r"\.allocate\(|\bFormatKernels\b|\.kernels\b")
    callers = [f"{path.relative_to(ROOT)}:{number}" for path in pathlib.Path(ROOT, "Sources/Inference").rglob("*.swift")
               for number, line in enumerate(path.read_text().splitlines(), 1)
               if own.search(line) and not line.lstrip().startswith("///")]
    assert callers == [], callers


def test_the_example_streams_llama_cpps_greedy_text():
    """examples/StreamGeneration (built by `make example`) prints the prompt and 32 greedy tokens
    as they come; llama.cpp (its C API through llama-cpp-python) continues the prompt alike, with
    an F32 cache as Lumen's sessions have (with its default F16 cache it takes another turn after
    "Paris.\n\n": the spread these references avoid)."""
    binary = os.environ.get("LUMEN_EXAMPLE_BIN", str(ROOT / "examples/StreamGeneration/.build/debug/StreamGeneration"))
    if not os.path.exists(binary):
        pytest.fail(f"{binary} is missing: make example builds it")
    prompt = "The capital of France is"
    result = subprocess.run([binary, str(SMOLLM2), prompt], capture_output=True, text=True, check=True, timeout=600)
    streamed, summary = result.stdout.rsplit("\n[", 1)
    assert streamed.startswith(prompt)
    assert re.fullmatch(r"\d+ tokens at \d+ tok/s, (length|eos)\]\n", summary), summary
    from llama_cpp import Llama
    llama = Llama(model_path=str(SMOLLM2), n_ctx=256, n_threads=2, type_k=0, type_v=0, verbose=False)  # 0: GGML_TYPE_F32
    expected = llama.create_completion(prompt, max_tokens=32, temperature=0)["choices"][0]["text"]
    assert streamed[len(prompt):] == expected
