import GenerationTypes

/// One generation's speculative decoding: asks its drafter for tokens to verify, adapting how
/// many to how many were accepted — a few at first, twice as many after all were accepted (up
/// to `draftMax`), fewer after one fails, and none for a while after drafts fail outright (or a
/// draft model declines), so text where drafts fail runs about as fast as without them — and
/// counts drafted and accepted tokens.
struct Speculator {
    private var drafter: any Drafter
    private let draftMax: Int
    /// How many tokens the next draft may have.
    private var limit: Int
    /// Steps left to generate without drafting, after a miss.
    private var pause = 0
    /// Misses (drafts that all failed, or a costly drafter's empty draft) less successes since,
    /// at least 0: the next pause is 2^misses - 1 steps.
    private var misses = 0
    /// Tokens drafted, and of them accepted.
    private(set) var drafted = 0
    private(set) var accepted = 0

    /// The draft length a generation starts with: drafts earn longer ones.
    static let firstLimit = 4

    init(drafter: any Drafter, draftMax: Int) {
        self.drafter = drafter
        self.draftMax = max(1, draftMax)
        limit = min(self.draftMax, Self.firstLimit)
    }

    /// Lets the drafter read `prompt` while the model reads it.
    mutating func prepare(prompt: [Int32]) {
        drafter.prepare(prompt: prompt)
    }

    /// The tokens to verify after `context`, at most `room` (the context is made only when the
    /// drafter is asked).
    mutating func draft(after context: @autoclosure () -> [Int32], room: Int) -> [Int32] {
        guard pause == 0 else {
            pause -= 1
            return []
        }
        let drafts = drafter.draft(after: context(), count: min(limit, room))
        if drafts.isEmpty, drafter.asksCost, room > 0 { missed() }
        return drafts
    }

    /// Drafts failed outright, or a costly drafter proposed nothing: fewer next time, and none
    /// for twice as long as after the last such miss.
    private mutating func missed() {
        misses += 1
        limit = max(1, limit / 2)
        pause = (1 << min(misses, 10)) - 1
    }

    /// Takes the outcome of a verification: `accepted` of `count` drafts were the tokens drawn.
    mutating func verified(_ count: Int, accepted taken: Int) {
        drafted += count
        accepted += taken
        // A success shortens the next pause by half, rather than forgetting the misses: on text
        // where drafts mostly fail, a rare success does not bring back frequent drafting.
        if taken == count {
            misses = max(0, misses - 1)
            limit = min(draftMax, 2 * limit)
        } else if taken == 0 {
            missed()
        } else {
            misses = max(0, misses - 1)
            limit = max(1, taken + 1)
        }
    }
}
