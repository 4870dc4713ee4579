import Evaluation

/// A cell that starts with a magic, as the magic's method sees it.
struct MagicInvocation: Sendable {
    /// The first line's words, the magic's name first.
    let words: [String]
    /// The first line.
    let firstLine: String
    /// The cell's lines after the first.
    let rest: String
    /// The cell's request.
    let request: ExecutionRequest

    /// A request that runs `code` in the cell's place: the cell's count and silence, not stored
    /// in history (the cell itself is).
    func request(running code: String) -> ExecutionRequest {
        ExecutionRequest(code: code, executionCount: request.executionCount, storeHistory: false, silent: request.silent)
    }
}
