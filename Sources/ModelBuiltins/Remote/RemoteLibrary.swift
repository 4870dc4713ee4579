import Display
import Evaluation
import Inference
import LumenLanguage
import Remote
import RunLog

/// `connect`: models served over the OpenAI-compatible API, usable wherever a loaded model is
/// (generate, batch, conversations, perplexity).
final class RemoteLibrary: LumenLibrary {
    let builtins: [Builtin] = [connect]

    static let connect = Builtin(
        name: "connect",
        signature: "connect(_ url: String | [String], model: String? = nil, apiKey: Secret? = nil, concurrency: 4, timeout: 300, connectTimeout: 10, retries: 3, logprobs: false) -> RemoteModel",
        summary: "A model served over the OpenAI-compatible API (vLLM, llama-server, TGI, Ollama, lumen serve) at url, e.g. \"http://host:8000/v1\"; model defaults to the first the server lists. A list of URLs is a pool of replicas: requests spread over them, concurrency at once on each. timeout: seconds without data; retries: extra attempts on 429/502/503; logprobs: ask for each token's log-probability."
    ) { arguments, context in
        let (urlValue, urlLocation) = try arguments.requirePositional("url")
        let urls: [String] = try {
            switch urlValue {
            case .string(let url): return [url]
            case .array(let values) where !values.isEmpty:
                return try values.map { value throws(LumenError) in
                    guard case .string(let url) = value else { throw LumenError(.type, "connect() needs URLs as Strings, got \(value.typeName)", at: urlLocation) }
                    return url
                }
            default: throw LumenError(.type, "connect() needs a URL or an array of URLs, got \(urlValue.typeName)", at: urlLocation)
            }
        }()
        let model = try arguments.labelledString("model")
        let key = try apiKey(&arguments)
        let concurrency = try arguments.labelledInteger("concurrency") ?? 4
        let readTimeout = try arguments.labelledNumber("timeout") ?? 300
        let connectTimeout = try arguments.labelledNumber("connectTimeout") ?? 10
        let retries = try arguments.labelledInteger("retries") ?? 3
        let logprobs = try arguments.labelledBool("logprobs") ?? false
        try arguments.finish()
        guard concurrency >= 1, retries >= 0, readTimeout > 0, connectTimeout > 0 else {
            throw LumenError(.value, "concurrency must be at least 1, retries 0 or more, timeouts positive", at: context.location)
        }
        do {
            let endpoints = try urls.map { url throws(RemoteError) in
                try RemoteEndpoint(url: url, key: key, connectTimeout: connectTimeout, readTimeout: readTimeout, retry: RetryPolicy(attempts: retries + 1))
            }
            return .host(RemoteModelObject(try await RemoteModel.connect(endpoints, model: model, concurrency: concurrency, logprobs: logprobs)))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
    }

    /// The `apiKey:` argument: a `Secret` from `env`, or a String.
    private static func apiKey(_ arguments: inout Arguments) throws(LumenError) -> APIKey? {
        guard let (value, location) = arguments.labelled("apiKey") else { return nil }
        switch value {
        case .null: return nil
        case .string(let key): return APIKey(key)
        case .host(let object as Secret): return APIKey(object.value)
        default: throw LumenError(.type, "apiKey: needs a Secret (from env) or a String, got \(value.typeName)", at: location)
        }
    }
}
