/// Watches generated text for stop strings: holds back text that could be the start of one, and
/// cuts the output where one appears (the stop string itself is not emitted).
struct StopStringFilter {
    let stopStrings: [String]
    private var held = ""

    init(stopStrings: [String]) {
        self.stopStrings = stopStrings.filter { !$0.isEmpty }
    }

    /// Adds `text`; returns what can be emitted now, and whether a stop string was found.
    mutating func append(_ text: String) -> (text: String, stopped: Bool) {
        held += text
        guard !stopStrings.isEmpty else { return (flush(), false) }
        if let stop = stopStrings.compactMap({ held.range(of: $0) }).min(by: { $0.lowerBound < $1.lowerBound }) {
            let emitted = String(held[..<stop.lowerBound])
            held = ""
            return (emitted, true)
        }
        // Keep the longest suffix that is a prefix of some stop string.
        var keep = 0
        for stop in stopStrings {
            for length in stride(from: min(stop.count - 1, held.count), to: keep, by: -1)
                where held.hasSuffix(stop.prefix(length)) {
                keep = length
                break
            }
        }
        let emitted = String(held.dropLast(keep))
        held = String(held.suffix(keep))
        return (emitted, false)
    }

    /// Returns everything held back.
    mutating func flush() -> String {
        defer { held = "" }
        return held
    }
}
