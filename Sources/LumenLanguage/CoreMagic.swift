import Evaluation

/// A magic the interpreter itself handles (`Interpreter.coreMagics`): its name, what it does,
/// and the interpreter's method that does it. Libraries' magics are `Magic`s.
struct CoreMagic: Sendable {
    /// What runs the magic: on the interpreter, with the cell, sending output to the sink.
    typealias Run = @Sendable (isolated Interpreter, MagicInvocation, any OutputSink) async throws -> Void

    /// The name with its `%` (or `%%`).
    let name: String
    /// One line saying what it does, as `%lsmagic` lists it.
    let summary: String
    /// Runs the magic.
    let run: Run
}
