import ArgumentParser
import Inference

/// `--cache-type f32|f16` on the command line.
extension KVCacheType: ExpressibleByArgument {}
