/// The stream an evaluator writes text to.
public enum StandardStream: String, Sendable {
    case stdout
    case stderr
}

/// Where an evaluator publishes what a cell produces. The Jupyter kernel, the terminal REPL and
/// the notebook runner each implement it; it knows nothing of sockets.
///
/// Methods other than `requestInput` hand the output over and return at once, in order: output
/// published by one call is seen before output published by a later call.
public protocol OutputSink: Sendable {
    /// Text written to stdout or stderr.
    func stream(_ stream: StandardStream, _ text: String)
    /// A rich display; with `displayID`, one that later `updateDisplay` calls replace.
    func display(_ bundle: MIMEBundle, displayID: String?)
    /// Replaces every display shown with `displayID`.
    func updateDisplay(_ bundle: MIMEBundle, displayID: String)
    /// The state of long work's progress indicator `id` (a progress bar), `finished` once it
    /// has reached its end. Each front end shows it as it can: redrawn in place on a terminal and
    /// in a Jupyter front end (as `stream` text that `\r` redraws, which every front end
    /// shows, where display updates are lost on some, jupyter console among them); in a pipe or
    /// a log only in its finished state.
    func progress(_ bundle: MIMEBundle, id: String, finished: Bool)
    /// Clears the cell's output, at once or (with `wait`) when new output arrives.
    func clearOutput(wait: Bool)
    /// The cell's value.
    func executeResult(_ bundle: MIMEBundle)
    /// An error that ended the cell.
    func error(_ error: ExecutionError)
    /// Documentation to show in the front end's pager (Jupyter's `page` payload).
    func page(_ bundle: MIMEBundle)
    /// The user asked to end the session (`exit`, `quit`): front ends that can end it do
    /// (jupyter console, `lumen repl`); a notebook ignores it.
    func askExit()
    /// A message for the front end's side of a comm (a widget's state); front ends without
    /// comms drop it.
    func comm(_ message: CommMessage)
    /// Whether the front end shows widgets (has comms), so a live control is worth making.
    var showsWidgets: Bool { get }
    /// Asks the user for a line of input.
    ///
    /// - Throws: `InputUnavailableError` when this front end cannot ask, `CancellationError`
    ///   when the cell is interrupted while waiting.
    func requestInput(prompt: String, password: Bool) async throws -> String
}

extension OutputSink {
    /// Front ends without a session to end (notebooks, runners) ignore the request.
    public func askExit() {}
    /// Front ends without comms (the terminal, `lumen run`) show a widget by its text and drop
    /// its messages.
    public func comm(_ message: CommMessage) {}
    /// Front ends without comms show widgets as text.
    public var showsWidgets: Bool { false }
}

/// Thrown by `OutputSink.requestInput` when the front end does not allow input.
public struct InputUnavailableError: Error, Equatable, CustomStringConvertible {
    /// Why input is not available.
    public let reason: String

    /// Creates the error.
    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
