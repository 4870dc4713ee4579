# Lumen: build, test and run. `make run` and `make test` are the two set-up commands.
SHELL := /bin/bash
SWIFT_FLAGS := -Xswiftc -warnings-as-errors
VENV := .venv
PYTHON := $(VENV)/bin/python
SHARED ?= $(abspath ../shared)
export LUMEN_TEST_DATA ?= $(SHARED)
BIN_DEBUG := .build/debug/lumen
BIN_RELEASE := .build/release/lumen

.PHONY: all deps build release venv models synthetic-models test test-swift test-integration test-portable check-arm64 soak e2e run measure bench bench-tokenizer bench-real bench-formats bench-serve check-formats clean

all: build

## Installs the system packages Lumen needs (libzmq, SQLite, libedit, SIMDe for the portable
## kernels, Python's venv, Chromium for the browser test), via apt-get when root.
deps:
	@missing=""; \
	[ -f /usr/include/zmq.h ] || missing="$$missing libzmq3-dev"; \
	[ -f /usr/include/sqlite3.h ] || missing="$$missing libsqlite3-dev"; \
	[ -f /usr/include/histedit.h ] || missing="$$missing libedit-dev"; \
	[ -f /usr/include/simde/x86/avx2.h ] || missing="$$missing libsimde-dev"; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	python3 -c 'import ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "Missing packages:$$missing. Install them with: sudo apt-get install -y$$missing"; exit 1; fi; \
	fi

build: deps
	swift build $(SWIFT_FLAGS)

release: deps
	swift build -c release $(SWIFT_FLAGS)

$(VENV)/.installed: Tests/integration/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r Tests/integration/requirements.txt
	touch $@

venv: deps $(VENV)/.installed

## The real models (SmolLM2-135M-Instruct, Gemma-3-270M) from PyPI into the model cache
## (LUMEN_MODEL_CACHE, default ~/.cache/lumen/models), checksums checked; never into git.
models:
	scripts/fetch_models.sh

## Random-weight qwen2/qwen3/phi3/Llama-3 models with real vocabularies, always the same bytes
## (references made from them with llama.cpp are in Tests/reference/synthetic/).
SYNTHETIC := .build/synthetic-models
export LUMEN_SYNTHETIC_MODELS ?= $(abspath $(SYNTHETIC))
synthetic-models: $(SYNTHETIC)/.made
$(SYNTHETIC)/.made: scripts/make_synthetic_models.py | venv
	$(PYTHON) scripts/make_synthetic_models.py $(SHARED) $(SYNTHETIC)
	touch $@

test: test-swift test-integration e2e

test-swift: build models synthetic-models
	swift test $(SWIFT_FLAGS)

test-integration: build venv models
	LUMEN_BIN=$(abspath $(BIN_DEBUG)) $(PYTHON) -m pytest -q Tests/integration --ignore=Tests/integration/test_soak.py

## The Swift tests on the portable kernels only (LUMEN_PORTABLE=1: SIMDe, as arm64 builds them),
## in a build folder of their own; CI runs it after make test so the portable path cannot rot.
test-portable: deps models synthetic-models
	LUMEN_PORTABLE=1 swift test --build-path .build-portable $(SWIFT_FLAGS)

## Compiles the portable kernels and their dispatch for arm64 (clang's aarch64 target, Debian's
## libc6-dev-arm64-cross headers), where SIMDe turns the intrinsics into NEON: what an arm64 build
## compiles, checked on this x86-64 machine; CI runs it.
ARM64_SYSROOT := /usr/aarch64-linux-gnu
check-arm64:
	@[ -d $(ARM64_SYSROOT)/include ] || { echo "needs libc6-dev-arm64-cross: apt-get install -y libc6-dev-arm64-cross"; exit 1; }
	@mkdir -p .build/arm64
	for source in Sources/CKernelsPortable/Kernels.c Sources/CKernels/Dispatch.c; do \
	  clang --target=aarch64-linux-gnu --sysroot=$(ARM64_SYSROOT) -idirafter /usr/include -O3 -Wall -Werror -Wno-psabi \
	    -ISources/CKernels/include -ISources/CKernelsPortable/include -c $$source -o .build/arm64/$$(basename $$(dirname $$source)).o || exit 1; \
	done
	@file .build/arm64/*.o

## The interrupt soak (CI runs it after make test): 1000 interrupts of streaming generations under
## two busy loops, about 4 minutes on 2 cores; LUMEN_SOAK_INTERRUPTS=N for another count.
soak: build venv
	LUMEN_BIN=$(abspath $(BIN_DEBUG)) $(PYTHON) -m pytest -q Tests/integration/test_soak.py

## JupyterLab in headless Chromium (Playwright, the system browser): streaming, rich output,
## the stop button. Screenshots in .build/e2e/.
e2e: build venv
	LUMEN_BIN=$(abspath $(BIN_DEBUG)) $(PYTHON) -m pytest -q Tests/e2e

## The main job: fetches the default model (SmolLM2-135M-Instruct, from PyPI into the model cache)
## if it is missing, builds in release mode, installs the kernelspec for this user and runs
## notebooks/tour.ipynb headlessly, streaming tokens to the terminal and writing
## notebooks/tour.out.ipynb. Needs no ../shared.
run: release models
	$(BIN_RELEASE) install --user
	$(BIN_RELEASE) run notebooks/tour.ipynb -o notebooks/tour.out.ipynb

## Kernel latency figures (round trip, start-up, interrupt) with jupyter_client.
measure: release venv
	LUMEN_BIN=$(abspath $(BIN_RELEASE)) $(PYTHON) scripts/measure_kernel_latency.py

## Engine speed on random-weight benchmark models (written once under .build/bench-models).
bench: release venv
	$(VENV)/bin/pip install -q gguf numpy
	scripts/bench_models.sh

## Tokenizer speed against llama.cpp's llama-tokenize (built by you from PyPI's llama-cpp-python
## source package, outside the repo) on ~1 MB of mixed text, every vocabulary, same run.
bench-tokenizer: release models
	@[ -x "$(LLAMA_TOKENIZE)" ] || { echo "Set LLAMA_TOKENIZE=/path/to/llama-tokenize (see BENCHMARKS.md)"; exit 2; }
	python3 scripts/bench_tokenizer.py $(BIN_RELEASE) $(LLAMA_TOKENIZE) $(SHARED) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models} 3

## The real models against llama.cpp's llama-bench (built by you, outside the repo), same run.
bench-real: release models
	@[ -x "$(LLAMA_BENCH)" ] || { echo "Set LLAMA_BENCH=/path/to/llama-bench (see BENCHMARKS.md)"; exit 2; }
	python3 scripts/bench_real_models.py $(BIN_RELEASE) $(LLAMA_BENCH) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}

## The bench set (15M, 110M in every format, the real models; 1.1B with BENCH_LARGE=1) against
## llama-bench in one run, alternating engines: pp128, pp512, tg64 and tg64 at depth 1024.
## llama-bench and llama-quantize are built by you from PyPI's llama-cpp-python source package,
## outside the repo (see BENCHMARKS.md).
bench-compare: release venv models
	@[ -x "$(LLAMA_BENCH)" ] && [ -x "$(LLAMA_QUANTIZE)" ] || { echo "Set LLAMA_BENCH and LLAMA_QUANTIZE (see BENCHMARKS.md)"; exit 2; }
	$(PYTHON) scripts/make_bench_models.py $(SHARED)/models .build/bench-models 15M 110M $(if $(BENCH_LARGE),1.1B) >/dev/null
	python3 scripts/bench_compare.py $(BIN_RELEASE) $(LLAMA_BENCH) $(LLAMA_QUANTIZE) .build/bench-models \
		$${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models} $(if $(BENCH_LARGE),--large)

## Q5_1, Q2_K, Q3_K_M, IQ4_NL and IQ4_XS files made by llama-quantize from the 110M benchmark
## model, against llama-bench (both built by you, outside the repo), same run.
bench-formats: release venv
	@[ -x "$(LLAMA_BENCH)" ] && [ -x "$(LLAMA_QUANTIZE)" ] || { echo "Set LLAMA_BENCH and LLAMA_QUANTIZE (see BENCHMARKS.md)"; exit 2; }
	$(PYTHON) scripts/make_bench_models.py $(SHARED)/models .build/bench-models 110M >/dev/null
	python3 scripts/bench_formats.py $(BIN_RELEASE) $(LLAMA_BENCH) $(LLAMA_QUANTIZE) .build/bench-models

## lumen serve against llama.cpp's llama-server (built by you from PyPI's llama-cpp-python source
## package with -DLLAMA_BUILD_SERVER=ON, outside the repo) on SmolLM2: 1 and 4 concurrent
## streams, same run, and one stream against in-process generation.
bench-serve: release models
	@[ -x "$(LLAMA_SERVER)" ] || { echo "Set LLAMA_SERVER=/path/to/llama-server (see BENCHMARKS.md)"; exit 2; }
	python3 scripts/bench_serve.py $(BIN_RELEASE) $(LLAMA_SERVER) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}/SmolLM2-135M-Instruct.Q4_1.gguf

## The same files inside a whole model against llama.cpp's logits, with a Python that has
## llama-cpp-python installed (outside the repo).
check-formats: release venv
	@[ -x "$(LLAMA_CPP_PYTHON)" ] || { echo "Set LLAMA_CPP_PYTHON=/path/to/python with llama-cpp-python (see BENCHMARKS.md)"; exit 2; }
	$(PYTHON) scripts/make_bench_models.py $(SHARED)/models .build/bench-models 110M >/dev/null
	$(LLAMA_CPP_PYTHON) scripts/check_formats_against_llama_cpp.py $(BIN_RELEASE) .build/bench-models

clean:
	rm -rf .build $(VENV)
