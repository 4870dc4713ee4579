import CLineEditing
import Evaluation
import Executors
import Foundation
import Synchronization

/// Line editing for the interactive REPL through libedit (BSD editline): emacs keys (arrows,
/// Home/End, Ctrl-A/E/K/U/W, Ctrl-L, Ctrl-R history search, and the user's `~/.editrc`), history,
/// tab completion through the interpreter's completer, and multi-line cells edited as one unit
/// (Enter on an incomplete cell inserts a new line; a blank last line or a complete cell runs it).
///
/// libedit blocks while it reads, so the editor is an actor on a thread of its own. It reads
/// characters itself (`poll` on stdin and a wake-up pipe), which lets Ctrl-C at the prompt clear
/// the line, a terminal resize take effect, and output from background jobs be printed above the
/// prompt (through `TerminalScreen`) while a line is being typed, without touching that line.
public actor LineEditor {
    /// What reading a cell gave.
    public enum Reading: Sendable, Equatable {
        /// The text typed, without its final new line.
        case cell(String)
        /// Ctrl-C: the line was abandoned (it may have been empty).
        case interrupted(lineWasEmpty: Bool)
        /// Ctrl-D on an empty line, or the end of input.
        case endOfInput
    }

    /// Questions the editor asks about the code being typed.
    public struct Assistant: Sendable {
        /// Whether the code is ready to run, or the indentation its next line needs.
        let completeness: @Sendable (String) async -> Completeness
        /// Completion candidates for the code with the cursor at a Unicode scalar offset.
        let complete: @Sendable (String, Int) async -> Completion

        /// An assistant answering with `completeness` and `complete`.
        public init(completeness: @escaping @Sendable (String) async -> Completeness,
                    complete: @escaping @Sendable (String, Int) async -> Completion) {
            self.completeness = completeness
            self.complete = complete
        }
    }

    /// Standard input ended while a cell waited for input.
    public struct EndOfInput: Error, CustomStringConvertible {
        public var description: String { "standard input ended" }
    }

    private let executor = ThreadExecutor(name: "lumen-line-editor")
    /// The editor's own thread: libedit blocks on it while it reads.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let assistant: Assistant
    /// The wake-up pipe's write end, kept outside `resources` for the nonisolated `interrupt`
    /// and `resized`.
    private let wakeWrite: Int32
    private let interruptRequested = Atomic<Bool>(false)
    private let resizeRequested = Atomic<Bool>(false)
    /// libedit's state, the prompt and the pipe, freed with the editor.
    private let resources: EditLineResources
    private var editLine: OpaquePointer { resources.editLine }
    private var history: OpaquePointer { resources.history }
    private var wakeRead: Int32 { resources.wakeRead }
    /// The prompt libedit draws (libedit keeps the pointer).
    private var prompt: UnsafeMutablePointer<CChar>? {
        get { resources.prompt }
        set { resources.prompt = newValue }
    }
    /// Whether the line being read is a cell (so output is printed above it).
    private var readingCell = false
    /// Set when Ctrl-C ended the line being read: whether that line was empty.
    private var interruptedLineWasEmpty: Bool?

    /// Sets up libedit on the terminal; nil when stdin is not one or libedit cannot start.
    public init?(assistant: Assistant) {
        guard isatty(STDIN_FILENO) != 0 else { return nil }
        Self.useUTF8Characters()
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        // libedit reads and writes through stdio streams of its own on the standard descriptors
        // (kept open for the life of the process, as the descriptors are). With stdout piped
        // (`lumen repl | tee log`), the prompt and the line go to stderr, as Python's do.
        let editorOutput = isatty(STDOUT_FILENO) != 0 ? STDOUT_FILENO : STDERR_FILENO
        guard isatty(editorOutput) != 0 else { return nil }
        guard let input = fdopen(STDIN_FILENO, "r"), let output = fdopen(editorOutput, "w"), let errors = fdopen(STDERR_FILENO, "w"),
              let editLine = el_init("lumen", input, output, errors), let history = lumen_history_open(1000) else {
            close(ends[0])
            close(ends[1])
            return nil
        }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        self.assistant = assistant
        wakeWrite = ends[1]
        resources = EditLineResources(editLine: editLine, history: history, wakeRead: ends[0], wakeWrite: ends[1])
        lumen_el_set_client_data(editLine, Unmanaged.passUnretained(self).toOpaque())
        Self.configure(editLine, history: history)
    }

    /// The key bindings: libedit's emacs map, with Enter, Tab and Ctrl-C ours, and readline's
    /// meaning for Ctrl-R, Ctrl-U, Ctrl-W, Home and End; then the user's `~/.editrc`.
    private static func configure(_ editLine: OpaquePointer, history: OpaquePointer) {
        lumen_el_set_editor(editLine, "emacs")
        lumen_el_set_history(editLine, history)
        lumen_el_set_prompt(editLine, promptCallback)
        lumen_el_set_read_character(editLine, readCharacterCallback)
        lumen_el_add_function(editLine, "lumen-enter", "Run the cell if it is complete, else start a new line", enterCallback)
        lumen_el_add_function(editLine, "lumen-complete", "Complete the name at the cursor", completeCallback)
        lumen_el_add_function(editLine, "lumen-interrupt", "Abandon the line", interruptCallback)
        let bindings = [
            ("^M", "lumen-enter"), ("^J", "lumen-enter"), (acceptBinding, "ed-newline"),
            ("^I", "lumen-complete"), ("^C", "lumen-interrupt"),
            ("^R", "em-inc-search-prev"), ("^U", "vi-kill-line-prev"), ("^W", "ed-delete-prev-word"),
            ("\\e[H", "ed-move-to-beg"), ("\\eOH", "ed-move-to-beg"), ("\\e[1~", "ed-move-to-beg"),
            ("\\e[F", "ed-move-to-end"), ("\\eOF", "ed-move-to-end"), ("\\e[4~", "ed-move-to-end"),
        ]
        for (key, command) in bindings { lumen_el_bind(editLine, key, command) }
        el_source(editLine, nil)
    }

    /// A key sequence no terminal sends, bound to libedit's own accept command (`ed-newline`,
    /// which also moves below the line): the Enter and Ctrl-C commands push it to end the line.
    private static let acceptSequence = "\u{1B}[9999~"
    private static let acceptBinding = "\\e[9999~"

    /// libedit converts between its wide characters and bytes by the C locale: UTF-8 unless the
    /// environment names another encoding.
    private static func useUTF8Characters() {
        setlocale(LC_CTYPE, "")
        if let codeset = nl_langinfo(nl_item(CODESET)), String(cString: codeset) != "UTF-8" {
            setlocale(LC_CTYPE, "C.UTF-8")
        }
    }

    // MARK: - Reading

    /// Reads a cell at `prompt`, with history and completion; output arriving meanwhile is
    /// printed above the prompt.
    public func readCell(prompt text: String) -> Reading {
        setPrompt(text)
        interruptRequested.store(false, ordering: .sequentiallyConsistent)
        interruptedLineWasEmpty = nil
        readingCell = true
        let lead = TerminalScreen.shared.beginPrompt { [wakeWrite] in Self.wake(wakeWrite) }
        if !lead.isEmpty { FileHandle.standardOutput.write(Data(lead.utf8)) }
        var count: Int32 = 0
        let line = el_gets(editLine, &count)
        readingCell = false
        TerminalScreen.shared.endPrompt()
        if let interruptedLineWasEmpty { return .interrupted(lineWasEmpty: interruptedLineWasEmpty) }
        guard let line, count > 0 else { return .endOfInput }
        var cell = String(cString: line)
        if cell.hasSuffix("\n") { cell.removeLast() }
        return .cell(cell)
    }

    /// Reads one line for a cell's `input()`, echoed or (for a password) not; an interrupt
    /// ends the wait with `CancellationError`.
    public func readLine(prompt text: String, echo: Bool) throws -> String {
        TerminalScreen.shared.write(text)
        var saved = termios()
        let restoreEcho = !echo && tcgetattr(STDIN_FILENO, &saved) == 0
        if restoreEcho {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        }
        defer {
            if restoreEcho {
                tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                TerminalScreen.shared.write("\n")
            }
        }
        var bytes: [UInt8] = []
        while true {
            if interruptRequested.exchange(false, ordering: .sequentiallyConsistent) { throw CancellationError() }
            guard waitForInput() else { continue }
            var byte: UInt8 = 0
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            if count <= 0 {
                if bytes.isEmpty { throw EndOfInput() }
                break
            }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        TerminalScreen.shared.endOpenLine()
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Adds cells, oldest first, to the history the arrows and Ctrl-R go through.
    public func remember(_ cells: [String]) {
        for cell in cells { lumen_history_enter(history, cell) }
    }

    /// Ends the line being read as Ctrl-C does (or the wait of `readLine`); from any thread.
    public nonisolated func interrupt() {
        interruptRequested.store(true, ordering: .sequentiallyConsistent)
        Self.wake(wakeWrite)
    }

    /// The terminal changed size; from any thread.
    public nonisolated func resized() {
        resizeRequested.store(true, ordering: .sequentiallyConsistent)
        Self.wake(wakeWrite)
    }

    private static func wake(_ descriptor: Int32) {
        var byte: UInt8 = 1
        _ = write(descriptor, &byte, 1)
    }

    private func setPrompt(_ text: String) {
        free(prompt)
        prompt = strdup(text)
    }

    /// Waits until stdin has input (true) or the wake-up pipe was written (false), handling
    /// what the wake-up was for.
    private func waitForInput() -> Bool {
        var descriptors = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        guard poll(&descriptors, 2, -1) > 0 else { return false }
        if descriptors[1].revents != 0 {
            var scratch = [UInt8](repeating: 0, count: 64)
            while read(wakeRead, &scratch, scratch.count) > 0 {}
            return false
        }
        return descriptors[0].revents != 0
    }

    /// libedit's character source: the next character typed, or Ctrl-C (3) after an interrupt;
    /// with 1 when a character was read, 0 at the end of input, -1 on an error.
    private func nextCharacter() -> (status: Int32, character: wchar_t) {
        while true {
            if interruptRequested.exchange(false, ordering: .sequentiallyConsistent) { return (1, 3) }
            if resizeRequested.exchange(false, ordering: .sequentiallyConsistent) {
                el_resize(editLine)
                lumen_el_refresh(editLine)
            }
            printQueuedOutput()
            guard waitForInput() else { continue }
            switch Self.readScalar() {
            case .scalar(let scalar): return (1, wchar_t(bitPattern: scalar.value))
            case .endOfInput: return (0, 0)
            case .retry: continue
            case .failed: return (-1, 0)
            }
        }
    }

    /// Prints output queued by jobs above the prompt and redraws the prompt and line below it.
    private func printQueuedOutput() {
        guard readingCell, TerminalScreen.shared.hasQueuedOutput else { return }
        let beforeCursor = (prompt.map { String(cString: $0) } ?? "") + currentLine().beforeCursor
        let width = TerminalScreen.width
        let rowsAbove = TerminalScreen.rowsAboveEnd(of: beforeCursor, width: width)
        if TerminalScreen.shared.drainAbovePrompt(rowsAbove: rowsAbove, width: width) {
            lumen_el_refresh(editLine)
        }
    }

    /// The line being edited, the cursor's offset in it (in Unicode scalars) and the text
    /// before the cursor.
    private func currentLine() -> (text: String, cursor: Int, beforeCursor: String) {
        guard let info = el_line(editLine) else { return ("", 0, "") }
        let length = info.pointee.lastchar - info.pointee.buffer
        let cursorBytes = info.pointee.cursor - info.pointee.buffer
        let bytes = UnsafeRawBufferPointer(start: info.pointee.buffer, count: max(0, length))
        let text = String(decoding: bytes, as: UTF8.self)
        let before = String(decoding: bytes.prefix(max(0, cursorBytes)), as: UTF8.self)
        return (text, before.unicodeScalars.count, before)
    }

    private enum ReadResult {
        case scalar(Unicode.Scalar)
        case endOfInput
        case retry
        case failed
    }

    /// Reads one UTF-8 encoded scalar from stdin (a malformed sequence reads as U+FFFD).
    private static func readScalar() -> ReadResult {
        var lead: UInt8 = 0
        let count = read(STDIN_FILENO, &lead, 1)
        if count == 0 { return .endOfInput }
        if count < 0 { return errno == EINTR || errno == EAGAIN ? .retry : .failed }
        let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        var bytes = [lead]
        while bytes.count < length {
            var next: UInt8 = 0
            let read = Foundation.read(STDIN_FILENO, &next, 1)
            if read < 0, errno == EINTR { continue }
            guard read == 1 else { break }
            bytes.append(next)
        }
        return .scalar(String(decoding: bytes, as: UTF8.self).unicodeScalars.first ?? "\u{FFFD}")
    }

    // MARK: - Commands bound to keys

    /// Enter: a complete cell (or one ending in a blank line) is accepted; an incomplete one
    /// gets a new line with the indentation it needs.
    private func enter() -> UInt8 {
        let text = currentLine().text
        let lastLine = text.split(separator: "\n", omittingEmptySubsequences: false).last ?? ""
        let endsInBlankLine = text.contains("\n") && lastLine.allSatisfy(\.isWhitespace)
        if !endsInBlankLine, case .incomplete(let indent)? = Self.waitFor({ [assistant] in await assistant.completeness(text) }) {
            el_insertstr(editLine, "\n" + indent)
            return UInt8(CC_REFRESH)
        }
        printQueuedOutput()
        el_push(editLine, Self.acceptSequence)
        return UInt8(CC_NORM)
    }

    /// Tab: one candidate is inserted; several insert what they share, or are listed below
    /// the line (as IPython and bash list them) when they share no more than was typed.
    private func complete() -> UInt8 {
        let (text, cursor, _) = currentLine()
        guard let completion = Self.waitFor({ [assistant] in await assistant.complete(text, cursor) }),
              !completion.matches.isEmpty, completion.start <= cursor else { return UInt8(CC_ERROR) }
        let scalars = Array(text.unicodeScalars)
        let typed = String(String.UnicodeScalarView(scalars[completion.start..<cursor]))
        let shared = Self.commonPrefix(of: completion.matches)
        if completion.matches.count == 1 || shared.unicodeScalars.count > typed.unicodeScalars.count {
            el_deletestr(editLine, Int32(cursor - completion.start))
            el_insertstr(editLine, completion.matches.count == 1 ? completion.matches[0] : shared)
            return UInt8(CC_REFRESH)
        }
        let linesBelow = scalars[cursor...].count { $0 == "\n" }
        let listing = Self.columns(completion.matches, width: TerminalScreen.width)
        let down = linesBelow > 0 ? "\u{1B}[\(linesBelow)B" : ""
        FileHandle.standardOutput.write(Data((down + "\r\n" + listing).utf8))
        TerminalScreen.shared.endOpenLine()
        return UInt8(CC_REDISPLAY)
    }

    /// Ctrl-C at the prompt: the line is abandoned.
    private func interruptLine() -> UInt8 {
        interruptedLineWasEmpty = currentLine().text.isEmpty
        el_push(editLine, Self.acceptSequence)
        return UInt8(CC_NORM)
    }

    /// Candidates in columns filling the width, down then across, each line ending in a new line.
    static func columns(_ items: [String], width: Int) -> String {
        let columnWidth = (items.map { TerminalScreen.displayWidth(of: $0) }.max() ?? 0) + 2
        let perLine = max(1, width / columnWidth)
        let lineCount = (items.count + perLine - 1) / perLine
        var text = ""
        for line in 0..<lineCount {
            var row = ""
            for column in 0..<perLine {
                let index = column * lineCount + line
                guard index < items.count else { break }
                let item = items[index]
                row += item + String(repeating: " ", count: max(0, columnWidth - TerminalScreen.displayWidth(of: item)))
            }
            while row.hasSuffix(" ") { row.removeLast() }
            text += row + "\n"
        }
        return text
    }

    private static func commonPrefix(of items: [String]) -> String {
        guard var shared = items.first.map({ Array($0.unicodeScalars) }) else { return "" }
        for item in items.dropFirst() {
            let scalars = Array(item.unicodeScalars)
            var length = 0
            while length < min(shared.count, scalars.count), shared[length] == scalars[length] { length += 1 }
            shared = Array(shared.prefix(length))
        }
        return String(String.UnicodeScalarView(shared))
    }

    /// Runs `work` on the cooperative pool and waits for it on this (dedicated) thread, for the
    /// key commands libedit calls synchronously.
    private static func waitFor<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) -> Result? {
        let result = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let value = await work()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    // MARK: - Callbacks from libedit (on the editor's thread, inside `el_gets`)

    private static func editor(of editLine: OpaquePointer?) -> LineEditor? {
        guard let editLine, let data = lumen_el_client_data(editLine) else { return nil }
        return Unmanaged<LineEditor>.fromOpaque(data).takeUnretainedValue()
    }

    private static let promptCallback: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>? = { editLine in
        // The pointer crosses the isolation check as an address: it is owned by the editor and
        // stays valid until the next `readCell` replaces it, after libedit has drawn it.
        UnsafeMutablePointer(bitPattern: editor(of: editLine)?.assumeIsolated { Int(bitPattern: $0.prompt) } ?? 0)
    }

    private static let readCharacterCallback: @convention(c) (OpaquePointer?, UnsafeMutablePointer<wchar_t>?) -> Int32 = { editLine, character in
        guard let character, let editor = editor(of: editLine) else { return -1 }
        let (status, read) = editor.assumeIsolated { $0.nextCharacter() }
        character.pointee = read
        return status
    }

    private static let enterCallback: @convention(c) (OpaquePointer?, Int32) -> UInt8 = { editLine, _ in
        editor(of: editLine)?.assumeIsolated { $0.enter() } ?? UInt8(CC_ERROR)
    }

    private static let completeCallback: @convention(c) (OpaquePointer?, Int32) -> UInt8 = { editLine, _ in
        editor(of: editLine)?.assumeIsolated { $0.complete() } ?? UInt8(CC_ERROR)
    }

    private static let interruptCallback: @convention(c) (OpaquePointer?, Int32) -> UInt8 = { editLine, _ in
        editor(of: editLine)?.assumeIsolated { $0.interruptLine() } ?? UInt8(CC_ERROR)
    }
}
