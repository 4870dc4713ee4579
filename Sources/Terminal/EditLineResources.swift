import CLineEditing
import Foundation

/// What a `LineEditor` allocates outside Swift — libedit's editor and history, the prompt string
/// libedit draws, the wake-up pipe — freed with the editor. The editor actor owns it and uses it
/// on its own thread only; it is freed on whichever thread lets go of the editor last, when
/// nothing can be using it any more (a job on the editor's thread would hold a reference).
final class EditLineResources {
    let editLine: OpaquePointer
    let history: OpaquePointer
    let wakeRead: Int32
    let wakeWrite: Int32
    /// The prompt libedit draws (libedit keeps the pointer).
    var prompt: UnsafeMutablePointer<CChar>?

    init(editLine: OpaquePointer, history: OpaquePointer, wakeRead: Int32, wakeWrite: Int32) {
        self.editLine = editLine
        self.history = history
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
    }

    deinit {
        el_end(editLine)
        history_end(history)
        free(prompt)
        close(wakeRead)
        close(wakeWrite)
    }
}
