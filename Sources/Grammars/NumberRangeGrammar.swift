/// The GBNF for JSON numbers between decimal bounds (a JSON Schema's `minimum`, `maximum`,
/// `exclusiveMinimum`, `exclusiveMaximum` on `number`), exactly: compared digit by digit as
/// decimals, never through binary floating point. The numbers are written without an exponent,
/// with up to 16 fraction digits — a subset of JSON's spellings of every number in the range that
/// has so few digits.
enum NumberRangeGrammar {
    /// A bound as a decimal: its sign, integer digits (no leading zeros) and fraction digits (no
    /// trailing zeros).
    struct Decimal: Equatable {
        var negative: Bool
        var integer: String
        var fraction: String

        /// The value of a JSON number's text (`-12.5e-1`), or nil when it is not one or is too
        /// far from 1 (an exponent beyond ±30).
        init?(json text: String) {
            var rest = Substring(text)
            negative = rest.first == "-"
            if negative { rest = rest.dropFirst() }
            let mantissa = rest.prefix { $0 != "e" && $0 != "E" }
            let exponentText = rest.dropFirst(mantissa.count).dropFirst()
            guard let exponent = exponentText.isEmpty ? 0 : Int(exponentText.hasPrefix("+") ? exponentText.dropFirst() : exponentText),
                  abs(exponent) <= 30 else { return nil }
            let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), !parts[0].isEmpty, parts.allSatisfy({ $0.allSatisfy(\.isWholeNumber) }) else { return nil }
            let digits = String(parts[0]) + (parts.count == 2 ? String(parts[1]) : "")
            // Where the decimal point falls in `digits`, after the exponent moves it.
            let point = parts[0].count + exponent
            let padded = point < 0 ? String(repeating: "0", count: -point) + digits : digits + String(repeating: "0", count: max(0, point - digits.count))
            let split = max(point, 0)
            integer = String(padded.prefix(split).drop { $0 == "0" })
            if integer.isEmpty { integer = "0" }
            fraction = String(String(padded.dropFirst(split)).reversed().drop { $0 == "0" }.reversed())
            if integer == "0" && fraction.isEmpty { negative = false }
        }

        init(negative: Bool, integer: String, fraction: String) {
            self.negative = negative
            self.integer = integer
            self.fraction = fraction
        }

        static let zero = Decimal(negative: false, integer: "0", fraction: "")

        var isZero: Bool { integer == "0" && fraction.isEmpty }
        /// The same magnitude, the other sign.
        var negated: Decimal { isZero ? self : Decimal(negative: !negative, integer: integer, fraction: fraction) }

        /// Whether this is less than `other`.
        func isLess(than other: Decimal) -> Bool {
            if negative != other.negative { return negative }
            let magnitudeLess = Self.magnitude(self, isLessThan: other)
            return negative ? Self.magnitude(other, isLessThan: self) : magnitudeLess
        }

        private static func magnitude(_ a: Decimal, isLessThan b: Decimal) -> Bool {
            if a.integer.count != b.integer.count { return a.integer.count < b.integer.count }
            if a.integer != b.integer { return a.integer < b.integer }
            let length = max(a.fraction.count, b.fraction.count)
            func padded(_ text: String) -> String { text + String(repeating: "0", count: length - text.count) }
            return padded(a.fraction) < padded(b.fraction)
        }
    }

    /// A bound of a range and whether it is excluded.
    struct Bound {
        var value: Decimal
        var exclusive: Bool
    }

    /// The most fraction digits a number is written with.
    static let fractionDigits = 16

    /// A GBNF expression for the numbers from `low` to `high` (either may be missing), or nil
    /// when none lies between them.
    static func expression(low: Bound?, high: Bound?) -> String? {
        if let low, let high {
            if high.value.isLess(than: low.value) { return nil }
            if low.value == high.value && (low.exclusive || high.exclusive) { return nil }
        }
        var alternatives: [String] = []
        // x ≥ 0: magnitudes from max(low, 0) to high.
        if high.map({ !$0.value.negative && !($0.value.isZero && $0.exclusive) }) ?? true {
            let from = low.flatMap { $0.value.negative ? nil : $0 } ?? Bound(value: .zero, exclusive: false)
            if let magnitudes = magnitudes(from: from, to: high) { alternatives.append(magnitudes) }
        }
        // x < 0: "-" and magnitudes from max(-high, 0) to -low (the bounds' roles swapped).
        if low.map({ $0.value.negative }) ?? true {
            let from = high.flatMap { $0.value.negative ? Bound(value: $0.value.negated, exclusive: $0.exclusive) : nil }
                ?? Bound(value: .zero, exclusive: true)
            let to = low.map { Bound(value: $0.value.negated, exclusive: $0.exclusive) }
            if let magnitudes = magnitudes(from: from, to: to) { alternatives.append("\"-\" " + magnitudes) }
        }
        return alternatives.isEmpty ? nil : "(" + alternatives.joined(separator: " | ") + ")"
    }

    /// Non-negative numbers from `low` to `high` (nil: no upper bound), as integer digits (no
    /// leading zeros) and an optional fraction.
    private static func magnitudes(from low: Bound, to high: Bound?) -> String? {
        guard let lowInteger = UInt64(low.value.integer), let highInteger = high.map({ UInt64($0.value.integer) }) ?? .some(nil) else { return nil }
        var alternatives: [String] = []
        func add(_ integers: [String], _ fraction: String?) {
            guard !integers.isEmpty, let fraction else { return }
            alternatives.append("(" + integers.joined(separator: " | ") + ")" + (fraction.isEmpty ? "" : " " + fraction))
        }
        let anyFraction = FractionRange(low: nil, high: nil).expression
        if let highInteger, lowInteger == highInteger {
            add(["\"\(low.value.integer)\""], FractionRange(low: (low.value.fraction, low.exclusive), high: (high!.value.fraction, high!.exclusive)).expression)
            return alternatives.isEmpty ? nil : alternatives.joined(separator: " | ")
        }
        if let highInteger, highInteger < lowInteger { return nil }
        add(["\"\(low.value.integer)\""], FractionRange(low: (low.value.fraction, low.exclusive), high: nil).expression)
        if highInteger.map({ $0 > lowInteger + 1 }) ?? true {
            add(JSONSchemaGrammar.digits(from: lowInteger + 1, to: highInteger.map { $0 - 1 }), anyFraction)
        }
        if let high, let highInteger {
            add(["\"\(highInteger)\""], FractionRange(low: nil, high: (high.value.fraction, high.exclusive)).expression)
        }
        return alternatives.isEmpty ? nil : "(" + alternatives.joined(separator: " | ") + ")"
    }

    /// The fractions (`"." digits`, or none) of a number whose integer part is fixed, between
    /// the fraction digits of the bounds there (nil: no bound on that side), each inclusive or
    /// exclusive.
    struct FractionRange {
        let low: (digits: String, exclusive: Bool)?
        let high: (digits: String, exclusive: Bool)?

        /// Where a fraction's digits so far stand against a bound: past it (any digits may
        /// follow), or equal to its first digits, the rest of which remain.
        private enum Standing: Equatable {
            case past
            case tight(Substring)
        }

        /// The GBNF expression (empty: nothing but the integer part is allowed), or nil when no
        /// fraction fits.
        var expression: String? {
            let lowStanding: Standing = low.map { .tight(Substring($0.digits)) } ?? .past
            let highStanding: Standing = high.map { .tight(Substring($0.digits)) } ?? .past
            let digits = digits(lowStanding, highStanding, remaining: NumberRangeGrammar.fractionDigits)
            let bare = ends(lowStanding, highStanding)
            guard let digits else { return bare ? "" : nil }
            return bare ? "(\".\" " + digits + ")?" : "\".\" " + digits
        }

        /// Whether the number may end here: its value so far (zeros after) is within the bounds.
        private func ends(_ lowStanding: Standing, _ highStanding: Standing) -> Bool {
            let aboveLow = switch lowStanding {
            case .past: true
            case .tight(let rest): rest.isEmpty && !(low?.exclusive ?? false)
            }
            let belowHigh = switch highStanding {
            case .past: true
            // Zeros after: below the bound unless it is all matched (then equal).
            case .tight(let rest): !rest.isEmpty || !(high?.exclusive ?? false)
            }
            return aboveLow && belowHigh
        }

        /// One or more digits (at most `remaining`) that keep the number within the bounds, or
        /// nil when none do.
        private func digits(_ lowStanding: Standing, _ highStanding: Standing, remaining: Int) -> String? {
            guard remaining > 0 else { return nil }
            if lowStanding == .past && highStanding == .past { return "[0-9]{1,\(remaining)}" }
            // The digits a bound allows next: from its digit (0 past its end) up, or up to its
            // digit (none past its end: more digits would exceed it).
            let lowDigit: Int = if case .tight(let rest) = lowStanding { rest.first.map { Int(String($0))! } ?? 0 } else { 0 }
            let highDigit: Int? = if case .tight(let rest) = highStanding { rest.first.map { Int(String($0))! } } else { 9 }
            guard let highDigit else {
                // Matched the whole upper bound: only zeros may follow (and end within it).
                return nil
            }
            guard lowDigit <= highDigit else { return nil }
            var alternatives: [String] = []
            for digit in Set([lowDigit, highDigit]).sorted() {
                let nextLow: Standing = digit == lowDigit ? Self.advance(lowStanding) : .past
                let nextHigh: Standing = digit == highDigit ? Self.advance(highStanding) : .past
                let end = ends(nextLow, nextHigh)
                let more = digits(nextLow, nextHigh, remaining: remaining - 1)
                guard end || more != nil else { continue }
                let tail = switch (end, more) {
                case (true, let more?): " (" + more + ")?"
                case (false, let more?): " " + more
                default: ""
                }
                alternatives.append("\"\(digit)\"" + tail)
            }
            if highDigit - lowDigit > 1 {
                let between = lowDigit + 1 == highDigit - 1 ? "\"\(lowDigit + 1)\"" : "[\(lowDigit + 1)-\(highDigit - 1)]"
                alternatives.append(between + (remaining > 1 ? " [0-9]{0,\(remaining - 1)}" : ""))
            }
            return alternatives.isEmpty ? nil : "(" + alternatives.joined(separator: " | ") + ")"
        }

        /// The standing after the bound's next digit is matched.
        private static func advance(_ standing: Standing) -> Standing {
            guard case .tight(let rest) = standing else { return .past }
            return .tight(rest.dropFirst())
        }
    }
}
