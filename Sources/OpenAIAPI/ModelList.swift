/// The response of `/v1/models`.
public struct ModelList: Codable, Sendable, Equatable {
    /// `list`.
    public var object: String
    /// The models served.
    public var data: [ModelCard]

    /// A list.
    public init(data: [ModelCard]) {
        object = "list"
        self.data = data
    }
}

/// One served model.
public struct ModelCard: Codable, Sendable, Equatable {
    /// Its name, as requests give it in `model`.
    public var id: String
    /// `model`.
    public var object: String
    /// Seconds since 1970.
    public var created: Int?
    /// Who owns it.
    public var ownedBy: String?

    /// A model.
    public init(id: String, created: Int, ownedBy: String) {
        self.id = id
        object = "model"
        self.created = created
        self.ownedBy = ownedBy
    }

    enum CodingKeys: String, CodingKey {
        case id, object, created, ownedBy = "owned_by"
    }
}
