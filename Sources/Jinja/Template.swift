/// A Jinja template, parsed once and rendered with jinja2's semantics as Hugging Face transformers
/// configures it for chat templates (`trim_blocks`, `lstrip_blocks`, loop controls, an immutable
/// sandbox).
public struct Template: Sendable {
    private let nodes: [Node]

    /// Parses `source`; a syntax error names its line and column.
    public init(_ source: String) throws(TemplateError) {
        var lexer = TemplateLexer(source)
        var parser = TemplateParser(pieces: try lexer.pieces())
        nodes = try parser.parseTemplate()
    }

    /// Renders the template with `variables` in `environment`.
    public func render(_ variables: [String: TemplateValue], environment: TemplateEnvironment) throws(TemplateError) -> String {
        var renderer = Renderer(environment: environment, variables: variables)
        return try renderer.render(nodes)
    }
}
