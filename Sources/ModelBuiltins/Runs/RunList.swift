import Display
import Evaluation
import LumenLanguage
import RunLog

/// The runs a query found, newest first: shown as a table; `list[i]` is one run as a value with
/// everything the log keeps; `.count`, `.ids`.
public final class RunList: MemberTableHostObject, IndexableHostObject {
    /// The runs.
    let runs: [LoggedRun]

    public init(_ records: [RunRecord]) {
        runs = records.map(LoggedRun.init)
    }

    public var typeName: String { "Runs" }
    public static let memberTable = MemberTable<RunList>(properties: [
        ("count", { .integer($0.runs.count) }),
        ("ids", { .array($0.runs.map { .integer(Int($0.record.id ?? 0)) }) }),
    ])

    public func element(at index: Int) -> Value? {
        runs.indices.contains(index) ? .host(runs[index]) : nil
    }

    public var count: Int { runs.count }

    public var summary: String { "\(runs.count) runs" }

    public var mimeBundle: MIMEBundle {
        let rows = runs.enumerated().map { index, run in
            let r = run.record
            let text = r.kind == .generation ? r.output : r.value.map { "\(r.kind.rawValue) \($0)" } ?? r.kind.rawValue
            return [String(index), String(r.id ?? 0), LoggedRun.format(r.time), r.entry, r.model.name,
                    String(r.prompt.prefix(40)), String(text.prefix(60)), r.finishReason,
                    r.kind == .generation ? String(format: "%.1f", r.tokensPerSecond) : ""]
        }
        return Table(columns: ["#", "id", "time", "entry", "model", "prompt", "output", "finish", "tok/s"], rows: rows).mimeBundle
    }
}
