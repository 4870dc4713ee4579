import CPUBackend
import GenerationTypes
import Grammars
/// The token side of one generation, step by step, with its own copy of the pipeline's
/// processors, grammar, sampler and stop conditions: draws each token from the logits, says whether it
/// ends the generation, and which token to run next (the drawn one, or the forced one when
/// teacher-forcing). The session runs the forward passes; `TextStream` turns tokens into text.
struct TokenSteps {
    private var processors: [any LogitProcessor]
    private var grammar: GrammarMatcher?
    private var sampler: any TokenSampler
    private var stopConditions: [any StopCondition]
    private let forcedTokens: [Int32]
    /// Tokens drawn so far.
    private var drawn = 0
    /// The logits the processors change, reused from step to step.
    private var processed: [Float] = []
    /// All -infinity but for the candidates a grammar allows while a token is drawn among them.
    private var restricted: [Float] = []

    /// The steps of a generation after `prompt`, feeding `forcedTokens` in turn after each step;
    /// `trie` gives the vocabulary the pipeline's grammar is followed over (the model's, built on
    /// first use: so on the session's thread).
    init(pipeline: GenerationPipeline, prompt: [Int32], forcedTokens: [Int32], trie: @autoclosure () -> TokenTrie) {
        processors = pipeline.processors
        for index in processors.indices { processors[index].start(prompt: prompt) }
        grammar = pipeline.grammar.map { GrammarMatcher($0, trie: trie()) }
        sampler = pipeline.sampler
        stopConditions = pipeline.stopConditions
        self.forcedTokens = forcedTokens
    }

    /// Draws the next token from `logits`, with its log-probability under the model (the
    /// logits before the processors and the grammar); nil when the grammar allows no token. The
    /// grammar takes the token drawn.
    mutating func draw(from logits: UnsafeBufferPointer<Float>) -> (token: Int32, logProbability: Float)? {
        drawn += 1
        let processing = !processors.isEmpty
        if processing { copyProcessed(logits) }
        let token: Int32
        if grammar == nil {
            token = processing ? processed.withUnsafeBufferPointer { sampler.sample($0) } : sampler.sample(logits)
        } else {
            // A second reference to the processed logits (no copy), as drawing changes self.
            let scores = processing ? processed : nil
            let drawn = scores.map { array in array.withUnsafeBufferPointer { drawAmongAllowedTop($0) } } ?? drawAmongAllowedTop(logits)
            if let drawn {
                token = drawn
            } else {
                if !processing { copyProcessed(logits) }
                guard let masked = processed.withUnsafeMutableBufferPointer({ buffer in grammar!.mask(buffer) ? sampler.sample(UnsafeBufferPointer(buffer)) : nil })
                else { return nil }
                token = masked
            }
            grammar!.accept(token)
        }
        return (token, logits[Int(token)] - LogSoftmax.logNormalizer(logits))
    }

    /// The token the sampler draws from `scores` with the grammar's refused tokens masked, found
    /// without masking the whole vocabulary: when the sampler draws among its `candidateLimit`
    /// highest scores, the likeliest tokens are checked one by one until that many are allowed,
    /// and the sampler draws among those alone — the same candidates, in the same order, as
    /// after a full mask. Nil when the sampler may draw any token, or too few of the likeliest
    /// are allowed (then the whole vocabulary is masked).
    private mutating func drawAmongAllowedTop(_ scores: UnsafeBufferPointer<Float>) -> Int32? {
        guard let limit = sampler.candidateLimit else { return nil }
        let looked = LogSoftmax.highest(scores, count: max(64, 4 * limit))
        var allowed: [Int32] = []
        for candidate in looked where grammar!.allows(candidate) {
            allowed.append(candidate)
            if allowed.count == limit { break }
        }
        // Fewer than the limit allowed among all the tokens there are is a whole answer too.
        guard allowed.count == limit || (looked.count == scores.count && !allowed.isEmpty) else { return nil }
        if limit == 1 { return allowed[0] }
        if restricted.count != scores.count { restricted = [Float](repeating: -.infinity, count: scores.count) }
        for candidate in allowed { restricted[Int(candidate)] = scores[Int(candidate)] }
        let token = restricted.withUnsafeBufferPointer { sampler.sample($0) }
        for candidate in allowed { restricted[Int(candidate)] = -.infinity }
        return token
    }

    /// Why the grammar could not be followed, when following it crossed one of its limits.
    var grammarOverrun: String? { grammar?.overrun }

    /// Whether the grammar is complete: nothing may follow the output.
    var outputComplete: Bool { grammar?.isComplete ?? false }

    /// Copies `logits` into `processed` and runs the processors on them.
    private mutating func copyProcessed(_ logits: UnsafeBufferPointer<Float>) {
        processed.removeAll(keepingCapacity: true)
        processed.append(contentsOf: logits)
        processed.withUnsafeMutableBufferPointer { buffer in
            for index in processors.indices { processors[index].process(buffer) }
        }
    }

    /// Why the generation ends with `token`: the first stop condition's answer.
    mutating func finishReason(at token: Int32) -> FinishReason? {
        for index in stopConditions.indices {
            if let reason = stopConditions[index].finish(at: token) { return reason }
        }
        return nil
    }

    /// The token to run after drawing `token`: the forced one at this step when teacher-forcing,
    /// else `token`; the processors see it join the sequence.
    mutating func next(after token: Int32) -> Int32 {
        let step = drawn - 1
        let fed = step < forcedTokens.count ? forcedTokens[step] : token
        for index in processors.indices { processors[index].didAppend(fed) }
        return fed
    }
}
