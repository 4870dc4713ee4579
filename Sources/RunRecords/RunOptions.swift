/// A generation's sampling options, with the seed that was actually used.
public struct RunOptions: Codable, Sendable, Equatable {
    /// Tokens to generate at most.
    public var maxTokens: Int
    /// Temperature (0: greedy).
    public var temperature: Double
    /// Top-k (0: off).
    public var topK: Int
    /// Top-p.
    public var topP: Double
    /// Min-p.
    public var minP: Double
    /// Repetition penalty.
    public var repeatPenalty: Double
    /// How many recent tokens the penalties looked at, when not the default 64 (`Int.max`: all).
    public var repeatLastN: Int?
    /// The frequency penalty, when not 0.
    public var frequencyPenalty: Double?
    /// The presence penalty, when not 0.
    public var presencePenalty: Double?
    /// The logit bias, by token, when there was one.
    public var logitBias: [RunLogitBias]?
    /// The seed.
    public var seed: UInt64
    /// Stop strings.
    public var stop: [String]
    /// The control vectors the generation was steered with, if any.
    public var steering: RunSteering?
    /// The ablations and patches made inside its forward passes, if any.
    public var interventions: [RunIntervention]?
    /// The grammar, JSON schema, pattern or choice its output was held to, if any.
    public var constraint: RunConstraint?

    /// Options.
    public init(maxTokens: Int, temperature: Double, topK: Int, topP: Double, minP: Double, repeatPenalty: Double, seed: UInt64, stop: [String],
                steering: RunSteering? = nil, interventions: [RunIntervention]? = nil, constraint: RunConstraint? = nil) {
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.topK = topK
        self.topP = topP
        self.minP = minP
        self.repeatPenalty = repeatPenalty
        self.seed = seed
        self.stop = stop
        self.steering = steering
        self.interventions = interventions
        self.constraint = constraint
    }
}
