import Display
import Evaluation
import LumenLanguage
import Tokenizers

/// Tokens as data (`tokenize(m, text)`): indexed (`t[0]`, `t[-1]`: an id), sliced (`t[1...]`:
/// Tokens), counted (`len(t)`) and iterated (`for id in t`: the ids), with `ids`, `pieces` (each
/// token's text, byte fragments as `<0x..>`) and `text`; shown as a table of index, id and piece.
final class TokensObject: MemberTableHostObject, IndexableHostObject {
    /// The token ids.
    let ids: [Int32]
    /// The tokenizer the ids belong to.
    let tokenizer: Tokenizer

    init(ids: [Int32], tokenizer: Tokenizer) {
        self.ids = ids
        self.tokenizer = tokenizer
    }

    var typeName: String { "Tokens" }
    static let memberTable = MemberTable<TokensObject>(properties: [
        ("ids", { .array($0.ids.map { .integer(Int($0)) }) }),
        ("pieces", { object in .array(object.ids.map { .string(object.tokenizer.textPiece($0)) }) }),
        ("text", { .string($0.tokenizer.decode($0.ids)) }),
        ("count", { .integer($0.ids.count) }),
    ])

    var count: Int { ids.count }

    /// The id at `index`.
    func element(at index: Int) -> Value? {
        ids.indices.contains(index) ? .integer(Int(ids[index])) : nil
    }

    /// The Tokens at `range`.
    func slice(_ range: Range<Int>) -> Value? {
        .host(TokensObject(ids: Array(ids[range]), tokenizer: tokenizer))
    }

    var summary: String {
        "Tokens(\(ids.count): " + ids.prefix(12).map { tokenizer.visiblePiece($0).debugDescription }.joined(separator: " ") + (ids.count > 12 ? " …" : "") + ")"
    }

    var mimeBundle: MIMEBundle {
        Table(columns: ["index", "id", "piece"], rows: ids.enumerated().map { [String($0.offset), String($0.element), tokenizer.visiblePiece($0.element)] }).mimeBundle
    }
}
