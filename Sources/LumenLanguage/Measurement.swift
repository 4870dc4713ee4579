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

    init(typeName: String, number: Double?, properties: [String: Value], bundle: MIMEBundle) {
        self.typeName = typeName
        self.numericValue = number
        self.properties = properties
        self.mimeBundle = bundle
    }

    public var propertyNames: [String] { properties.keys.sorted() }
    public var methodNames: [String] { [] }

    public func property(_ name: String) throws -> Value? {
        properties[name]
    }

    public var summary: String { mimeBundle.plainText ?? typeName }
}
