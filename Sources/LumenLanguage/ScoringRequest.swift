import Foundation

/// What to score: a text given inline or read from a file, and the context of
/// llama-perplexity's windows (nil: the whole text as one window).
struct ScoringRequest {
    let text: String
    let context: Int?
    /// What the run log keeps of the request: the text, or the file's path.
    let logged: String

    /// Reads the text (positional) or `file:` and `context:` from `arguments`.
    init(_ arguments: inout Arguments, at location: SourceLocation) throws(LumenError) {
        let inline = try arguments.nextPositional().map { (argument) throws(LumenError) in try arguments.string(argument, "text") }
        let file = try arguments.labelledString("file")
        let context = try arguments.labelledInteger("context")
        switch (inline, file) {
        case (let text?, nil):
            self.text = text
            self.context = context
            logged = text
        case (nil, let path?):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw LumenError(.input, "cannot read \(path)", at: location)
            }
            self.text = String(decoding: data, as: UTF8.self)
            self.context = context ?? ModelLibrary.defaultFileContext
            logged = "file: " + path
        default:
            throw LumenError(.type, "give the text or file:, not both", at: location)
        }
        if let context, context < 4 {
            throw LumenError(.value, "context must be at least 4 tokens", at: location)
        }
    }
}
