import Executors
import Foundation
import GenerationTypes
import OpenAIAPI
import Testing
@testable import Remote

struct RemoteBasicsTests {
    @Test func anAPIKeyIsNeverShown() {
        let key = APIKey("sk-very-secret")
        var dumped = ""
        dump(key, to: &dumped)
        for shown in [String(describing: key), String(reflecting: key), "\(key)", dumped, String(describing: Mirror(reflecting: key).children.map(\.value))] {
            #expect(!shown.contains("very-secret"), "\(shown)")
        }
        #expect(key.authorization == "Bearer sk-very-secret")
    }

    @Test func badURLsAreRefusedNamingTheProblem() {
        #expect(throws: RemoteError.self) { try RemoteEndpoint(url: "localhost:8000/v1", key: nil) }
        do {
            _ = try RemoteEndpoint(url: "http://user:hunter2@host/v1", key: nil)
            Issue.record("credentials in the URL were accepted")
        } catch {
            #expect(!error.description.contains("hunter2"))
            #expect(error.description.contains("pass apiKey: instead"))
        }
        #expect((try? RemoteEndpoint(url: "https://host:8000/v1/", key: nil))?.baseURL == "https://host:8000/v1")
    }

    @Test func retriesWaitExponentiallyWithinTheCapAndHonourRetryAfter() {
        let policy = RetryPolicy(attempts: 6, initialDelay: 0.5, maximumDelay: 4)
        #expect((1...5).map { policy.delay(after: $0, retryAfter: nil) } == [0.5, 1, 2, 4, 4])
        #expect(policy.delay(after: 1, retryAfter: 3) == 3)
        #expect(policy.delay(after: 1, retryAfter: 60) == 4)
    }

    @Test func samplingOptionsBecomeTheAPIsFields() throws {
        var options = GenerationOptions(sampling: SamplingOptions(temperature: 0.7, topK: 20, topP: 0.9, minP: 0.05, repeatPenalty: 1, seed: 0xFFFF_FFFF_0000_0007),
                                        maxTokens: 64, stopStrings: ["\n\n"])
        var fields = RemoteModel.fields(options)
        #expect(fields == SamplingFields(maxTokens: 64, temperature: 0.7, topP: 0.9, topK: 20, minP: 0.05, repeatPenalty: nil, seed: 7, stop: StopSequences(["\n\n"])))
        options.sampling.repeatPenalty = 1.1
        fields = RemoteModel.fields(options)
        #expect(fields.repeatPenalty == 1.1)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(CompletionRequest(model: "m", prompt: "p", sampling: fields))) as? [String: Any]
        #expect(Set(json?.keys.map { $0 } ?? []) == ["model", "prompt", "max_tokens", "temperature", "top_p", "top_k", "min_p", "repeat_penalty", "seed", "stop"])
        // The penalties and the logit bias go as OpenAI's fields, a ban as false.
        options.sampling.frequencyPenalty = 0.5
        options.sampling.presencePenalty = -0.25
        options.sampling.repeatWindow = 32
        options.sampling.logitBias = [15: 2.5, 7: -.infinity]
        let body = try JSONSerialization.jsonObject(with: JSONEncoder().encode(CompletionRequest(model: "m", prompt: "p", sampling: RemoteModel.fields(options))))
        let sent = try #require(body as? [String: Any])
        #expect(sent["frequency_penalty"] as? Double == 0.5 && sent["presence_penalty"] as? Double == -0.25 && sent["repeat_last_n"] as? Int == 32)
        let bias = try #require(sent["logit_bias"] as? [String: Any])
        #expect(bias["15"] as? Double == 2.5 && bias["7"] as? Bool == false && bias.count == 2)
        // And read back, in either form the server takes.
        let pairs = try JSONDecoder().decode(LogitBiasField.self, from: Data(#"[[15, 2.5], ["hello", false]]"#.utf8))
        #expect(pairs.entries == [.init(token: .id(15), bias: 2.5), .init(token: .text("hello"), bias: -.infinity)])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(LogitBiasField.self, from: Data(#"{"15": true}"#.utf8)) }
    }

    @Test func streamedChunksBecomeTokensAndASummary() throws {
        var reader = ChunkReader<Completion>(hasStopStrings: false)
        let clock = ContinuousClock()
        let start = clock.now
        let stream = """
            data: {"id":"c","object":"text_completion","created":0,"model":"m","choices":[{"index":0,"text":" Par","logprobs":{"tokens":[" Par"],"token_logprobs":[-0.5],"top_logprobs":[{" Par":-0.5}],"text_offset":[0]},"finish_reason":null}]}

            data: {"id":"c","object":"text_completion","created":0,"model":"m","choices":[{"index":0,"text":"is","finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}

            data: [DONE]


            """
        let tokens = try reader.feed(Array(stream.utf8), at: clock.now, endpoint: "e")
        #expect(tokens.map(\.text) == [" Par", "is"])
        #expect(tokens[0].logProbability == -0.5 && tokens[1].logProbability.isNaN)
        #expect(reader.isDone)
        try reader.finish(endpoint: "e")
        let summary = reader.summary(start: start, clock: clock)
        #expect(summary.promptTokens == 5 && summary.generatedTokens == 2 && summary.finishReason == .eos)
    }

    @Test func theFinishReasonTableReadsBothWays() {
        #expect(FinishReason(apiName: "stop", requestHadStopStrings: true) == .stop)
        #expect(FinishReason(apiName: "stop", requestHadStopStrings: false) == .eos)
        #expect(FinishReason(apiName: "length", requestHadStopStrings: false) == .length)
        #expect([FinishReason.length, .eos, .stop, .context].map(\.apiName) == ["length", "stop", "stop", "length"])
    }
}
