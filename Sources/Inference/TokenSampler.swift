/// The token side of a generation: draws each token from the logits with the options' sampler
/// (and its repetition penalty over what came before), keeps the tokens run so far, and says
/// which token to run next (the sampled one, or the forced one when teacher-forcing). The
/// session runs the forward passes; `TextStream` turns the tokens into text.
struct TokenSampler {
    private var sampler: Sampler
    private var history: [Int32]
    private let forcedTokens: [Int32]
    /// Tokens drawn so far.
    private(set) var drawn = 0

    /// A sampler for a generation after `prompt`.
    init(options: GenerationOptions, prompt: [Int32]) {
        sampler = Sampler(options: options.sampling)
        history = prompt
        forcedTokens = options.forcedTokens
    }

    /// Draws the next token from `logits`, with its log-probability.
    mutating func draw(from logits: UnsafeBufferPointer<Float>) -> (token: Int32, logProbability: Float) {
        drawn += 1
        return sampler.sample(logits, recent: history[...])
    }

    /// The token to run after drawing `token`: the forced one at this step when teacher-forcing,
    /// else `token`; it joins the history the penalty looks at.
    mutating func next(after token: Int32) -> Int32 {
        let step = drawn - 1
        let fed = step < forcedTokens.count ? forcedTokens[step] : token
        history.append(fed)
        return fed
    }
}
