/// Content of `kernel_info_reply`.
public struct KernelInfoReply: Sendable, Codable, Equatable {
    /// Always `ok`.
    public var status = "ok"
    /// The messaging protocol version implemented.
    public var protocolVersion: String
    /// The kernel implementation's name.
    public var implementation: String
    /// The kernel implementation's version.
    public var implementationVersion: String
    /// The language the kernel runs.
    public var languageInfo: LanguageInfo
    /// A banner shown by consoles on start.
    public var banner: String
    /// Links for the front end's help menu.
    public var helpLinks: [HelpLink]
    /// Optional protocol features the kernel supports.
    public var supportedFeatures: [String]
    /// Whether the kernel supports the debugger protocol.
    public var debugger = false

    enum CodingKeys: String, CodingKey {
        case status, implementation, banner, debugger
        case protocolVersion = "protocol_version"
        case implementationVersion = "implementation_version"
        case languageInfo = "language_info"
        case helpLinks = "help_links"
        case supportedFeatures = "supported_features"
    }

    /// Creates the reply.
    public init(
        protocolVersion: String, implementation: String, implementationVersion: String,
        languageInfo: LanguageInfo, banner: String, helpLinks: [HelpLink], supportedFeatures: [String] = []
    ) {
        self.protocolVersion = protocolVersion
        self.implementation = implementation
        self.implementationVersion = implementationVersion
        self.languageInfo = languageInfo
        self.banner = banner
        self.helpLinks = helpLinks
        self.supportedFeatures = supportedFeatures
    }
}

/// The `language_info` of `kernel_info_reply`.
public struct LanguageInfo: Sendable, Codable, Equatable {
    /// The language name.
    public var name: String
    /// The language version.
    public var version: String
    /// The MIME type of source files.
    public var mimetype: String
    /// The source file extension, with its dot.
    public var fileExtension: String
    /// The Pygments lexer used to highlight code.
    public var pygmentsLexer: String
    /// The CodeMirror mode used to highlight code.
    public var codemirrorMode: String

    enum CodingKeys: String, CodingKey {
        case name, version, mimetype
        case fileExtension = "file_extension"
        case pygmentsLexer = "pygments_lexer"
        case codemirrorMode = "codemirror_mode"
    }

    /// Creates language info.
    public init(name: String, version: String, mimetype: String, fileExtension: String, pygmentsLexer: String, codemirrorMode: String) {
        self.name = name
        self.version = version
        self.mimetype = mimetype
        self.fileExtension = fileExtension
        self.pygmentsLexer = pygmentsLexer
        self.codemirrorMode = codemirrorMode
    }
}

/// One entry of `help_links`.
public struct HelpLink: Sendable, Codable, Equatable {
    /// The link text.
    public var text: String
    /// The link target.
    public var url: String

    /// Creates a help link.
    public init(text: String, url: String) {
        self.text = text
        self.url = url
    }
}
