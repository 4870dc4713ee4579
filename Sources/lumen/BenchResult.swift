import Foundation
import Inference

/// One row of `lumen bench` results, with llama-bench's field names (`n_prompt`, `avg_ts`, …) so
/// the two engines' tables compare line by line; the Lumen-only fields come last.
struct BenchResult: Codable, Equatable {
    let modelFilename: String
    /// The tensor types of the file, most common first, e.g. `Q4_K/Q6_K/F32`.
    let modelType: String
    let modelSize: Int
    let modelNParams: Int
    let nThreads: Int
    let nPrompt: Int
    let nGen: Int
    /// Tokens in the cache before the test.
    let nDepth: Int
    var avgTs: Double = 0
    var stddevTs: Double = 0
    var samplesTs: [Double] = []
    /// llama-bench's test name: `pp512`, `tg128`, with ` @ d1024` at a depth.
    let test: String
    /// Bytes of KV cache and buffers of the session measured.
    let sessionBytes: Int
    /// With `--bandwidth`, on generation rows: the measured read bandwidth (GB/s), the bytes of
    /// weights a token reads, and the best sample as a fraction of bandwidth ÷ bytes.
    var bandwidthGBPerSecond: Double?
    var bytesPerToken: Int?
    var fractionOfBandwidthLimit: Double?

    enum CodingKeys: String, CodingKey {
        case modelFilename = "model_filename", modelType = "model_type", modelSize = "model_size", modelNParams = "model_n_params"
        case nThreads = "n_threads", nPrompt = "n_prompt", nGen = "n_gen", nDepth = "n_depth"
        case avgTs = "avg_ts", stddevTs = "stddev_ts", samplesTs = "samples_ts", test
        case sessionBytes = "session_bytes", bandwidthGBPerSecond = "bandwidth_gb_per_second", bytesPerToken = "bytes_per_token"
        case fractionOfBandwidthLimit = "fraction_of_bandwidth_limit"
    }

    /// A row for `test`.
    init(model: String, info: ModelInfo, parameters: Int, threads: Int, test: SpeedTest, sessionBytes: Int) {
        modelFilename = URL(fileURLWithPath: model).lastPathComponent
        modelType = info.tensorTypes.map { $0.type.description }.joined(separator: "/")
        modelSize = info.fileSize
        modelNParams = parameters
        nThreads = threads
        nPrompt = test.promptTokens
        nGen = test.generatedTokens
        nDepth = test.depth
        self.test = test.name
        self.sessionBytes = sessionBytes
    }

    /// This row with its speed samples and their mean and standard deviation.
    func with(_ samples: SpeedSamples) -> BenchResult {
        var result = self
        result.samplesTs = samples.tokensPerSecond
        result.avgTs = samples.mean
        result.stddevTs = samples.standardDeviation
        return result
    }
}
