import CPUBackend

/// x += postNorm(sublayer(norm(x))): the branch every decoder block is made of, each norm there
/// when the architecture has it (LLaMA's blocks norm before, OLMo 2's after, Gemma's both). The
/// branch's output is visited as `output` before it joins the residual stream, and the residual
/// as `after` once it has (the middle of the block, after its token mixer).
struct ResidualBranch: BlockStage {
    /// The RMSNorm weights of the sublayer's input (nil: the sublayer reads the residual rows).
    let norm: [Float]?
    let sublayer: any Sublayer
    /// The RMSNorm weights of the sublayer's output, when the architecture norms it.
    let postNorm: [Float]?
    /// The activation point of the branch's output (`.attentionOutput`, `.feedForwardOutput`).
    let output: ActivationPoint
    /// The activation point of the residual stream after the branch (`.blockMiddle`), if any.
    var after: ActivationPoint? = nil

    /// A token mixer's branch: its output is the attention output, the residual after it the
    /// block's middle.
    static func mixer(norm: [Float]?, _ mixer: any Sublayer, postNorm: [Float]? = nil) -> ResidualBranch {
        ResidualBranch(norm: norm, sublayer: mixer, postNorm: postNorm, output: .attentionOutput, after: .blockMiddle)
    }

    /// A feed-forward's branch.
    static func feedForward(norm: [Float]?, _ feedForward: any Sublayer, postNorm: [Float]? = nil) -> ResidualBranch {
        ResidualBranch(norm: norm, sublayer: feedForward, postNorm: postNorm, output: .feedForwardOutput)
    }

    var matrices: [Matrix] { sublayer.matrices }

    var scratch: [ScratchNeed] { sublayer.scratch }

    /// The branch over `count` residual rows `x`, its output in `state.normed`.
    func apply(to x: UnsafeMutablePointer<Float>, count: Int, layer: Int, configuration c: ModelConfiguration, state: InferenceState) {
        let width = c.embeddingLength, branch = state.normed
        if let norm { state.backend.rmsNorm(x, weights: norm, epsilon: c.rmsEpsilon, into: branch, count: count, width: width) }
        sublayer.apply(norm == nil ? x : branch, into: branch, count: count, layer: layer, configuration: c, state: state)
        if let postNorm { state.backend.rmsNorm(branch, weights: postNorm, epsilon: c.rmsEpsilon, into: branch, count: count, width: width) }
        state.visit(output, layer: layer, rows: branch, count: count, width: width)
        state.backend.add(branch, to: x, count: count * width)
        if let after { state.visit(after, layer: layer, rows: x, count: count, width: width) }
    }
}
