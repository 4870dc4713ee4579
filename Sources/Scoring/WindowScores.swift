/// What a model predicted for the scored tokens of one window (see `ScoringWindows`).
public struct WindowScores: Sendable {
    /// The scored tokens, in order: the token each scored position predicts.
    public let targets: [Int32]
    /// The log-probability the model gave each target.
    public let logProbabilities: [Float]
    /// Each scored position's whole distribution as log-probabilities, `targets.count` rows of
    /// `vocabularySize`, when they were asked for (to compare another model against them).
    public let distributions: [Float]?
    /// The size of each row of `distributions`.
    public let vocabularySize: Int

    /// Row `index` of `distributions`.
    func distribution(_ index: Int) -> ArraySlice<Float>? {
        distributions.map { $0[(index * vocabularySize)..<((index + 1) * vocabularySize)] }
    }
}
