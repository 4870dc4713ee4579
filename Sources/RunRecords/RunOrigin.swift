/// Where a run happened: the front end, and for notebooks the notebook and cell.
public struct RunOrigin: Codable, Sendable, Equatable {
    /// `kernel`, `repl`, `run` (lumen run) or `cli`.
    public var frontEnd: String
    /// The notebook's path, when known.
    public var notebook: String?
    /// The cell's id, when the front end sends it.
    public var cell: String?
    /// The cell's execution count.
    public var executionCount: Int?

    /// An origin.
    public init(frontEnd: String, notebook: String? = nil, cell: String? = nil, executionCount: Int? = nil) {
        self.frontEnd = frontEnd
        self.notebook = notebook
        self.cell = cell
        self.executionCount = executionCount
    }
}
