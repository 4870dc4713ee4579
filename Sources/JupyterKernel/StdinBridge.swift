import Foundation
import JupyterProtocol
import Synchronization

/// Asks the front end for input over the stdin channel and waits for its `input_reply`.
/// At most one request is pending at a time, since one cell runs at a time.
final class StdinBridge: Sendable {
    private struct Pending {
        let requestID: String
        let continuation: CheckedContinuation<String, any Error>
    }

    private let channel: any MessageTransport
    private let codec: WireCodec
    private let factory: MessageFactory
    private let pending = Mutex<Pending?>(nil)

    init(channel: any MessageTransport, codec: WireCodec, factory: MessageFactory) {
        self.channel = channel
        self.codec = codec
        self.factory = factory
    }

    /// Sends `input_request` to the client behind `identities` and waits for its reply.
    /// Cancelling the calling task ends the wait with `CancellationError`.
    func requestInput(prompt: String, password: Bool, parent: MessageHeader, identities: [Data]) async throws -> String {
        let request = try factory.message(
            "input_request", content: InputRequest(prompt: prompt, password: password),
            parent: parent, identities: identities
        )
        let frames = try codec.encode(request).map { Array($0) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending.withLock { $0 = Pending(requestID: request.header.messageID, continuation: continuation) }
                if Task.isCancelled {
                    resumePending(with: .failure(CancellationError()))
                } else {
                    channel.send(frames)
                }
            }
        } onCancel: {
            resumePending(with: .failure(CancellationError()))
        }
    }

    /// Hands a message that arrived on the stdin channel to the waiting request, if it answers it.
    func deliver(_ message: Message) {
        guard message.messageType == "input_reply" else { return }
        let answersPending = pending.withLock { pending in
            guard let waiting = pending else { return false }
            return message.parentHeader.map { $0.messageID == waiting.requestID } ?? true
        }
        guard answersPending else { return }
        do {
            resumePending(with: .success(try message.decodeContent(InputReply.self).value))
        } catch {
            resumePending(with: .failure(error))
        }
    }

    /// Resumes the pending continuation, if any, exactly once: whoever takes it resumes it.
    private func resumePending(with result: Result<String, any Error>) {
        let taken = pending.withLock { pending in
            defer { pending = nil }
            return pending
        }
        taken?.continuation.resume(with: result)
    }
}
