import Foundation
import JupyterProtocol

/// A Jupyter notebook (nbformat 4.0–4.5) read as JSON and validated, keeping every field it does
/// not interpret (metadata, attachments, unknown keys) so that writing it back loses nothing.
public struct NotebookDocument: Sendable {
    /// One cell. `fields` holds the whole JSON object; the accessors read and write its parts.
    public struct Cell: Sendable {
        /// The cell's JSON object.
        public var fields: [String: JSONValue]

        /// `code`, `markdown` or `raw`.
        public var type: String { fields["cell_type"]?.stringValue ?? "" }

        /// The source, joined.
        public var source: String {
            get {
                switch fields["source"] {
                case .string(let text)?: text
                case .array(let lines)?: lines.compactMap(\.stringValue).joined()
                default: ""
                }
            }
            set { fields["source"] = .array(NotebookDocument.lines(newValue).map { .string($0) }) }
        }

        /// The cell's tags (`metadata.tags`).
        public var tags: [String] {
            fields["metadata"]?.objectValue?["tags"].flatMap { if case .array(let tags) = $0 { tags.compactMap(\.stringValue) } else { nil } } ?? []
        }

        /// Creates a code cell.
        public static func code(_ source: String, tags: [String] = [], id: String) -> Cell {
            var cell = Cell(fields: [
                "cell_type": .string("code"), "id": .string(id), "execution_count": .null, "outputs": .array([]),
                "metadata": .object(tags.isEmpty ? [:] : ["tags": .array(tags.map { .string($0) })]),
            ])
            cell.source = source
            return cell
        }
    }

    /// The cells, in order.
    public var cells: [Cell]
    /// Everything else at the top level (metadata, nbformat, nbformat_minor, unknown keys).
    public var topLevel: [String: JSONValue]

    /// Parses and validates notebook JSON; errors name the cell index and field.
    public init(data: Data, path: String) throws(NotebookError) {
        guard let root = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            throw NotebookError(path: path, detail: "is not valid JSON")
        }
        guard case .object(var members) = root else {
            throw NotebookError(path: path, detail: "the top level is not a JSON object")
        }
        guard case .int(let major)? = members["nbformat"], major == 4 else {
            throw NotebookError(path: path, detail: "nbformat must be 4 (found \(members["nbformat"].map { JupyterJSON.format($0).trimmingCharacters(in: .newlines) } ?? "none"))")
        }
        if let minor = members["nbformat_minor"] {
            guard case .int(let value) = minor, (0...5).contains(value) else {
                throw NotebookError(path: path, detail: "nbformat_minor must be 0 to 5")
            }
        }
        guard case .array(let rawCells)? = members.removeValue(forKey: "cells") else {
            throw NotebookError(path: path, detail: "'cells' is missing or not a list")
        }
        var cells: [Cell] = []
        for (index, raw) in rawCells.enumerated() {
            guard case .object(let fields) = raw else {
                throw NotebookError(path: path, detail: "cell \(index) is not a JSON object")
            }
            guard let type = fields["cell_type"]?.stringValue, ["code", "markdown", "raw"].contains(type) else {
                throw NotebookError(path: path, detail: "cell \(index): cell_type must be \"code\", \"markdown\" or \"raw\"")
            }
            switch fields["source"] {
            case .string?: break
            case .array(let lines)? where lines.allSatisfy({ $0.stringValue != nil }): break
            default: throw NotebookError(path: path, detail: "cell \(index): source must be a string or a list of strings")
            }
            if let metadata = fields["metadata"], metadata.objectValue == nil {
                throw NotebookError(path: path, detail: "cell \(index): metadata must be an object")
            }
            if type == "code", let outputs = fields["outputs"] {
                guard case .array = outputs else { throw NotebookError(path: path, detail: "cell \(index): outputs must be a list") }
            }
            cells.append(Cell(fields: fields))
        }
        self.cells = cells
        self.topLevel = members
    }

    /// Reads and validates the notebook at `path`.
    public init(path: String) throws(NotebookError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw NotebookError(path: path, detail: "cannot be read: \(error.localizedDescription)")
        }
        try self.init(data: data, path: path)
    }

    /// The notebook as Jupyter writes it; 4.5 cells get ids when they lack one.
    public func serialized() -> String {
        var members = topLevel
        let addIDs = members["nbformat_minor"] == .int(5)
        members["cells"] = .array(cells.enumerated().map { index, cell in
            var fields = cell.fields
            if addIDs && fields["id"] == nil { fields["id"] = .string(String(format: "cell-%04d", index)) }
            return .object(fields)
        })
        return JupyterJSON.format(.object(members))
    }

    /// Writes the notebook to `path` atomically (a temporary file, then a rename).
    public func write(to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        try Data(serialized().utf8).write(to: temporary)
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw NotebookError(path: path, detail: "cannot be written: \(reason)")
        }
    }

    /// `text` split into lines that keep their line breaks, as nbformat stores multi-line strings.
    static func lines(_ text: String) -> [String] {
        var lines: [String] = []
        var current = ""
        for character in text {
            current.append(character)
            if character == "\n" {
                lines.append(current)
                current = ""
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }
}

/// A notebook that cannot be read, validated or written.
public struct NotebookError: Error, CustomStringConvertible {
    /// The notebook's path.
    public let path: String
    /// What is wrong.
    public let detail: String

    public var description: String { "\(path): \(detail)" }
}
