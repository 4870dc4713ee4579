import Evaluation
import LumenLanguage
import OpenAIAPI

extension ModelLibrary {
    /// The steering `generate` asks a served model for, by the names its server loaded
    /// (`lumen serve --control-vector-file NAME=FILE --sae NAME=PATH`; `GET /control-vectors` and
    /// `GET /saes` list them): `steer:` a vector's name, or a Dictionary from names to scales,
    /// each times `steerScale:`; `steerBlocks:` a range of blocks; `features:` a Dictionary from
    /// an SAE's name to a Dictionary from feature index to the activation it is set to; `lora:` a
    /// Dictionary from the id of an adapter its server loaded (`GET /lora-adapters`) to its scale,
    /// llama-server's `lora` field (the adapters not named are left out).
    static func servedSteering(_ arguments: inout Arguments) throws(LumenError) -> SteeringFields {
        var fields = SteeringFields()
        let scale = try arguments.labelledNumber("steerScale") ?? 1
        let blocks = arguments.labelled("steerBlocks")
        if let (value, location) = arguments.labelled("steer") {
            switch value {
            case .string(let name):
                fields.controlVectors = [name: scale]
            case .dictionary(let dictionary):
                var vectors: [String: Double] = [:]
                for (key, entry) in dictionary.pairs {
                    guard case .string(let name) = key, let factor = Operators.number(entry) else {
                        throw LumenError(.type, "steer: for a served model maps vector names to scales, got \(key.printed): \(entry.printed)", at: location)
                    }
                    vectors[name] = factor * scale
                }
                fields.controlVectors = vectors
            default:
                throw LumenError(.type, "steer: a served model does not expose its activations: steer it by the name of a control vector its server loaded "
                                 + "(a String, or a Dictionary of names to scales; GET /control-vectors lists them), or steer a model loaded with load(); got \(value.typeName)",
                                 at: location)
            }
        }
        if let (value, location) = blocks {
            guard fields.controlVectors != nil else { throw LumenError(.value, "steerBlocks: needs steer: (a control vector)", at: location) }
            let range = try steerBlocks(value, at: location)
            fields.controlVectorLayerRange = [range.lowerBound, range.upperBound]
        }
        if let (value, location) = arguments.labelled("features") {
            guard case .dictionary(let saes) = value else {
                throw LumenError(.type, "features: needs a Dictionary from an SAE's name to a Dictionary of feature indices and values, got \(value.typeName)", at: location)
            }
            var features: [String: [String: Double]] = [:]
            for (key, entry) in saes.pairs {
                guard case .string(let name) = key, case .dictionary(let settings) = entry else {
                    throw LumenError(.type, "features: maps an SAE's name to a Dictionary of feature indices and values, got \(key.printed): \(entry.printed)", at: location)
                }
                var values: [String: Double] = [:]
                for (feature, setting) in settings.pairs {
                    guard case .integer(let index) = feature, index >= 0, let number = Operators.number(setting), number.isFinite else {
                        throw LumenError(.value, "features: \(name)'s entries are feature indices (0 or more) with finite values, got \(feature.printed): \(setting.printed)",
                                         at: location)
                    }
                    values[String(index)] = number
                }
                features[name] = values
            }
            fields.features = features
        }
        if let (value, location) = arguments.labelled("lora") {
            guard case .dictionary(let dictionary) = value else {
                throw LumenError(.type, "lora: for a served model maps the ids of its server's adapters (GET /lora-adapters) to scales, got \(value.typeName)", at: location)
            }
            fields.lora = try dictionary.pairs.map { key, entry throws(LumenError) in
                guard case .integer(let id) = key, id >= 0, let scale = Operators.number(entry), scale.isFinite else {
                    throw LumenError(.value, "lora: maps adapter ids (0 or more) to finite scales, got \(key.printed): \(entry.printed)", at: location)
                }
                return LoRAScale(id: id, scale: scale)
            }
        }
        return fields
    }

}
