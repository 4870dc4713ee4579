import Evaluation
import Foundation
import JupyterProtocol

/// Runs a notebook's code cells in order with an evaluator, recording their outputs into the
/// document as Jupyter would.
public struct NotebookRunner: Sendable {
    /// How a run ended.
    public struct Outcome: Sendable {
        /// Code cells that ran.
        public var cellsRun = 0
        /// The failed cells' indices and errors, in order.
        public var failures: [(cell: Int, error: ExecutionError)] = []
        /// Whether the run was interrupted (SIGINT, SIGTERM or the overall timeout).
        public var interrupted = false
    }

    let evaluator: any Evaluator
    let cellTimeout: Duration?
    let echo: Bool

    /// A runner using `evaluator`; `cellTimeout` bounds each cell; `echo` copies output to stderr.
    public init(evaluator: any Evaluator, cellTimeout: Duration? = nil, echo: Bool = false) {
        self.evaluator = evaluator
        self.cellTimeout = cellTimeout
        self.echo = echo
    }

    /// Runs the code cells of `document`; stops at the first failure unless `allowErrors`.
    /// `progress(index, count, firstLine)` is called before each code cell. Cancelling the calling
    /// task interrupts the running cell and ends the run; the document keeps what ran.
    public func run(_ document: inout NotebookDocument, allowErrors: Bool,
                    progress: (Int, Int, String) -> Void = { _, _, _ in }) async -> Outcome {
        let outputs = NotebookOutputs(cellCount: document.cells.count, echo: echo)
        var outcome = Outcome()
        let codeCells = document.cells.indices.filter { document.cells[$0].type == "code" }
        for (position, index) in codeCells.enumerated() {
            if Task.isCancelled {
                outcome.interrupted = true
                break
            }
            let source = document.cells[index].source
            progress(position + 1, codeCells.count, String(source.prefix { $0 != "\n" }))
            let sink = outputs.sink(for: index)
            let count = outcome.cellsRun + 1
            let failure = await runCell(source, count: count, cellID: document.cells[index].fields["id"]?.stringValue, sink: sink)
            outcome.cellsRun += 1
            if let failure { sink.error(failure) }
            outputs.setExecutionCount(count, cell: index)
            document.cells[index].fields["execution_count"] = .int(count)
            if let failure {
                outcome.failures.append((index, failure))
                if failure == .interrupted && Task.isCancelled {
                    outcome.interrupted = true
                    break
                }
                if !allowErrors { break }
            }
        }
        // Outputs of every cell that ran, with what background jobs added since.
        for index in codeCells where document.cells[index].fields["execution_count"] != .null && document.cells[index].fields["execution_count"] != nil {
            document.cells[index].fields["outputs"] = .array(outputs.outputs(of: index))
        }
        return outcome
    }

    /// Runs one cell in its own task, cancelled by the caller's cancellation or the cell timeout.
    private func runCell(_ source: String, count: Int, cellID: String?, sink: NotebookOutputs.CellSink) async -> ExecutionError? {
        let evaluator = self.evaluator
        let cell = Task(priority: .userInitiated) { () async -> ExecutionError? in
            do throws(ExecutionError) {
                try await evaluator.execute(ExecutionRequest(code: source, executionCount: count, cellID: cellID), output: sink)
                return nil
            } catch {
                return error
            }
        }
        let timer = cellTimeout.map { limit in
            Task {
                try await Task.sleep(for: limit)
                cell.cancel()
            }
        }
        let failure = await withTaskCancellationHandler {
            await cell.value
        } onCancel: {
            cell.cancel()
        }
        // An interruption the caller did not ask for came from the timer.
        let timedOut = timer != nil && failure == .interrupted && !Task.isCancelled
        timer?.cancel()
        if timedOut, let limit = cellTimeout {
            return ExecutionError(name: "TimeoutError", message: "the cell ran longer than \(limit) and was cancelled",
                                  traceback: ["TimeoutError: the cell ran longer than \(limit) and was cancelled"])
        }
        return failure
    }
}
