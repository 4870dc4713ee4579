import Display
import Evaluation
import Foundation
import LumenLanguage
import SparseAutoencoders
import Tensors

/// A sparse autoencoder in cells (`loadSAE(path)`): its features' encoder and decoder over one
/// hook point, with `encode`, `decode` and `direction` as methods.
final class SAEObject: MemberTableHostObject {
    /// The SAE.
    let sae: SparseAutoencoder
    /// The absolute path it was read from, as the run log keeps it.
    let path: String
    /// The input scale folded in when it was read (`loadSAE(…, inputScale:)`).
    let inputScale: Double?

    init(sae: SparseAutoencoder, path: String, inputScale: Double?) {
        self.sae = sae
        self.path = path
        self.inputScale = inputScale
    }

    var typeName: String { "SAE" }
    static let memberTable = MemberTable<SAEObject>(properties: [
        ("architecture", { .string($0.sae.architecture.name) }),
        ("hook", { .string($0.sae.hookName) }),
        ("point", { .string($0.sae.point.rawValue) }),
        ("block", { $0.sae.block.map(Value.integer) ?? .null }),
        ("dIn", { .integer($0.sae.inputWidth) }),
        ("dSAE", { .integer($0.sae.featureCount) }),
        ("k", { if case .topK(let k) = $0.sae.architecture { .integer(k) } else { .null } }),
    ], methods: [ModelLibrary.encode, ModelLibrary.decode, ModelLibrary.direction])

    var summary: String {
        "SAE(\(sae.architecture), \(sae.featureCount) features over \(sae.hookName), d_in \(sae.inputWidth), from \((path as NSString).lastPathComponent))"
    }
    var mimeBundle: MIMEBundle {
        MIMEBundle(["text/html": "<p>\(HTML.escape(summary))</p>", "text/plain": summary])
    }
}
