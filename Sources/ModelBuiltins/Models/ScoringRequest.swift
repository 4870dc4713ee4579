import Executors
import Foundation
import Inference
import LumenLanguage
import Scoring

/// What to score: a text given inline or read from a file, and the context of
/// llama-perplexity's windows (nil: the whole text as one window).
struct ScoringRequest: Sendable {
    private let inline: String?
    private let path: String?
    private let location: SourceLocation
    let context: Int?
    /// What the run log keeps of the request: the text, or the file's path.
    let logged: String

    /// Reads the text (positional) or `file:` and `context:` from `arguments`.
    init(_ arguments: inout Arguments, at location: SourceLocation) throws(LumenError) {
        inline = try arguments.nextPositional().map { (argument) throws(LumenError) in try arguments.string(argument, "text") }
        path = try arguments.labelledString("file")
        self.location = location
        let context = try arguments.labelledInteger("context")
        switch (inline, path) {
        case (let text?, nil):
            self.context = context
            logged = text
        case (nil, let path?):
            self.context = context ?? ModelLibrary.defaultFileContext
            logged = "file: " + path
        default:
            throw LumenError(.type, "give the text or file:, not both", at: location)
        }
        if let context, context < 4 {
            throw LumenError(.value, "context must be at least 4 tokens", at: location)
        }
    }

    /// The text, given or read from the file (blocking: on a thread of the caller's).
    private func readText() throws(LumenError) -> String {
        guard let path else { return inline ?? "" }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LumenError(.input, "cannot read \(path)", at: location)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The text, read on a thread of its own when it is a file's.
    func text() async throws(LumenError) -> String {
        let request = self
        return try await DedicatedThread.run(name: "lumen-read") { () throws(LumenError) in try request.readText() }
    }

    /// The text's tokens and the windows to score with `base` (and to compare `other` with it,
    /// which must tokenize the text alike). Reading a file and tokenizing a long text take a
    /// while, so both run on a thread of their own.
    func windows(base: ModelSession, other: ModelSession? = nil) async throws(LumenError) -> (tokens: [Int32], windows: ScoringWindows) {
        let request = self
        return try await DedicatedThread.run(name: "lumen-tokenize") { () throws(LumenError) in
            let text = try request.readText()
            do throws(ScoringError) {
                if let other { return try TextScoring.windows(for: text, base: base, model: other, context: request.context) }
                return try TextScoring.windows(for: text, session: base, context: request.context)
            } catch {
                let hint = error.fittingContext.map { "; context: \($0) fits it, and without context: the whole text is one window" } ?? ""
                throw LumenError(.value, error.reason + hint, at: request.location)
            }
        }
    }
}
