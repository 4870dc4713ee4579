import Display
import Evaluation
import Inference
import LumenLanguage
import RunLog
import Tensors

/// A trace in cells (`trace(m, prompt, keep:)`): the run's tokens, the activations kept, as
/// tensors named by their points (`t.resid_post`, `t.q`, `t.pattern`, …; `t.resid`, `t.attn`,
/// `t.ffn_out` and `t.heads` as before), and the logits: every position's when the trace kept
/// the `logits` point, else those after the last position.
final class TraceObject: MemberTableHostObject, SavableHostObject {
    /// What was kept.
    let trace: ActivationTrace
    /// The run's tokens: the prompt's, then those generated.
    let ids: [Int32]
    /// Each token's text.
    let pieces: [String]
    /// The kept activations, by point.
    let tensors: [ActivationPoint: Tensor]
    /// The logits after the last position (a prompt-only trace).
    let logits: [Float]?
    /// Each token's text, the logits' labels.
    let tokenLabels: [String]
    /// The text generated, for a trace of a generation.
    let generated: String?
    /// The changes made inside the run.
    let interventions: [RunIntervention]

    init(trace: ActivationTrace, ids: [Int32], pieces: [String], tensors: [ActivationPoint: Tensor], logits: [Float]?, tokenLabels: [String],
         generated: String?, interventions: [RunIntervention]) {
        self.trace = trace
        self.ids = ids
        self.pieces = pieces
        self.tensors = tensors
        self.logits = logits
        self.tokenLabels = tokenLabels
        self.generated = generated
        self.interventions = interventions
    }

    var typeName: String { "Trace" }
    /// The properties besides the points'.
    private static let general: [(String, MemberTable<TraceObject>.Getter)] = [
        ("tokens", { .array($0.pieces.map(Value.string)) }),
        ("ids", { .array($0.ids.map { .integer(Int($0)) }) }),
        ("blocks", { .array($0.trace.blocks.map(Value.integer)) }),
        ("logits", { object in
            if object.tensors[.logits] != nil { return try object.tensor(at: .logits) }
            return object.labelledLogits.map { .host(TensorObject($0)) } ?? .null
        }),
        ("text", { $0.generated.map(Value.string) ?? .null }),
        ("bytes", { .integer($0.bytes) }),
    ]
    /// Each point by its name and by the names earlier versions gave it; the logits point is
    /// the `logits` property.
    static let memberTable = MemberTable<TraceObject>(properties: general + (ActivationPoint.allCases.filter { $0 != .logits }.map { ($0.rawValue, $0) }
        + ActivationPoint.formerNames.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }).map { name, point in
        let read: MemberTable<TraceObject>.Getter = { object in try object.tensor(at: point) }
        return (name, read)
    }, methods: [TensorLibrary.save])

    /// Writes its tensors, token ids and logits as an .npz archive, which numpy.load reads.
    func save(to path: String, context: Builtin.Context) async throws {
        guard try NumPyOutput.isArchive(path, at: context.location) else {
            throw LumenError(.value, "a Trace holds several tensors: save it as .npz", at: context.location)
        }
        var arrays: [NumPyOutput.Array] = trace.points.compactMap { point in tensors[point].map { (point.rawValue, $0.values, $0.shape) } }
        arrays.append(("ids", Tensor(ids.map(Float.init), shape: [ids.count]).values, [ids.count]))
        if let logits { arrays.append(("logits", Tensor(logits, shape: [logits.count]).values, [logits.count])) }
        try await NumPyOutput.write(arrays, to: path, at: context.location)
    }

    /// The tensor kept at `point`, or an error saying how to keep it.
    private func tensor(at point: ActivationPoint) throws -> Value {
        guard let tensor = tensors[point] else {
            throw LumenError(.value, "this trace kept \(trace.points.map(\.rawValue).joined(separator: ", ")), not \(point.rawValue): trace(…, keep: [\"\(point.rawValue)\"]) keeps it")
        }
        return .host(TensorObject(tensor))
    }

    /// The logits as a tensor labelled with each token's text.
    var labelledLogits: Tensor? {
        logits.map { values in
            Tensor(values, shape: [values.count], axes: ["token"],
                   labels: [tokenLabels.count == values.count ? tokenLabels : nil])
        }
    }

    /// The bytes the kept activations take.
    var bytes: Int { tensors.values.reduce(0) { $0 + 4 * $1.values.count } }

    /// The index of `block` among the kept ones, or nil.
    func index(ofBlock block: Int) -> Int? {
        trace.blocks.firstIndex(of: block)
    }

    var summary: String {
        "Trace(\(ids.count) tokens; \(trace.points.map(\.rawValue).joined(separator: ", ")) at \(trace.blocks.count) blocks; \(ActivationTrace.size(bytes)))"
    }

    var mimeBundle: MIMEBundle {
        let table = Table(columns: ["point", "shape", "axes"], rows: trace.points.compactMap { point in
            tensors[point].map { [point.rawValue, $0.shapeText, $0.axes.joined(separator: " × ")] }
        })
        let tokens = "tokens: " + pieces.map(\.debugDescription).joined(separator: " ")
        return MIMEBundle(["text/html": "<p>\(HTML.escape(summary))</p>\n<p>\(HTML.escape(tokens))</p>\n" + table.html,
                           "text/plain": summary + "\n" + tokens + "\n" + table.plainText])
    }
}
