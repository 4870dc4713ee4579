/// How a contrastive steering vector turns the prompts' residual streams into one direction per
/// block (`ControlVector.contrastive`, `steeringVector(…, method:)`).
public enum ContrastiveMethod: String, CaseIterable, Codable, Sendable {
    /// The mean over the positive prompts of the residual stream at their last token, minus the
    /// same mean over the negative ones (CAA): at the residual stream's own scale, prompts need
    /// not pair up. The default.
    case last
    /// llama-cvector-generator's `--method mean`: prompts in pairs (positive i with negative i),
    /// each pair padded to one length with the token of " ", the difference at every position
    /// (rows of zeros dropped) averaged, then scaled to unit length.
    case mean
    /// llama-cvector-generator's `--method pca`: the first principal direction of those
    /// differences (the eigenvector of DᵀD with the largest eigenvalue, by power iteration), unit
    /// length; its sign chosen so that the mean difference points along it (llama.cpp's is random).
    case pca

    /// The names, as `method:` takes them.
    public static var names: String { allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ") }
}
