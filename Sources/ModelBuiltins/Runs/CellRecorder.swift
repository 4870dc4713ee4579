import LumenLanguage
import RunLog
import Synchronization

/// Records a session's runs in the run log: which log, whether recording is on (`%log off`),
/// and where the session's cells come from. The model, conversation and run libraries of a
/// session share one.
final class CellRecorder: Sendable {
    /// The run log runs are recorded in (nil: not recorded).
    let runLog: RunLog?
    /// Whether recording is on.
    let logging = Mutex(true)
    /// The front end (`kernel`, `repl`, `run`) and the notebook, when known.
    private let sessionOrigin: RunOrigin

    /// A recorder writing to `runLog` for cells run by `frontEnd` from `notebook`.
    init(runLog: RunLog?, frontEnd: String, notebook: String?) {
        self.runLog = runLog
        sessionOrigin = RunOrigin(frontEnd: frontEnd, notebook: notebook)
    }

    /// Where a run of `cell` comes from.
    func origin(of cell: CellOrigin) -> RunOrigin {
        var origin = sessionOrigin
        origin.executionCount = cell.executionCount
        origin.cell = cell.cellID
        return origin
    }

    /// Queues `record` in the run log, when there is one and recording is on.
    func record(_ record: RunRecord) {
        guard let runLog, logging.withLock({ $0 }) else { return }
        runLog.record(record)
    }
}
