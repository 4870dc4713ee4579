import Evaluation
import LumenLanguage
import Synchronization

/// A Stop button shown above a streaming generation in a front end with widgets: pressing it
/// calls `action` (which stops that generation alone; the cell goes on), and when the
/// generation ends the button is replaced by nothing and its comm closed, so a saved notebook
/// keeps no dead widget.
public final class StopButton: Sendable {
    private let widget: Widget
    private let displayID: String
    private let pressed = Mutex(false)

    private init(widget: Widget) {
        self.widget = widget
        displayID = "stop-" + widget.id
    }

    /// Shows a Stop button in `context`'s output that calls `action` once when pressed; nil where
    /// widgets do not show (the terminal and `lumen run` have Ctrl-C and timeouts).
    public static func show(context: Builtin.Context, action: @escaping @Sendable () -> Void) throws -> StopButton? {
        guard context.output.showsWidgets else { return nil }
        let widget = try Widget.make(.named("Button"), settings: [
            ("description", .string("Stop")), ("buttonStyle", .string("danger")), ("icon", .string("stop")),
            ("tooltip", .string("Stops this generation; the cell goes on")),
        ], context: context)
        let button = StopButton(widget: widget)
        widget.onClick(.native { _ in
            let first = button.pressed.withLock { pressed in
                defer { pressed = true }
                return !pressed
            }
            if first { action() }
        })
        context.output.display(widget.mimeBundle, displayID: button.displayID)
        return button
    }

    /// Whether it was pressed.
    public var wasPressed: Bool { pressed.withLock { $0 } }

    /// Removes the button: its display emptied, its comm closed.
    public func remove(context: Builtin.Context) {
        context.output.updateDisplay(.plainText(""), displayID: displayID)
        widget.close(context: context)
    }
}
