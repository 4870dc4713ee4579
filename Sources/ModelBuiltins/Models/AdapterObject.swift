import Display
import Evaluation
import Executors
import Foundation
import GGUF
import Inference
import LumenLanguage

/// A LoRA adapter in cells (`adapter(path)`): what it adapts, with which rank and alpha, and its
/// size — read as `load(…, lora:)` and `m.with(lora:)` read it, before applying it.
final class AdapterObject: MemberTableHostObject {
    let adapter: LoRAAdapter

    init(adapter: LoRAAdapter) {
        self.adapter = adapter
    }

    var typeName: String { "Adapter" }
    static let memberTable = MemberTable<AdapterObject>(properties: [
        ("path", { .string($0.adapter.path) }),
        ("architecture", { .string($0.adapter.architecture) }),
        ("alpha", { .double(Double($0.adapter.alpha)) }),
        ("rank", { object in object.adapter.ranks.count == 1 ? .integer(object.adapter.ranks[0]) : .array(object.adapter.ranks.map(Value.integer)) }),
        ("tensors", { .array($0.adapter.adaptedTensors.map(Value.string)) }),
        ("bytes", { .integer($0.adapter.byteCount) }),
    ], methods: [])

    var summary: String {
        let ranks = adapter.ranks.map(String.init).joined(separator: ", ")
        return "Adapter(\((adapter.path as NSString).lastPathComponent): \(adapter.architecture), rank \(ranks), alpha \(adapter.alpha), "
            + "\(adapter.adaptedTensors.count) tensors, \(String(format: "%.1f", Double(adapter.byteCount) / 1_048_576)) MiB)"
    }

    /// The summary, then the weights it adapts, each block's kind once with the number of blocks
    /// (`attn_q.weight`, 30), a weight outside the blocks by its name.
    var mimeBundle: MIMEBundle {
        var blocks: [String: Int] = [:]
        for tensor in adapter.adaptedTensors {
            if TensorName.blockWeight(tensor) != nil {
                blocks[String(tensor.split(separator: ".", maxSplits: 2)[2]), default: 0] += 1
            } else {
                blocks[tensor] = 0
            }
        }
        let table = Table(columns: ["weight", "blocks"], rows: blocks.sorted { $0.key < $1.key }.map { [$0.key, $0.value == 0 ? "" : String($0.value)] })
        return MIMEBundle(["text/html": "<p>\(HTML.escape(summary))</p>\n" + table.html, "text/plain": summary + "\n" + table.plainText])
    }
}

extension ModelLibrary {
    static let adapter = Builtin(
        name: "adapter",
        signature: "adapter(_ path: String) -> Adapter",
        summary: "Reads a LoRA adapter (llama.cpp's adapter GGUF) without applying it: a.rank, a.alpha, a.architecture, a.tensors (the weights it adapts), a.bytes, a.path. load(…, lora: [a.path: 1.0]) and m.with(lora:) apply it."
    ) { arguments, context in
        let (value, location) = try arguments.requirePositional("path")
        let path = try arguments.string((value, location), "path")
        try arguments.finish()
        // Reading the file is blocking work: it runs on a thread of its own.
        do {
            return .host(AdapterObject(adapter: try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in try LoRAAdapter(contentsOf: path) }))
        } catch {
            throw LumenError(.model, "\(error)", at: location)
        }
    }
}
