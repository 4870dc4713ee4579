import LumenLanguage
import RunLog

extension Builtin.Context {
    /// The session's model library: its generation defaults and run recorder.
    var models: ModelLibrary {
        get throws(LumenError) { try library(ModelLibrary.self) }
    }

    /// Where a run of the running cell comes from.
    var origin: RunOrigin {
        get throws(LumenError) { try models.recorder.origin(of: cell) }
    }

    /// The generation options set by `defaults(…)`, by label.
    var generationDefaults: [String: Value] {
        get throws(LumenError) { try models.generationDefaults.withLock { $0 } }
    }

    /// Records `record` in the session's run log, when it keeps one.
    func record(_ record: RunRecord) throws(LumenError) {
        try models.recorder.record(record)
    }
}
