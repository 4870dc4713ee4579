import ArgumentParser
import Inference

/// `f32|f16|q8_0` on the command line.
extension KVCacheType: ExpressibleByArgument {}

/// The KV cache's type, with llama.cpp's flags: `-ctk`/`--cache-type-k` and `-ctv`/`--cache-type-v`
/// (Lumen keeps keys and values in one type, so the two must agree), or `--cache-type` for both.
struct CacheTypeArguments: ParsableArguments {
    @Option(name: [.customLong("cache-type-k"), .customLong("ctk", withSingleDash: true)],
            help: "The KV cache's type for keys: f32 (the default: exact), f16 (llama.cpp's default) or q8_0.")
    var keys: KVCacheType?

    @Option(name: [.customLong("cache-type-v"), .customLong("ctv", withSingleDash: true)],
            help: "The KV cache's type for values: as -ctk, which it must equal.")
    var values: KVCacheType?

    @Option(name: .customLong("cache-type"), help: "The KV cache's type for keys and values at once.")
    var both: KVCacheType?

    /// The cache type asked for, checked to fit `model` (named `name` in the error).
    func resolved(for model: LanguageModel, name: String) throws -> KVCacheType {
        let keys = self.keys ?? both ?? .f32, values = self.values ?? both ?? .f32
        guard keys == values else {
            throw ValidationError("-ctk \(keys.rawValue) with -ctv \(values.rawValue): Lumen's KV cache holds keys and values in one type; give both the same")
        }
        guard model.configuration.fits(keys) else { throw ValidationError("\(name): " + model.configuration.misfit(keys)) }
        return keys
    }
}
