import Evaluation
import LumenLanguage
import Synchronization

/// A conversation in a notebook: the transcript (an Output widget) above a message box and a
/// Send button. Sending (the button, or Enter in the box) shows the message, empties the box and
/// runs `reply` in a task of its own, its output — the streamed reply, its Stop button — in the
/// transcript; Send is disabled until the reply ends.
public enum ChatForm {
    /// The form, as a VBox; `reply` answers one message, writing to the context it is given.
    public static func make(context: Builtin.Context,
                            reply: @escaping @Sendable (String, Builtin.Context) async throws -> Void) async throws -> Value {
        let transcript = try Widget.make(.named("Output"), settings: [], context: context)
        let box = try Widget.make(.named("Text"), settings: [("placeholder", .string("Message")), ("continuousUpdate", .bool(false))],
                                  context: context)
        let send = try Widget.make(.named("Button"), settings: [("description", .string("Send")), ("buttonStyle", .string("primary"))],
                                   context: context)
        let replying = Replying()
        let submit = Widget.Handler.native { context in
            guard case .string(let message)? = try box.property("value"), !message.isEmpty, replying.start() else { return }
            try await box.setProperty("value", to: .string(""), context: context)
            try await send.setProperty("disabled", to: .bool(true), context: context)
            let sink = OutputWidgetSink(widget: transcript, base: context.output)
            sink.display(MIMEBundle(["text/plain": "You: " + message, "text/markdown": "**You:** " + message]), displayID: nil)
            Task {
                do {
                    try await reply(message, context.with(output: sink))
                } catch let error as LumenError {
                    sink.error(error.executionError(in: SourceText(label: "chat", text: "")))
                } catch {
                    sink.error(ExecutionError(name: "Error", message: "\(error)", traceback: ["\(error)"]))
                }
                replying.end()
                try? await send.setProperty("disabled", to: .bool(false), context: context)
            }
        }
        send.onClick(submit)
        box.on("submit", submit)
        let input = try Widget.make(.named("HBox"), settings: [("children", .array([.host(box), .host(send)]))], context: context)
        return .host(try Widget.make(.named("VBox"), settings: [("children", .array([.host(transcript), .host(input)]))], context: context))
    }
}

/// Whether a chat form's reply is going on: one at a time.
private final class Replying: Sendable {
    private let busy = Mutex(false)

    /// Marks a reply started; false when one already is.
    func start() -> Bool {
        busy.withLock { busy in
            defer { busy = true }
            return !busy
        }
    }

    func end() {
        busy.withLock { $0 = false }
    }
}
