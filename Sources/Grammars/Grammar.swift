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

    /// Checks the rules: a rule that can begin with itself (left recursion, which a top-down
    /// matcher cannot expand) is an error located at `locations[rule]`.
    init(rules: [[[Symbol]]], ruleNames: [String], classes: [CharacterClass], root: Int32, source: String,
         locations: [GrammarError.Location]) throws(GrammarError) {
        self.rules = rules
        self.ruleNames = ruleNames
        self.classes = classes
        self.root = root
        if let recursive = leftRecursiveRule() {
            throw GrammarError(source, at: locations[recursive], "rule \"\(ruleNames[recursive])\" is left-recursive (it can begin with itself); rewrite it with repetition, as x ::= y (\"+\" y)*")
        }
    }

    /// Which rules match the empty string.
    private func nullableRules() -> [Bool] {
        var nullable = [Bool](repeating: false, count: rules.count)
        var changed = true
        while changed {
            changed = false
            for (index, alternatives) in rules.enumerated() where !nullable[index] {
                let empty = alternatives.contains { sequence in
                    sequence.allSatisfy { if case .rule(let other) = $0 { nullable[Int(other)] } else { false } }
                }
                if empty {
                    nullable[index] = true
                    changed = true
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
        // Depth-first search for a cycle: 0 unvisited, 1 on the path, 2 done.
        var mark = [UInt8](repeating: 0, count: rules.count)
        func cycle(from rule: Int) -> Int? {
            mark[rule] = 1
            for next in leading[rule] {
                if mark[next] == 1 { return next }
                if mark[next] == 0, let found = cycle(from: next) { return found }
            }
            mark[rule] = 2
            return nil
        }
        for rule in rules.indices where mark[rule] == 0 {
            if let found = cycle(from: rule) { return found }
        }
        return nil
    }
}
