/// A grammar run as a pushdown automaton over code points, as llama.cpp runs it: a state is the
/// set of parse stacks still alive, each stack's top a terminal (a character class or a token)
/// or nothing left to match (the output may end there). Stacks and states are interned, so
/// equal ones share an id, and transitions are remembered: after a few steps a generation mostly
/// looks transitions up (ASCII ones in a flat table). Within the grammar's `limits`: past its
/// stacks, states or steps per token it stops (`overrun` says why) and every state is dead.
struct GrammarAutomaton: Sendable {
    /// The state with no stack: nothing can follow.
    static let dead: Int32 = 0
    /// The stack with nothing left to match.
    static let emptyStack: Int32 = -1

    /// Every alternative's symbols, one after another.
    private let symbols: [Grammar.Symbol]
    /// Whether the symbol after each is in the same alternative.
    private let continues: [Bool]
    /// Each rule's alternatives: the position of their first symbol, or -1 for an empty one.
    private let alternativeStarts: [[Int32]]
    private let classes: [CharacterClass]

    /// Each stack: its top symbol's position and the stack below it (or `emptyStack`).
    private var stacks: [(top: Int32, below: Int32)] = []
    private var stackIndex: [UInt64: Int32] = [:]
    /// The stacks with terminal tops a stack stands for, for stacks whose top is a rule.
    private var closures: [Int32: [Int32]] = [:]

    /// Each state's stacks, sorted (so `emptyStack` comes first when present).
    private var states: [[Int32]] = [[]]
    private var stateIndex: [[Int32]: Int32] = [[]: 0]
    /// The state after each state and ASCII code point (`state * 128 + code`), -1 until known.
    private var asciiTransitions = [Int32](repeating: -1, count: 128)
    private var otherTransitions: [UInt64: Int32] = [:]
    /// Per state, the state after any code point past ASCII when each stack takes all of them or
    /// none (so all lead to one state: inside a JSON string, say); -1 when they differ, -2 until
    /// known.
    private var beyondASCIITransitions: [Int32] = [-2]

    /// The state before any output.
    private(set) var initial: Int32 = 0

    private let limits: GrammarLimits
    /// Stack steps taken since `beginToken`.
    private var steps = 0
    /// Why the automaton stopped following the grammar, once a limit is crossed.
    private(set) var overrun: String?

    init(_ grammar: Grammar) {
        limits = grammar.limits
        var symbols: [Grammar.Symbol] = []
        var continues: [Bool] = []
        var starts: [[Int32]] = []
        for alternatives in grammar.rules {
            var ruleStarts: [Int32] = []
            for sequence in alternatives {
                ruleStarts.append(sequence.isEmpty ? -1 : Int32(symbols.count))
                for (index, symbol) in sequence.enumerated() {
                    symbols.append(symbol)
                    continues.append(index + 1 < sequence.count)
                }
            }
            starts.append(ruleStarts)
        }
        self.symbols = symbols
        self.continues = continues
        alternativeStarts = starts
        classes = grammar.classes
        var start: [Int32] = []
        for alternative in starts[Int(grammar.root)] {
            closure(of: alternative < 0 ? Self.emptyStack : push(alternative, on: Self.emptyStack), into: &start)
        }
        initial = state(of: start)
    }

    /// Starts counting the steps of one token against `limits.stepsPerToken`.
    mutating func beginToken() {
        steps = 0
    }

    /// Counts `count` stack steps; false (and `overrun` set) once past a limit.
    private mutating func spend(_ count: Int) -> Bool {
        guard overrun == nil else { return false }
        steps += count
        if steps > limits.stepsPerToken {
            overrun = "following the grammar took more than \(limits.stepsPerToken) steps for one token: it is too ambiguous"
        } else if stacks.count > limits.stacks {
            overrun = "following the grammar needed more than \(limits.stacks) parse stacks: it is too ambiguous"
        } else if states.count > limits.stacks / 8 {
            overrun = "following the grammar needed more than \(limits.stacks / 8) states: it is too ambiguous"
        }
        return overrun == nil
    }

    // MARK: - States

    /// Whether the output may end in `state`.
    func accepts(_ state: Int32) -> Bool {
        states[Int(state)].first == Self.emptyStack
    }

    /// Whether the output must end in `state`: it may, and nothing can follow.
    func isComplete(_ state: Int32) -> Bool {
        states[Int(state)] == [Self.emptyStack]
    }

    /// The state after `code` in `state` (`dead` when no stack takes it).
    @inline(__always)
    mutating func next(_ state: Int32, _ code: UInt32) -> Int32 {
        if code < 128 {
            let slot = Int(state) &* 128 &+ Int(code)
            let known = asciiTransitions[slot]
            if known >= 0 { return known }
            let found = computeNext(state, code)
            asciiTransitions[slot] = found
            return found
        }
        if let uniform = nextBeyondASCII(state) { return uniform }
        let key = UInt64(UInt32(bitPattern: state)) << 32 | UInt64(code)
        if let known = otherTransitions[key] { return known }
        let found = computeNext(state, code)
        otherTransitions[key] = found
        return found
    }

    /// The state after any code point past ASCII, when that is one state for all of them.
    mutating func nextBeyondASCII(_ state: Int32) -> Int32? {
        let known = beyondASCIITransitions[Int(state)]
        if known >= 0 { return known }
        if known == -1 { return nil }
        let uniform = states[Int(state)].allSatisfy { stack in
            guard stack != Self.emptyStack, case .characters(let index) = symbols[Int(stacks[Int(stack)].top)] else { return true }
            return classes[Int(index)].takesAllOrNoneBeyondASCII
        }
        let found = uniform ? computeNext(state, 0x80) : -1
        beyondASCIITransitions[Int(state)] = found
        return uniform ? found : nil
    }

    private mutating func computeNext(_ state: Int32, _ code: UInt32) -> Int32 {
        guard spend(states[Int(state)].count) else { return Self.dead }
        var result: [Int32] = []
        for stack in states[Int(state)] where stack != Self.emptyStack {
            let (top, below) = stacks[Int(stack)]
            if case .characters(let index) = symbols[Int(top)], classes[Int(index)].contains(code) {
                closure(of: continues[Int(top)] ? push(top + 1, on: below) : below, into: &result)
            }
        }
        return self.state(of: result)
    }

    /// Whether `state` can take the rest of the character `prefix` begins (a token ending inside
    /// it): some stack takes one of the code points it may become. Where every character past
    /// ASCII leads to one state, exactly when that state is alive.
    mutating func canFinish(_ prefix: UTF8Prefix, in state: Int32) -> Bool {
        guard let completions = prefix.completions else { return false }
        if let uniform = nextBeyondASCII(state) { return uniform != Self.dead }
        return states[Int(state)].contains { stack in
            guard stack != Self.emptyStack, case .characters(let index) = symbols[Int(stacks[Int(stack)].top)] else { return false }
            return classes[Int(index)].overlaps(completions)
        }
    }

    /// Whether a stack of `state` has a token element on top.
    func hasTokenTops(_ state: Int32) -> Bool {
        states[Int(state)].contains { stack in
            guard stack != Self.emptyStack else { return false }
            switch symbols[Int(stacks[Int(stack)].top)] {
            case .token, .anyTokenExcept: return true
            default: return false
            }
        }
    }

    /// The token elements on top of `state`'s stacks: a token, or every token but one (negated).
    func tokenTops(_ state: Int32) -> [(token: Int32, negated: Bool)] {
        states[Int(state)].compactMap { stack in
            guard stack != Self.emptyStack else { return nil }
            switch symbols[Int(stacks[Int(stack)].top)] {
            case .token(let token): return (token, false)
            case .anyTokenExcept(let token): return (token, true)
            default: return nil
            }
        }
    }

    /// The state after `token` taken whole by the token elements on top of `state`'s stacks.
    mutating func next(_ state: Int32, token: Int32) -> Int32 {
        guard spend(states[Int(state)].count) else { return Self.dead }
        var result: [Int32] = []
        for stack in states[Int(state)] where stack != Self.emptyStack {
            let (top, below) = stacks[Int(stack)]
            let matches = switch symbols[Int(top)] {
            case .token(let wanted): wanted == token
            case .anyTokenExcept(let excluded): excluded != token
            default: false
            }
            if matches { closure(of: continues[Int(top)] ? push(top + 1, on: below) : below, into: &result) }
        }
        return self.state(of: result)
    }

    /// The state holding the stacks of both `first` and `second`.
    mutating func union(_ first: Int32, _ second: Int32) -> Int32 {
        if first == Self.dead || first == second { return second }
        if second == Self.dead { return first }
        return state(of: states[Int(first)] + states[Int(second)])
    }

    /// The interned state of `stacks` (in any order, repeats allowed).
    private mutating func state(of stacks: [Int32]) -> Int32 {
        let key = Array(Set(stacks)).sorted()
        if let id = stateIndex[key] { return id }
        let id = Int32(states.count)
        states.append(key)
        stateIndex[key] = id
        asciiTransitions += repeatElement(-1, count: 128)
        beyondASCIITransitions.append(-2)
        return id
    }

    // MARK: - Stacks

    /// The interned stack of `top` on `below`.
    private mutating func push(_ top: Int32, on below: Int32) -> Int32 {
        let key = UInt64(UInt32(bitPattern: top)) << 32 | UInt64(UInt32(bitPattern: below))
        if let id = stackIndex[key] { return id }
        let id = Int32(stacks.count)
        stacks.append((top, below))
        stackIndex[key] = id
        return id
    }

    /// Adds to `result` the stacks with terminal tops (or nothing left) that `stack` stands for:
    /// a rule on top is replaced by each of its alternatives, and so on down (llama.cpp's
    /// `advance_stack`), depth first with a stack of its own, remembering each stack's closure.
    /// The grammar has no left recursion, so this ends.
    private mutating func closure(of stack: Int32, into result: inout [Int32]) {
        if let known = knownClosure(of: stack) {
            result += known
            return
        }
        // The stacks being expanded: each one's alternatives, the next to expand, and what they gave so far.
        var frames: [(stack: Int32, expansions: [Int32], next: Int, found: [Int32])] = [(stack, expansions(of: stack), 0, [])]
        while let last = frames.indices.last {
            guard frames[last].next < frames[last].expansions.count else {
                let done = frames.removeLast()
                let found = Array(Set(done.found))
                guard spend(found.count) else { return }
                closures[done.stack] = found
                if frames.isEmpty { result += found } else { frames[frames.count - 1].found += found }
                continue
            }
            let expansion = frames[last].expansions[frames[last].next]
            frames[last].next += 1
            guard spend(1) else { return }
            if let known = knownClosure(of: expansion) {
                guard spend(known.count) else { return }
                frames[last].found += known
            } else {
                frames.append((expansion, expansions(of: expansion), 0, []))
            }
        }
    }

    /// The closure of `stack` when it is known without expanding: the stack itself when its top
    /// is terminal (or it is empty), or the closure remembered.
    private func knownClosure(of stack: Int32) -> [Int32]? {
        guard stack != Self.emptyStack, case .rule = symbols[Int(stacks[Int(stack)].top)] else { return [stack] }
        return closures[stack]
    }

    /// The stacks a stack with rule `top` stands for, one per alternative of the rule, each on
    /// what follows the rule.
    private mutating func expansions(of stack: Int32) -> [Int32] {
        let (top, below) = stacks[Int(stack)]
        guard case .rule(let rule) = symbols[Int(top)] else { return [] }
        let continuation = continues[Int(top)] ? push(top + 1, on: below) : below
        return alternativeStarts[Int(rule)].map { start in start < 0 ? continuation : push(start, on: continuation) }
    }
}
