/// The global functions a template can call beyond jinja2's own (`range`, `namespace`, `dict`):
/// for chat templates, transformers' `raise_exception` and `strftime_now`.
public struct TemplateEnvironment: Sendable {
    /// The date and time `strftime_now` formats.
    public var now: DateComponents

    /// Calendar fields for `strftime_now`.
    public struct DateComponents: Sendable {
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int

        /// Creates date and time fields.
        public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }
    }

    /// An environment whose `strftime_now` formats `now`.
    public init(now: DateComponents) {
        self.now = now
    }

    /// The names of the globals, jinja2's and these.
    var globals: Set<String> { ["range", "namespace", "dict", "raise_exception", "strftime_now"] }

    func callGlobal(_ name: String, _ positional: [TemplateValue], _ keywords: [String: TemplateValue], at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        switch name {
        case "raise_exception":
            throw TemplateError(kind: "TemplateError", message: positional.first?.text ?? "", line: position.line, column: position.column)
        case "strftime_now":
            return .string(strftime(positional.first?.text ?? ""))
        default:
            throw Renderer.typeError("'\(name)' is not callable", at: position)
        }
    }

    private static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    private static let dayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// C's `strftime` for the fields templates use.
    public func strftime(_ format: String) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = Self.weekday(year: now.year, month: now.month, day: now.day)
        var result = ""
        var characters = format.makeIterator()
        while let character = characters.next() {
            guard character == "%", let code = characters.next() else {
                result.append(character)
                continue
            }
            switch code {
            case "Y": result += String(now.year)
            case "y": result += two(now.year % 100)
            case "m": result += two(now.month)
            case "-": if let next = characters.next() { result += next == "d" ? String(now.day) : next == "m" ? String(now.month) : "" }
            case "d": result += two(now.day)
            case "e": result += now.day < 10 ? " \(now.day)" : String(now.day)
            case "H": result += two(now.hour)
            case "I": result += two(now.hour % 12 == 0 ? 12 : now.hour % 12)
            case "p": result += now.hour < 12 ? "AM" : "PM"
            case "M": result += two(now.minute)
            case "S": result += two(now.second)
            case "B": result += Self.monthNames[now.month - 1]
            case "b", "h": result += String(Self.monthNames[now.month - 1].prefix(3))
            case "A": result += Self.dayNames[weekday]
            case "a": result += String(Self.dayNames[weekday].prefix(3))
            case "%": result += "%"
            default: result += "%" + String(code)
            }
        }
        return result
    }

    /// Monday = 0, as Python's `weekday()`.
    private static func weekday(year: Int, month: Int, day: Int) -> Int {
        let offsets = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4]
        let y = month < 3 ? year - 1 : year
        let sunday0 = (y + y / 4 - y / 100 + y / 400 + offsets[month - 1] + day) % 7
        return (sunday0 + 6) % 7
    }
}

extension TemplateEnvironment.DateComponents {
    /// The UTC date and time `secondsSince1970` after 1970-01-01.
    public static func utc(secondsSince1970 seconds: Int) -> TemplateEnvironment.DateComponents {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        // Howard Hinnant's days-to-civil algorithm.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return .init(year: year, month: month, day: day, hour: secondOfDay / 3600, minute: secondOfDay % 3600 / 60, second: secondOfDay % 60)
    }
}
