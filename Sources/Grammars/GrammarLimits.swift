/// Bounds on what a grammar may cost to compile and to follow, so that a hostile grammar, JSON
/// schema or regular expression is refused with an error naming the bound and where it was
/// crossed, never exhausting the stack, memory or time. Compiling is linear in the grammar's
/// size, and every bound below is checked as it is reached.
///
/// `lumen serve` sets the first four with `--grammar-max-nesting`, `--grammar-max-rules`,
/// `--grammar-max-alternatives` and `--grammar-max-symbols`; cells and the other commands use
/// the defaults.
public struct GrammarLimits: Sendable, Hashable {
    /// How deep groups may nest inside groups (`((…))`).
    public var nesting = 256
    /// The most rules: those written, and those groups and repetitions add.
    public var rules = 20_000
    /// The most alternatives one rule (or group) may have.
    public var alternatives = 10_000
    /// The most symbols in all the rules together, after repetitions are rewritten.
    public var symbols = 1_000_000
    /// The most parse stacks following one output may intern (each a few dozen bytes); states,
    /// each with a table of 128 transitions, are bounded to an eighth of that.
    public var stacks = 1_000_000
    /// The most stack steps computing what may follow one token may take (about 20 ms each
    /// million): past it, the grammar is too ambiguous to follow and the generation fails.
    public var stepsPerToken = 50_000_000

    /// The defaults above.
    public init() {}

    /// The defaults.
    public static let standard = GrammarLimits()
}
