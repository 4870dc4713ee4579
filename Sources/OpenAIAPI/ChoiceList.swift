/// A response made of choices and token counts (`Completion`, `ChatCompletion`): answers of one
/// choice each are joined into the response of `n` choices.
public protocol ChoiceList {
    /// One choice.
    associatedtype Choice
    /// The choices.
    var choices: [Choice] { get set }
    /// Token counts.
    var usage: Usage? { get set }
}

extension ChoiceList {
    /// `answers`' choices in order in one response (the first's id, model and time), with `usage`.
    public static func joining(_ answers: [Self], usage: Usage?) -> Self? {
        guard var joined = answers.first else { return nil }
        joined.choices = answers.flatMap(\.choices)
        joined.usage = usage
        return joined
    }
}

extension Completion: ChoiceList {}
extension ChatCompletion: ChoiceList {}
