import Display
import Evaluation
import Foundation
import Inference
import LumenLanguage
import RunLog

/// A control vector in cells (`controlVector(path)`, `steeringVector(m, positive:, negative:)`):
/// a direction per block, which `generate(…, steer:)` adds to the residual stream.
final class ControlVectorObject: MemberTableHostObject {
    /// The directions.
    let vector: ControlVector
    /// Where it came from, as the run log keeps it so `replay` can make it again.
    let source: RunSteering.Vector

    init(vector: ControlVector, source: RunSteering.Vector) {
        self.vector = vector
        self.source = source
    }

    var typeName: String { "ControlVector" }
    static let memberTable = MemberTable<ControlVectorObject>(properties: [
        ("blocks", { .array($0.vector.directions.keys.sorted().map(Value.integer)) }),
        ("width", { .integer($0.vector.width) }),
        ("norms", { .array($0.norms.map { .double(Double($0)) }) }),
    ], methods: [ModelLibrary.normalize])

    /// Each block's direction's Euclidean norm, by block: what `steerScale` multiplies, so a
    /// vector of norms in the hundreds needs a far smaller scale than one of unit norms.
    var norms: [Float] {
        vector.directions.keys.sorted().map { block in (vector.directions[block] ?? []).reduce(0) { $0 + $1 * $1 }.squareRoot() }
    }

    var summary: String {
        let blocks = vector.directions.keys.sorted()
        let span = blocks.first.map { first in "blocks \(first)…\(blocks.last ?? first)" } ?? "no blocks"
        let norms = self.norms
        let range = norms.isEmpty ? "" : String(format: ", norms %.3g to %.3g", Double(norms.min() ?? 0), Double(norms.max() ?? 0))
        return "ControlVector(\(blocks.count) directions of \(vector.width), \(span)\(range), from \(source.description))"
    }
    /// The summary, then each block's norm.
    var mimeBundle: MIMEBundle {
        let table = Table(columns: ["block", "norm"], rows: zip(vector.directions.keys.sorted(), norms).map { [String($0), String(format: "%.4g", Double($1))] })
        return MIMEBundle(["text/html": "<p>\(HTML.escape(summary))</p>\n" + table.html, "text/plain": summary + "\n" + table.plainText])
    }
}

extension RunSteering.Vector {
    /// Where the vector came from, in words.
    var description: String {
        let normalizedNote = normalized == true ? ", normalized" : ""
        if let path { return (path as NSString).lastPathComponent + normalizedNote }
        if let values { return "a direction of \(values.count) values" + normalizedNote }
        let made = "\(positive?.count ?? 0) positive and \(negative?.count ?? 0) negative prompts" + (method.map { " by \($0)" } ?? "")
        return made + normalizedNote
    }
}
