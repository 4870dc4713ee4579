/// Drafts from the context itself (prompt lookup, llama.cpp's `llama-lookup`): finds the latest
/// earlier occurrence of the context's last `ngram` tokens and proposes the tokens that followed
/// it. Text that repeats or quotes its prompt (rewriting, editing, code) drafts well.
struct PromptLookup: Drafter {
    /// How many of the last tokens must match.
    let ngram: Int
    /// A search of the context costs next to nothing.
    var asksCost: Bool { false }

    func draft(after context: [Int32], count: Int) -> [Int32] {
        guard ngram > 0, count > 0, context.count > ngram else { return [] }
        let suffix = context[(context.count - ngram)...]
        // The latest start of an earlier occurrence, the suffix itself excluded.
        var start = context.count - ngram - 1
        while start >= 0 {
            if context[start..<(start + ngram)].elementsEqual(suffix) {
                let following = start + ngram
                return Array(context[following..<min(context.count, following + count)])
            }
            start -= 1
        }
        return []
    }
}
