import Evaluation
import Foundation

/// A measured result with details: a perplexity and its per-token log-probabilities, or a
/// benchmark and its rows. Renders like its display and, when it has one, acts as its number.
public final class Measurement: HostObject {
    public let typeName: String
    public let numericValue: Double?
    /// The details, by property name.
    private let properties: [String: Value]
    public let mimeBundle: MIMEBundle

    package init(typeName: String, number: Double?, properties: [String: Value], bundle: MIMEBundle) {
        self.typeName = typeName
        self.numericValue = number
        self.properties = properties
        self.mimeBundle = bundle
    }

    /// Its details, by name; no methods.
    public var members: HostMembers {
        let properties = properties
        return HostMembers(properties: properties.keys.sorted()) { properties[$0] }
    }

    public var summary: String { mimeBundle.plainText ?? typeName }

    /// A mean and its standard deviation for people: the deviation to two significant figures
    /// and the mean to the same decimal place (`19945 ± 2083`, `41.7 ± 3.2`); without a
    /// deviation, whole numbers from 100 up and two decimals below.
    package static func meanAndDeviation(_ mean: Double, _ deviation: Double) -> String {
        let decimals = deviation > 0 && deviation.isFinite ? max(0, 1 - Int(log10(deviation).rounded(.down))) : (abs(mean) >= 100 ? 0 : 2)
        return String(format: "%.\(decimals)f ± %.\(decimals)f", mean, deviation)
    }
}
