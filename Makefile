# Lumen: build, test and run. `make run` and `make test` are the two set-up commands.
SHELL := /bin/bash
SWIFT_FLAGS := -Xswiftc -warnings-as-errors
VENV := .venv
PYTHON := $(VENV)/bin/python
SHARED ?= $(abspath ../shared)
export LUMEN_TEST_DATA ?= $(SHARED)
BIN_DEBUG := .build/debug/lumen
BIN_RELEASE := .build/release/lumen

.PHONY: all deps test-deps llama-server build build-tests release venv models synthetic-models arch-models adapters example docs test test-swift test-integration test-portable check-arm64 soak e2e run measure bench bench-tensors bench-tokenizer bench-real bench-formats bench-serve bench-metrics bench-parallel bench-archs bench-lora check-formats clean

all: build

## Installs the system packages Lumen needs (libzmq, SQLite, libedit, SIMDe for the portable
## kernels, Python's venv), via apt-get when root. `make test` adds Chromium for the browser test,
## cmake for llama.cpp's llama-server and Prometheus for the metrics test (TEST_PACKAGES); `make
## run` never installs them.
## Each entry: the file that shows the package is installed, then the package.
PACKAGES := /usr/include/zmq.h:libzmq3-dev /usr/include/sqlite3.h:libsqlite3-dev /usr/include/histedit.h:libedit-dev \
  /usr/include/simde/x86/avx2.h:libsimde-dev
TEST_PACKAGES := /usr/bin/chromium:chromium /usr/bin/cmake:cmake /usr/bin/prometheus:prometheus
## $(1): the entries to check; $(2): a shell command that adds to $$missing by other tests.
define install_missing
	@missing=""; \
	for entry in $(1); do [ -e "$${entry%%:*}" ] || missing="$$missing $${entry##*:}"; done; \
	$(2) \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "Missing packages:$$missing. Install them with: sudo apt-get install -y$$missing"; exit 1; fi; \
	fi
endef

deps:
	$(call install_missing,$(PACKAGES),python3 -c 'import ensurepip' 2>/dev/null || missing="$$missing python3-venv";)

test-deps: deps
	$(call install_missing,$(TEST_PACKAGES),)

build: deps
	swift build $(SWIFT_FLAGS)

## The debug build with the test targets, which every test target below runs from (`swift test
## --skip-build`): one set of flags, so no step rebuilds what the one before built differently.
build-tests: deps
	swift build --build-tests $(SWIFT_FLAGS)

release: deps
	swift build -c release $(SWIFT_FLAGS)

$(VENV)/.installed: Tests/integration/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	CMAKE_ARGS="-DLLAMA_BUILD=OFF" $(VENV)/bin/pip install -q -r Tests/integration/requirements.txt
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
$(SYNTHETIC)/.made: scripts/make_synthetic_models.py scripts/gguf_vocabulary.py scripts/gguf_header.py | venv
	$(PYTHON) scripts/make_synthetic_models.py $(SHARED) $(SYNTHETIC)
	touch $@

test: test-swift test-integration e2e

## llama.cpp's own random-weight models of the architectures Lumen runs (test-llama-archs, from
## the llama.cpp build below); their references are in Tests/reference/archs/.
ARCH_MODELS := .build/arch-models
export LUMEN_ARCH_MODELS ?= $(abspath $(ARCH_MODELS))
arch-models: $(ARCH_MODELS)/.made
$(ARCH_MODELS)/.made: scripts/make_arch_references.py | venv llama-server
	cmake --build $(LLAMA_CPP)/build --target test-llama-archs -j $$(nproc) > /dev/null
	$(PYTHON) scripts/make_arch_references.py --models $(LLAMA_CPP)/build/bin/test-llama-archs $(ARCH_MODELS)
	touch $@

## Seeded LoRA adapters of the synthetic models, llama.cpp's random-weight ones and the real ones,
## always the same bytes (references made with them by llama.cpp are in Tests/reference/lora/).
ADAPTERS := .build/adapters
export LUMEN_ADAPTERS ?= $(abspath $(ADAPTERS))
adapters: $(ADAPTERS)/.made
$(ADAPTERS)/.made: scripts/make_lora_adapters.py scripts/gguf_header.py $(SYNTHETIC)/.made $(ARCH_MODELS)/.made | venv models
	$(PYTHON) scripts/make_lora_adapters.py $(SYNTHETIC) $(ARCH_MODELS) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models} $(ADAPTERS)
	touch $@

test-swift: build-tests models synthetic-models arch-models adapters
	swift test --skip-build

## In two pytest-xdist workers: most tests wait on a lumen process, so two keep both cores busy
## (8 minutes rather than 10 on 2 cores). Each worker has its own run log and kernelspecs, and
## every server a port of its own.
test-integration: build-tests venv models synthetic-models llama-server arch-models adapters example
	LUMEN_BIN=$(abspath $(BIN_DEBUG)) LUMEN_EXAMPLE_BIN=$(abspath $(EXAMPLE_BIN)) $(PYTHON) -m pytest -q -n 2 --durations=12 Tests/integration --ignore=Tests/integration/test_soak.py

## examples/StreamGeneration: a Swift package that depends on LumenKit by path and streams a
## generation (Tests/integration/test_library.py runs it against llama.cpp). Its own build folder,
## which compiles only the library's closure, unoptimised (LUMEN_UNOPTIMISED_DEBUG=1: its one short
## generation takes seconds either way): about 3.4 minutes on 2 cores from nothing, 4.2 optimised.
EXAMPLE := examples/StreamGeneration
EXAMPLE_BIN := $(EXAMPLE)/.build/debug/StreamGeneration
example: deps
	LUMEN_UNOPTIMISED_DEBUG=1 swift build --package-path $(EXAMPLE) $(SWIFT_FLAGS)

## LumenKit's DocC documentation (swift-docc-plugin), warnings as errors; the archive is
## .build/plugins/Swift-DocC/outputs/LumenKit.doccarchive. The plugin builds the library with the
## debug build's flags (SWIFT_FLAGS), so after build-tests nothing is compiled again (20 s rather
## than 2.5 minutes: other flags would rebuild the library's closure) and the symbols are
## extracted from the modules built.
docs: deps
	swift package $(SWIFT_FLAGS) generate-documentation --target LumenKit --warnings-as-errors

## llama.cpp's own llama-server, which the remote tests talk to (with llama-quantize and
## llama-export-lora beside it, oracles of lumen quantize and export-lora): built from the llama.cpp that PyPI's
## llama-cpp-python source package vendors (the version Tests/integration/requirements.txt pins),
## in .build/llama.cpp, never committed. 5 to 10 minutes on 2 cores, once.
LLAMA_CPP_PYTHON := $(shell sed -n 's/^llama-cpp-python\[server\]==//p' Tests/integration/requirements.txt)
LLAMA_CPP := .build/llama.cpp
## The oracle's CPU code: AVX2/FMA/F16C, as on the machines its references were made on, not the
## build machine's own (-march=native turns on AMX where a CPU has it, whose tiles a sandbox may
## not grant: llama-server then dies of SIGILL on its first large Q4_1 batch).
LLAMA_CPP_CPU := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
export LLAMA_SERVER ?= $(abspath $(LLAMA_CPP)/build/bin/llama-server)
## llama-cpp-python in the venv is installed without a library of its own (LLAMA_BUILD=OFF: it
## would compile llama.cpp a second time, ten minutes on 2 cores) and loads the one built here,
## from the same source, beside llama-server: every target whose Python imports llama_cpp needs
## llama-server first.
export LLAMA_CPP_LIB_PATH ?= $(abspath $(LLAMA_CPP)/build/bin)
llama-server: $(LLAMA_CPP)/build/bin/llama-server
$(LLAMA_CPP)/build/bin/llama-server: Tests/integration/requirements.txt | test-deps
	rm -rf $(LLAMA_CPP) && mkdir -p $(LLAMA_CPP)/source
	python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python "llama-cpp-python==$(LLAMA_CPP_PYTHON)" -d $(LLAMA_CPP)
	tar xzf $(LLAMA_CPP)/llama_cpp_python-$(LLAMA_CPP_PYTHON).tar.gz -C $(LLAMA_CPP)/source --strip-components=1
	cmake -S $(LLAMA_CPP)/source/vendor/llama.cpp -B $(LLAMA_CPP)/build -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
	  -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_EXAMPLES=OFF $(LLAMA_CPP_CPU) > /dev/null
	cmake --build $(LLAMA_CPP)/build --target llama-server test-gbnf-validator llama-quantize llama-export-lora -j $$(nproc) > /dev/null

## The Swift tests on the portable kernels (SIMDe, the code arm64 builds run), chosen at run time
## by LUMEN_KERNELS=portable in the same build as make test (the portable variant is compiled
## with the same flags whether or not the AVX2 one is beside it); CI runs it after make test so
## the portable path cannot rot. What runs again is what computes with the kernels and checks the
## numbers: each kernel against its scalar reference, every format and the quantizer, and the
## forward pass and SmolLM2 against llama.cpp (on the default quantized activations: the F32
## path's kernels are checked one by one); the rest (batching, cells, …) is Swift that
## calls the kernels through the same table either way. LUMEN_PORTABLE=1 swift build makes a build
## without the AVX2 variant.
PORTABLE_SUITES := KernelTests|QuantizedFormatTests|QuantizerTests|ReferenceTests|RealModelTests|WorkSplitTests
test-portable: build-tests models synthetic-models arch-models adapters
	LUMEN_KERNELS=portable swift test --skip-build --filter "^InferenceTests\.($(PORTABLE_SUITES))"

## The kernels on arm64, checked on this x86-64 machine: Tests/KernelOutputs/kernel_outputs.c prints
## every kernel's results on fixed inputs; it is built with the AVX2 kernels (which the Swift tests
## check against scalar references), with the portable ones for x86-64, and with the portable ones
## for arm64 (clang's aarch64 target and Debian's cross libc, SIMDe turning the intrinsics into
## NEON) run under qemu-aarch64; scripts/compare_kernel_outputs.py compares them. CI runs it.
ARM64_SYSROOT := /usr/aarch64-linux-gnu
ARM64_CHECK := .build/arm64-check
KERNEL_INCLUDES := -ISources/CKernels/include -ISources/CKernelsPortable/include -ISources/CKernelsAVX2/include
check-arm64:
	@command -v qemu-aarch64 > /dev/null && [ -d $(ARM64_SYSROOT)/include ] && [ -d /usr/lib/gcc-cross/aarch64-linux-gnu ] || { \
	  echo "needs qemu-user, libc6-dev-arm64-cross and libgcc-12-dev-arm64-cross (apt-get install -y qemu-user libc6-dev-arm64-cross libgcc-12-dev-arm64-cross)"; exit 1; }
	@mkdir -p $(ARM64_CHECK)
	clang -O2 -Wall -Werror -mavx2 -mfma -mf16c $(KERNEL_INCLUDES) -c Sources/CKernelsAVX2/Kernels.c -o $(ARM64_CHECK)/avx2.o
	clang -O2 -Wall -Werror -Wno-psabi $(KERNEL_INCLUDES) -c Sources/CKernelsPortable/Kernels.c -o $(ARM64_CHECK)/portable.o
	clang -O2 -Wall -Werror -DLUMEN_HAS_AVX2_VARIANT=1 $(KERNEL_INCLUDES) -c Sources/CKernels/Dispatch.c -o $(ARM64_CHECK)/dispatch-avx2.o
	clang -O2 -Wall -Werror $(KERNEL_INCLUDES) -c Sources/CKernels/Dispatch.c -o $(ARM64_CHECK)/dispatch-portable.o
	clang -O2 -Wall -Werror $(KERNEL_INCLUDES) Tests/KernelOutputs/kernel_outputs.c $(ARM64_CHECK)/dispatch-avx2.o $(ARM64_CHECK)/avx2.o $(ARM64_CHECK)/portable.o -lm -o $(ARM64_CHECK)/outputs-avx2
	clang -O2 -Wall -Werror $(KERNEL_INCLUDES) Tests/KernelOutputs/kernel_outputs.c $(ARM64_CHECK)/dispatch-portable.o $(ARM64_CHECK)/portable.o -lm -o $(ARM64_CHECK)/outputs-portable
	clang --target=aarch64-linux-gnu --sysroot=$(ARM64_SYSROOT) --gcc-toolchain=/usr -idirafter /usr/include -fuse-ld=lld -static \
	  -O2 -Wall -Werror -Wno-psabi $(KERNEL_INCLUDES) Tests/KernelOutputs/kernel_outputs.c Sources/CKernels/Dispatch.c \
	  Sources/CKernelsPortable/Kernels.c -lm -o $(ARM64_CHECK)/outputs-arm64
	$(ARM64_CHECK)/outputs-avx2 > $(ARM64_CHECK)/avx2.txt
	$(ARM64_CHECK)/outputs-portable > $(ARM64_CHECK)/x86_64-portable.txt
	qemu-aarch64 $(ARM64_CHECK)/outputs-arm64 > $(ARM64_CHECK)/arm64-portable.txt
	python3 scripts/compare_kernel_outputs.py $(ARM64_CHECK)/avx2.txt $(ARM64_CHECK)/x86_64-portable.txt $(ARM64_CHECK)/arm64-portable.txt

## The interrupt soak: 1000 interrupts of streaming generations under two busy loops, about a
## minute on 2 cores; LUMEN_SOAK_INTERRUPTS=N for another count, LUMEN_SOAK_BUSY_LOOPS=N for
## another load (CI runs it with none beside test-portable, whose work is the load).
soak: build-tests venv
	LUMEN_BIN=$(abspath $(BIN_DEBUG)) $(PYTHON) -m pytest -q Tests/integration/test_soak.py

## JupyterLab in headless Chromium (Playwright, the system browser): streaming, rich output,
## the stop button. Screenshots in .build/e2e/.
e2e: build-tests venv test-deps models
	LUMEN_BIN=$(abspath $(BIN_DEBUG)) $(PYTHON) -m pytest -q Tests/e2e

## The main job: fetches the default model (SmolLM2-135M-Instruct, from PyPI into the model cache)
## if it is missing, builds in release mode, installs the kernelspec for this user and runs
## notebooks/tour.ipynb headlessly, streaming tokens to the terminal and writing
## notebooks/tour.out.ipynb. Needs no ../shared.
run: release models
	$(BIN_RELEASE) install --user
	$(BIN_RELEASE) run notebooks/tour.ipynb -o notebooks/tour.out.ipynb

## Kernel latency figures (round trip, start-up, interrupt) with jupyter_client, and what the
## debugger costs a cell without breakpoints (a generation too, on stories260K when ../shared has it).
STORIES := $(wildcard $(SHARED)/models/stories260K.gguf)
measure: release venv
	LUMEN_BIN=$(abspath $(BIN_RELEASE)) $(PYTHON) scripts/measure_kernel_latency.py $(if $(STORIES),--model $(abspath $(STORIES)))

## Engine speed on random-weight benchmark models (written once under .build/bench-models).
bench: release venv
	$(VENV)/bin/pip install -q gguf numpy
	scripts/bench_models.sh

## Tokenizer speed against llama.cpp's llama-tokenize (built by you from PyPI's llama-cpp-python
## source package, outside the repo) on ~1 MB of mixed text, every vocabulary, same run.
bench-tokenizer: release models
	@[ -x "$(LLAMA_TOKENIZE)" ] || { echo "Set LLAMA_TOKENIZE=/path/to/llama-tokenize (see BENCHMARKS.md)"; exit 2; }
	python3 scripts/bench_tokenizer.py $(BIN_RELEASE) $(LLAMA_TOKENIZE) $(SHARED) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models} 3

## Tensor operations against NumPy (the venv's), same run: softmax, logSoftmax, reductions
## along each axis, matmul and einsum at the sizes interpretability meets.
bench-tensors: release venv
	$(PYTHON) scripts/bench_tensors.py $(BIN_RELEASE)

## The real models against llama.cpp's llama-bench (built by you, outside the repo), same run.
bench-real: release models
	@[ -x "$(LLAMA_BENCH)" ] || { echo "Set LLAMA_BENCH=/path/to/llama-bench (see BENCHMARKS.md)"; exit 2; }
	python3 scripts/bench_real_models.py $(BIN_RELEASE) $(LLAMA_BENCH) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}

## The bench set (15M, 110M in every format, the real models; 1.1B with BENCH_LARGE=1) against
## llama-bench in one run, alternating engines: pp128, pp512, tg64 and tg64 at depth 1024.
## llama-bench and llama-quantize are built by you from PyPI's llama-cpp-python source package,
## outside the repo (see BENCHMARKS.md). BENCH_ONLY="Q4_0 Q6_K" keeps the models whose names
## contain one of those words, without the quantizer table.
bench-compare: release venv models
	@[ -x "$(LLAMA_BENCH)" ] && [ -x "$(LLAMA_QUANTIZE)" ] || { echo "Set LLAMA_BENCH and LLAMA_QUANTIZE (see BENCHMARKS.md)"; exit 2; }
	$(PYTHON) scripts/make_bench_models.py $(SHARED)/models .build/bench-models 15M 110M $(if $(BENCH_LARGE),1.1B) >/dev/null
	python3 scripts/bench_compare.py $(BIN_RELEASE) $(LLAMA_BENCH) $(LLAMA_QUANTIZE) .build/bench-models \
		$${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models} $(if $(BENCH_LARGE),--large) $(if $(BENCH_ONLY),--only $(BENCH_ONLY))

## Q5_1, Q2_K, Q3_K_M, IQ4_NL and IQ4_XS files made by llama-quantize from the 110M benchmark
## model, against llama-bench (both built by you, outside the repo), same run.
bench-formats: release venv
	@[ -x "$(LLAMA_BENCH)" ] && [ -x "$(LLAMA_QUANTIZE)" ] || { echo "Set LLAMA_BENCH and LLAMA_QUANTIZE (see BENCHMARKS.md)"; exit 2; }
	$(PYTHON) scripts/make_bench_models.py $(SHARED)/models .build/bench-models 110M >/dev/null
	python3 scripts/bench_formats.py $(BIN_RELEASE) $(LLAMA_BENCH) $(LLAMA_QUANTIZE) .build/bench-models

## lumen serve against llama.cpp's llama-server (built by you from PyPI's llama-cpp-python source
## package with -DLLAMA_BUILD_SERVER=ON, outside the repo) on SmolLM2: 1, 2, 4 and 8 concurrent
## streams (-np N on both), same run, and one stream against in-process generation.
bench-serve: release models
	@[ -x "$(LLAMA_SERVER)" ] || { echo "Set LLAMA_SERVER=/path/to/llama-server (see BENCHMARKS.md)"; exit 2; }
	python3 scripts/bench_serve.py $(BIN_RELEASE) $(LLAMA_SERVER) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}/SmolLM2-135M-Instruct.Q4_1.gguf

## What GET /metrics costs generation: lumen serve -np 4 with 4 streams, not scraped, scraped every
## second and every 100 ms, alternating, same run (scripts/bench_metrics_scrape.py).
bench-metrics: release models
	python3 scripts/bench_metrics_scrape.py $(BIN_RELEASE) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}/SmolLM2-135M-Instruct.Q4_1.gguf

## Sequences decoding together: lumen bench --parallel against llama.cpp's llama-batched-bench
## (built by you from the same source, outside the repo) on the 110M bench set and the real
## models, 1, 2, 4 and 8 sequences, same run.
bench-parallel: release venv models
	@[ -x "$(LLAMA_BATCHED_BENCH)" ] || { echo "Set LLAMA_BATCHED_BENCH=/path/to/llama-batched-bench (see BENCHMARKS.md)"; exit 2; }
	$(PYTHON) scripts/make_bench_models.py $(SHARED)/models .build/bench-models 110M >/dev/null
	[ -f .build/bench-models/bench-110M-q4_k_m.gguf ] || $(BIN_RELEASE) quantize .build/bench-models/bench-110M-f32.gguf .build/bench-models/bench-110M-q4_k_m.gguf Q4_K_M -t 2
	python3 scripts/bench_parallel.py $(BIN_RELEASE) $(LLAMA_BATCHED_BENCH) .build/bench-models/bench-110M-q4_0.gguf \
		.build/bench-models/bench-110M-q4_k_m.gguf .build/bench-models/bench-110M-q8_0.gguf \
		$${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}/SmolLM2-135M-Instruct.Q4_1.gguf $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}/gemma-3-270m-q4_k_m.gguf

## The newer architectures' shapes (a Qwen3.5-0.8B-shaped hybrid, a scaled-down Qwen3-30B-A3B-shaped
## mixture of experts; random weights, quantized to Q4_K_M by lumen quantize) against llama-bench
## (built by you, outside the repo), same run: pp128, pp512, tg64 and tg64 at depth 1024.
## What a rank-16 LoRA adapter on every attention and feed-forward projection costs generation,
## against plain generation and llama-server with the same adapter (F32, then F16).
bench-lora: release venv adapters
	$(PYTHON) scripts/bench_lora.py $(BIN_RELEASE) $(LLAMA_SERVER) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}/SmolLM2-135M-Instruct.Q4_1.gguf $(ADAPTERS)/smollm2-r16.gguf --rounds 7
	$(PYTHON) scripts/bench_lora.py $(BIN_RELEASE) $(LLAMA_SERVER) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}/SmolLM2-135M-Instruct.Q4_1.gguf $(ADAPTERS)/smollm2-r16-f16.gguf --rounds 7
	$(PYTHON) scripts/bench_lora_serve.py $(BIN_RELEASE) $(LLAMA_SERVER) $${LUMEN_MODEL_CACHE:-$$HOME/.cache/lumen/models}/SmolLM2-135M-Instruct.Q4_1.gguf \
	  $(ADAPTERS)/smollm2-r16.gguf $(ADAPTERS)/smollm2-r8.gguf $(ADAPTERS)/smollm2-r16-f16.gguf

bench-archs: release venv
	@[ -x "$(LLAMA_BENCH)" ] || { echo "Set LLAMA_BENCH=/path/to/llama-bench (see BENCHMARKS.md)"; exit 2; }
	$(PYTHON) scripts/make_arch_bench_models.py $(SHARED) .build/bench-models
	for model in qwen35-0.8b-shape qwen3moe-a3b-shape lfm2-1.2b-shape; do [ -f .build/bench-models/$$model-q4_k_m.gguf ] || \
		$(BIN_RELEASE) quantize .build/bench-models/$$model.gguf .build/bench-models/$$model-q4_k_m.gguf Q4_K_M -t 2; done
	python3 scripts/bench_architectures.py $(BIN_RELEASE) $(LLAMA_BENCH) .build/bench-models

## The same files inside a whole model against llama.cpp's logits, with a Python that has
## llama-cpp-python installed (outside the repo).
check-formats: release venv
	@[ -x "$(LLAMA_CPP_PYTHON)" ] || { echo "Set LLAMA_CPP_PYTHON=/path/to/python with llama-cpp-python (see BENCHMARKS.md)"; exit 2; }
	$(PYTHON) scripts/make_bench_models.py $(SHARED)/models .build/bench-models 110M >/dev/null
	$(LLAMA_CPP_PYTHON) scripts/check_formats_against_llama_cpp.py $(BIN_RELEASE) .build/bench-models

clean:
	rm -rf .build $(VENV)
