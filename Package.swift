// swift-tools-version: 6.0
import PackageDescription

/// Whether only the portable kernels are built (through SIMDe, for any CPU): always on hosts
/// that are not x86-64 (arm64); on x86-64 when `LUMEN_PORTABLE=1`, as CI builds and tests it too
/// so the portable path cannot rot. Otherwise x86-64 builds carry both variants and choose the
/// AVX2 one at load time when the CPU has it.
#if arch(x86_64)
let portable = Context.environment["LUMEN_PORTABLE"] == "1"
#else
let portable = true
#endif

/// For the modules whose code tests run on real models (the forward pass, tokenizing, quantizing):
/// optimised in debug builds too, since unoptimised they make the tests minutes slower — unless
/// `LUMEN_UNOPTIMISED_DEBUG=1`, for a build whose compile time matters more than its speed (the
/// example package's, which CI builds beside the tests only to run one short generation).
let optimisedInDebug: [SwiftSetting] = Context.environment["LUMEN_UNOPTIMISED_DEBUG"] == "1" ? [] : [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// The kernel variants: the portable one always, the AVX2 one on x86-64 unless portable.
let kernelVariants: [Target] = [
    // Homebrew keeps SIMDe's headers outside the compiler's default search path. SIMDe's 256-bit
    // vectors pass between the kernels' static helpers without AVX's calling convention, which
    // clang notes (-Wpsabi); nothing crosses the translation unit, so it is silenced.
    .target(name: "CKernelsPortable", cSettings: [
        .unsafeFlags(["-O3", "-Wno-psabi"]),
        .unsafeFlags(["-I/opt/homebrew/include", "-I/usr/local/include"], .when(platforms: [.macOS])),
    ]),
] + (portable ? [] : [.target(name: "CKernelsAVX2", cSettings: [.unsafeFlags(["-mavx2", "-mfma", "-mf16c", "-O3"])])])

let package = Package(
    name: "Lumen",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lumen", targets: ["lumen"]),
        // The engine as a Swift library: `ModelContainer` and the modules it re-exports. Neither
        // the kernel, the language nor the server is in its closure (`make check-library`).
        .library(name: "LumenKit", targets: ["LumenKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // `lumen serve`'s GET /metrics: recorded through swift-metrics, written by swift-prometheus.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `swift package generate-documentation --target LumenKit` (make docs): DocC for the library.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        .target(
            name: "JupyterProtocol",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "Evaluation", dependencies: ["OrderedJSON"]),
        // Python's text forms of values (float repr, json.dumps), which Jinja and the notebook
        // writer both reproduce.
        .target(name: "PythonText"),
        .target(name: "Jinja", dependencies: ["PythonText"]),
        .target(name: "Executors", dependencies: ["CProcessControl"]),
        // What Swift cannot call or emit: prctl (variadic) for a kernel that ends with its launcher,
        // and the CPU's spin-wait hint for the worker pool.
        .target(name: "CProcessControl"),
        .target(
            name: "JupyterKernel",
            dependencies: [
                "CProcessControl",
                "JupyterProtocol",
                "ZeroMQ",
                "Evaluation",
                "Executors",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "Display", dependencies: ["Evaluation"]),
        // What a logged run is (a generation, a perplexity, a comparison): plain values, no database.
        .target(name: "RunRecords"),
        // The run log: run records kept in SQLite, queried, exported and imported.
        .target(
            name: "RunLog",
            dependencies: ["Executors", "RunRecords", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "LumenLanguage",
            dependencies: ["Evaluation", "Display", "Executors", "PythonText", "Tensors", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(
            name: "ModelBuiltins",
            dependencies: ["Widgets", "LumenLanguage", "LumenKit", "ChatTemplates", "Evaluation", "Display", "Executors", "GGUF", "GenerationTypes", "Grammars", "Inference", "OpenAIAPI",
                           "OrderedJSON", "Quantization", "RunLog", "Remote", "Scoring", "SparseAutoencoders", "Tensors", "Tokenizers"]
        ),
        .target(name: "OpenAIAPI", dependencies: ["GenerationTypes", "OrderedJSON"]),
        .target(
            name: "Remote",
            dependencies: ["OpenAIAPI", "GenerationTypes", "Grammars", "Executors", .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOPosix", package: "swift-nio")]
        ),
        .target(
            name: "Serve",
            dependencies: ["OpenAIAPI", "ChatTemplates", "GGUF", "GenerationTypes", "Grammars", "Inference", "LumenKit", "RunRecords", "Scoring", "SparseAutoencoders", "Executors", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOHTTPTypes", package: "swift-nio-extras"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "Metrics", package: "swift-metrics"), .product(name: "Prometheus", package: "swift-prometheus")]
        ),
        .target(name: "Notebook", dependencies: ["Evaluation", "JupyterProtocol", "PythonText"]),
        .target(name: "Widgets", dependencies: ["Evaluation", "LumenLanguage", "OrderedJSON", "PythonText"]),
        // libedit (BSD editline, Debian's libedit-dev) for line editing in `lumen repl`.
        .target(name: "CLineEditing", linkerSettings: [.linkedLibrary("edit")]),
        .target(
            name: "CKernels",
            dependencies: kernelVariants.map { .target(name: $0.name) },
            cSettings: portable ? [] : [.define("LUMEN_HAS_AVX2_VARIANT", to: "1")]
        ),
        // What a generation is asked for and what it gives, shared by the engine, the client of
        // served models and every front end.
        .target(name: "GenerationTypes"),
        // The GGUF file format: reading (validated, memory-mapped), writing, tensor types and
        // their layouts.
        .target(name: "GGUF"),
        // llama.cpp's tokenizers (SentencePiece and byte-pair vocabularies with their
        // pre-tokenizers), read from a GGUF file.
        .target(
            name: "Tokenizers",
            dependencies: ["GGUF"],
            swiftSettings: optimisedInDebug
        ),
        // Output constrained by llama.cpp's GBNF grammars, JSON schemas, regular expressions and
        // choices: a grammar followed token by token over a vocabulary's trie.
        .target(name: "Grammars", dependencies: ["GenerationTypes", "OrderedJSON", "PythonText"], swiftSettings: optimisedInDebug),
        // n-dimensional float arrays with NumPy's semantics (broadcasting, reductions along axes,
        // contractions, indexing) and NumPy's .npy/.npz files: what the engine captures and what
        // cells compute with.
        .target(name: "Tensors", dependencies: ["CPUBackend", "Executors"], swiftSettings: optimisedInDebug),
        // JSON whose objects keep their members' order (a schema's properties, in requests too).
        .target(name: "OrderedJSON", dependencies: ["PythonText"]),
        // The CPU backend: the engine's compute on the C kernels (their only importer in the
        // engine) — matrices in every format, the threaded matrix–vector and matrix products,
        // the elementwise operations and the attention kernels.
        .target(name: "CPUBackend", dependencies: ["CKernels", "Executors", "GGUF", "GenerationTypes"], swiftSettings: optimisedInDebug),
        .target(
            name: "Inference",
            dependencies: ["CPUBackend", "Executors", "GGUF", "GenerationTypes", "Grammars", "Tensors", "Tokenizers", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: optimisedInDebug
        ),
        // Sparse autoencoders (SAELens' and Gemma Scope's files) over the forward pass's hook points.
        .target(name: "SparseAutoencoders", dependencies: ["GGUF", "Inference", "Tensors"], swiftSettings: optimisedInDebug),
        // The public Swift API of the engine: one `ModelContainer` per loaded model (weights,
        // sessions, chat template, hooks, run recorder) that every front end adapts.
        .target(name: "LumenKit", dependencies: ["ChatTemplates", "Executors", "GGUF", "GenerationTypes", "Grammars", "Inference", "RunRecords", "Scoring", "Tensors"]),
        // Chat templates (a GGUF file's Jinja template, or a built-in format) and conversations
        // rendered by them.
        .target(name: "ChatTemplates", dependencies: ["GGUF", "GenerationTypes", "Grammars", "Jinja", "OrderedJSON", "PythonText", "Tokenizers"]),
        // Scoring text with a model: llama-perplexity's windows, perplexity and the KL divergence
        // of two models' distributions.
        .target(name: "Scoring", dependencies: ["GGUF", "Inference"], swiftSettings: optimisedInDebug),
        // The terminal front end of `lumen repl` and the commands that print as they go: line
        // editing, output, progress bars, interrupt routing.
        .target(name: "Terminal", dependencies: ["CLineEditing", "Display", "Evaluation", "Executors"]),
        // `lumen quantize`: llama.cpp's block quantizers and its K-quant mixes.
        .target(
            name: "Quantization",
            dependencies: ["CPUBackend", "GGUF", "Inference"],
            swiftSettings: optimisedInDebug
        ),
        .executableTarget(
            name: "lumen",
            dependencies: [
                "Terminal",
                "JupyterKernel",
                "LumenLanguage",
                "ModelBuiltins",
                "LumenKit",
                "CLineEditing",
                "Display",
                "JupyterProtocol",
                "GGUF",
                "GenerationTypes",
                "ChatTemplates",
                "Grammars",
                "Scoring",
                "Inference",
                "Notebook",
                "Widgets",
                "Quantization",
                "Tensors",
                "Tokenizers",
                "Executors",
                "Jinja",
                "RunLog",
                "Serve",
                "SparseAutoencoders",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The seeded mutation fuzzer the parser, codec, GGUF, template and tokenizer tests share.
        .target(name: "FuzzSupport", path: "Tests/FuzzSupport"),
        // The recording output sink and cell runner the language and model-host tests share.
        .target(name: "LanguageTestSupport", dependencies: ["Evaluation", "LumenLanguage"], path: "Tests/LanguageTestSupport"),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "ExecutorsTests", dependencies: ["Executors"]),
        .testTarget(name: "RunLogTests", dependencies: ["RunLog"]),
        .testTarget(name: "RemoteTests", dependencies: ["Remote", "OpenAIAPI", "GenerationTypes", "Executors"]),
        .testTarget(name: "JupyterProtocolTests", dependencies: ["JupyterProtocol", "FuzzSupport"]),
        .testTarget(name: "JupyterKernelTests", dependencies: ["JupyterKernel", "JupyterProtocol", "ZeroMQ", "Evaluation", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "TensorsTests", dependencies: ["Tensors", "CKernels"]),
        .testTarget(name: "LumenLanguageTests", dependencies: ["LumenLanguage", "Evaluation", "Tensors", "FuzzSupport", "LanguageTestSupport"]),
        .testTarget(name: "ModelBuiltinsTests", dependencies: ["ModelBuiltins", "ChatTemplates", "LumenLanguage", "Evaluation", "GGUF", "GenerationTypes", "Inference", "RunLog", "Tensors", "LanguageTestSupport"]),
        .testTarget(name: "InferenceTests", dependencies: ["Inference", "ChatTemplates", "Grammars", "OrderedJSON", "Scoring", "GGUF", "GenerationTypes", "Quantization", "SparseAutoencoders", "Tensors", "Tokenizers", "CPUBackend", "CKernels", "FuzzSupport", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "DisplayTests", dependencies: ["Display"]),
        .testTarget(name: "LumenKitTests", dependencies: ["LumenKit", "Grammars", "RunLog"]),
        .testTarget(name: "TerminalTests", dependencies: ["Terminal"]),
        .testTarget(name: "PythonTextTests", dependencies: ["PythonText"]),
        .testTarget(name: "GrammarsTests", dependencies: ["Grammars", "FuzzSupport"]),
        .testTarget(name: "JinjaTests", dependencies: ["Jinja", "FuzzSupport"]),
        .testTarget(name: "WidgetsTests", dependencies: ["Widgets", "LumenLanguage", "Evaluation", "OrderedJSON", "LanguageTestSupport"]),
        .testTarget(name: "NotebookTests", dependencies: ["Notebook", "JupyterProtocol", "Evaluation"]),
    ] + kernelVariants,
    swiftLanguageModes: [.v6]
)
