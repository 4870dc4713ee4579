import Display
import Evaluation

/// A secret read from the environment (`env("OPENAI_API_KEY")`): passed to `connect(apiKey:)`,
/// shown everywhere as `••••`, so it never reaches an output, a notebook or the history.
public final class Secret: MemberTableHostObject {
    /// The variable it came from.
    let variable: String
    /// The value; read only by `connect`.
    package let value: String

    init(variable: String, value: String) {
        self.variable = variable
        self.value = value
    }

    public var typeName: String { "Secret" }
    public static let memberTable = MemberTable<Secret>(properties: [("variable", { .string($0.variable) })])

    public var summary: String { "Secret(\(variable): ••••)" }
    public var mimeBundle: MIMEBundle { .plainText(summary) }

    /// Whether a variable's name says it holds a secret (`…KEY`, `…TOKEN`, `…SECRET`, `…PASSWORD`).
    static func isSecretName(_ name: String) -> Bool {
        let upper = name.uppercased()
        return ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"].contains { upper.contains($0) }
    }
}
