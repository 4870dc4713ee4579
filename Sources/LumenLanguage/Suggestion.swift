/// "Did you mean …?": the known name closest to a misspelt one, as Python 3.12 and the Swift
/// compiler suggest them — within an edit distance of a third of the name's length (at least 1,
/// at most 3), adjacent transpositions counting as one edit; the closest wins, then the
/// alphabetically first. Names shorter than three characters get no hint: any other short name
/// would be as close.
public enum Suggestion {
    /// The candidate `name` was probably meant to be, if one is close enough.
    public static func closest(to name: String, among candidates: some Sequence<String>) -> String? {
        guard name.count >= 3 else { return nil }
        let limit = min(3, max(1, name.count / 3))
        let typed = Array(name)
        var best: (distance: Int, name: String)?
        for candidate in candidates where candidate != name && abs(candidate.count - typed.count) <= limit {
            let distance = editDistance(typed, Array(candidate))
            guard distance <= limit else { continue }
            if best.map({ (distance, candidate) < ($0.distance, $0.name) }) ?? true { best = (distance, candidate) }
        }
        return best?.name
    }

    /// ` (did you mean 'x'?)` for the closest candidate, or nothing.
    static func hint(for name: String, among candidates: some Sequence<String>, suffix: String = "") -> String {
        closest(to: name, among: candidates).map { " (did you mean '\($0)\(suffix)'?)" } ?? ""
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
    /// transpositions, each costing 1.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
