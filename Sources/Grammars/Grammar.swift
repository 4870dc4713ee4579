/// A context-free grammar over Unicode code points, the form llama.cpp's GBNF grammars compile to:
/// rules of alternatives, each a sequence of character classes, references to rules and (where a
/// grammar names them) single tokens. Repetitions are already rewritten into rules. Build one from
/// GBNF text (`init(gbnf:)`) or from an `OutputConstraint`.
public struct Grammar: Sendable {
    /// One element of an alternative.
    enum Symbol: Hashable, Sendable {
        /// A code point of `classes[index]`.
        case characters(Int32)
        /// Whatever `rules[index]` matches.
        case rule(Int32)
        /// Exactly this token (`<[id]>`, `<think>`).
        case token(Int32)
        /// Any one token but this one (`!<[id]>`).
        case anyTokenExcept(Int32)
    }

    /// Each rule's alternatives; an empty alternative matches the empty string.
    let rules: [[[Symbol]]]
    /// Each rule's name (`root`, `value`, `value_3` for one a rewrite made).
    let ruleNames: [String]
    /// The character classes symbols refer to.
    let classes: [CharacterClass]
    /// The rule the whole output must match.
    let root: Int32
    /// The bounds it was compiled within, and that following it keeps to.
    public let limits: GrammarLimits

    /// Checks the rules: a rule that can begin with itself (left recursion, which a top-down
    /// matcher cannot expand) is an error located at `location(rule)`. The checks take time and
    /// memory linear in the grammar's size, and no recursion.
    init(rules: [[[Symbol]]], ruleNames: [String], classes: [CharacterClass], root: Int32, source: String,
         location: (Int) -> GrammarError.Location, limits: GrammarLimits = .standard) throws(GrammarError) {
        self.rules = rules
        self.ruleNames = ruleNames
        self.classes = classes
        self.root = root
        self.limits = limits
        if let recursive = leftRecursiveRule() {
            throw GrammarError(source, at: location(recursive), "rule \"\(ruleNames[recursive])\" is left-recursive (it can begin with itself); rewrite it with repetition, as x ::= y (\"+\" y)*")
        }
    }

    /// Which rules match the empty string: a worklist over the alternatives made only of rule
    /// references, each counting its references not yet known to be nullable.
    private func nullableRules() -> [Bool] {
        var nullable = [Bool](repeating: false, count: rules.count)
        // Per alternative of references only: its rule and how many references remain unknown.
        var owners: [Int] = []
        var remaining: [Int] = []
        // Per rule: the alternatives (indices into the above) it is referred to in, once per reference.
        var referrers = [[Int]](repeating: [], count: rules.count)
        var queue: [Int] = []
        for (rule, alternatives) in rules.enumerated() {
            for sequence in alternatives {
                guard sequence.allSatisfy({ if case .rule = $0 { true } else { false } }) else { continue }
                if sequence.isEmpty {
                    if !nullable[rule] {
                        nullable[rule] = true
                        queue.append(rule)
                    }
                    continue
                }
                let alternative = owners.count
                owners.append(rule)
                remaining.append(sequence.count)
                for case .rule(let other) in sequence { referrers[Int(other)].append(alternative) }
            }
        }
        while let rule = queue.popLast() {
            for alternative in referrers[rule] {
                remaining[alternative] -= 1
                let owner = owners[alternative]
                if remaining[alternative] == 0, !nullable[owner] {
                    nullable[owner] = true
                    queue.append(owner)
                }
            }
        }
        return nullable
    }

    /// A rule that can reach itself without consuming anything, if any.
    private func leftRecursiveRule() -> Int? {
        let nullable = nullableRules()
        // The rules each rule can begin with: leading references, past nullable ones.
        let leading: [[Int]] = rules.map { alternatives in
            var found: [Int] = []
            for sequence in alternatives {
                for symbol in sequence {
                    guard case .rule(let other) = symbol else { break }
                    found.append(Int(other))
                    if !nullable[Int(other)] { break }
                }
            }
            return found
        }
        // Depth-first search for a cycle, with a stack of its own: 0 unvisited, 1 on the path, 2 done.
        var mark = [UInt8](repeating: 0, count: rules.count)
        var path: [(rule: Int, next: Int)] = []
        for start in rules.indices where mark[start] == 0 {
            mark[start] = 1
            path.append((start, 0))
            while let (rule, next) = path.last {
                guard next < leading[rule].count else {
                    mark[rule] = 2
                    path.removeLast()
                    continue
                }
                path[path.count - 1].next += 1
                let following = leading[rule][next]
                if mark[following] == 1 { return following }
                if mark[following] == 0 {
                    mark[following] = 1
                    path.append((following, 0))
                }
            }
        }
        return nil
    }
}
