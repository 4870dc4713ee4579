import Foundation
import GenerationTypes
import OpenAIAPI

/// Reads a streamed generation: Server-Sent Events of JSON chunks, then `[DONE]`. Turns the
/// chunks into tokens, keeps the finish reason and usage, and times the tokens.
struct ChunkReader<Response: RemoteGenerationResponse> {
    private var parser = ServerSentEventParser()
    private let decoder = JSONDecoder()
    private let hasStopStrings: Bool
    private(set) var isDone = false
    private var finishReason: String?
    private var usage: Usage?
    private var count = 0
    private var firstToken: ContinuousClock.Instant?
    private var lastToken: ContinuousClock.Instant?

    init(hasStopStrings: Bool) {
        self.hasStopStrings = hasStopStrings
    }

    /// The tokens in `bytes`, which arrived at `time`.
    mutating func feed(_ bytes: some Sequence<UInt8>, at time: ContinuousClock.Instant, endpoint: String) throws -> [GeneratedToken] {
        var tokens: [GeneratedToken] = []
        for event in try parser.feed(bytes) where !isDone {
            if event.data == "[DONE]" {
                isDone = true
                break
            }
            let chunk: Response
            do {
                chunk = try decoder.decode(Response.self, from: Data(event.data.utf8))
            } catch {
                throw RemoteError(endpoint: endpoint, reason: "malformed event in the stream (\(DecodingFailure.describe(error))): \(event.data.prefix(200))")
            }
            for piece in chunk.pieces {
                tokens.append(GeneratedToken(id: -1, text: piece.text, logProbability: piece.logProbability.map(Float.init) ?? .nan))
            }
            finishReason = chunk.finishReason ?? finishReason
            usage = chunk.usage ?? usage
        }
        if !tokens.isEmpty {
            count += tokens.count
            if firstToken == nil { firstToken = time }
            lastToken = time
        }
        return tokens
    }

    /// Checks that the stream ended properly: with `[DONE]` or at least a finish reason.
    func finish(endpoint: String) throws {
        guard isDone || finishReason != nil else {
            throw RemoteError(endpoint: endpoint, reason: "the stream ended before the generation finished (\(count) tokens received)")
        }
    }

    /// Figures from the stream: counts from the server's usage when sent, times as seen here.
    func summary(start: ContinuousClock.Instant, clock: ContinuousClock) -> GenerationSummary {
        let timeToFirst = firstToken.map { ($0 - start).seconds } ?? 0
        let generated = usage?.completionTokens ?? count
        let span = if let firstToken, let lastToken { (lastToken - firstToken).seconds } else { 0.0 }
        let promptTokens = usage?.promptTokens ?? 0
        let reason = finishReason.map { FinishReason(apiName: $0, requestHadStopStrings: hasStopStrings) } ?? .cancelled
        return GenerationSummary(promptTokens: promptTokens, generatedTokens: generated, timeToFirstToken: timeToFirst,
                                 promptTokensPerSecond: timeToFirst > 0 ? Double(promptTokens) / timeToFirst : 0,
                                 generationTokensPerSecond: span > 0 && generated > 1 ? Double(generated - 1) / span : 0, finishReason: reason)
    }
}
