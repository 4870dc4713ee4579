import Foundation
import Inference

/// `lumen bench --parallel`: N sequences decoding together, measured and printed as
/// llama-batched-bench does (its fields and table), so the two compare line by line.
struct ParallelBench {
    /// One measurement: `sequences` sequences, each reading a prompt of `promptTokens` and then
    /// generating `generatedTokens`.
    struct Row: Encodable {
        let pp: Int, tg: Int, pl: Int
        let nThreads: Int
        /// Prompt and generation seconds (means over the repetitions), and both.
        let tPp: Double, tTg: Double, t: Double
        /// Tokens in the caches at the end.
        let nKv: Int
        /// Tokens per second: of prompts, of generation, of both.
        let speedPp: Double, speedTg: Double, speed: Double

        enum CodingKeys: String, CodingKey {
            case pp, tg, pl, nThreads = "n_threads", tPp = "t_pp", tTg = "t_tg", nKv = "n_kv", speedPp = "speed_pp", speedTg = "speed_tg", t, speed
        }

        init(pp: Int, tg: Int, pl: Int, nThreads: Int, tPp: Double, tTg: Double) {
            (self.pp, self.tg, self.pl, self.nThreads, self.tPp, self.tTg) = (pp, tg, pl, nThreads, tPp, tTg)
            t = tPp + tTg
            nKv = pl * (pp + tg)
            speedPp = Double(pl * pp) / tPp
            speedTg = Double(pl * tg) / tTg
            speed = Double(nKv) / t
        }

        /// The row of llama-batched-bench's table.
        var markdown: String {
            String(format: "| %5d | %6d | %4d | %6d | %8.3f | %8.2f | %8.3f | %8.2f | %8.3f | %8.2f |", pp, tg, pl, nKv, tPp, speedPp, tTg, speedTg, t, speed)
        }
    }

    /// llama-batched-bench's table header.
    static let header = """
        |    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |
        |-------|--------|------|--------|----------|----------|----------|----------|----------|----------|
        """

    /// Measures `sequences` sequences together on `session` (made with at least that many):
    /// one warm-up, then the mean of `repetitions` runs.
    static func measure(on session: ModelSession, prompt: [Int32], tokens: [Int32], sequences: Int, threads: Int,
                        repetitions: Int) async throws -> Row {
        var promptSeconds = 0.0, generationSeconds = 0.0
        for run in 0...repetitions {
            let (read, generated) = try await session.timeParallelGeneration(prompt: prompt, tokens: tokens, sequences: sequences)
            if run > 0 {
                promptSeconds += read
                generationSeconds += generated
            }
        }
        return Row(pp: prompt.count, tg: tokens.count, pl: sequences, nThreads: threads,
                   tPp: promptSeconds / Double(repetitions), tTg: generationSeconds / Double(repetitions))
    }
}
