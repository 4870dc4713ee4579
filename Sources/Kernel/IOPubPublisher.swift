import Foundation
import JupyterProtocol
import Logging

/// The one owner of the IOPub socket. Any task or thread publishes through it; messages are
/// queued and sent in order by the socket's thread.
final class IOPubPublisher: Sendable {
    private let channel: SocketChannel
    private let codec: WireCodec
    private let factory: MessageFactory
    private let logger: Logger

    init(channel: SocketChannel, codec: WireCodec, factory: MessageFactory, logger: Logger) {
        self.channel = channel
        self.codec = codec
        self.factory = factory
        self.logger = logger
    }

    /// Publishes a message of `type` with `content`, in answer to `parent`.
    func publish(_ type: String, _ content: some Encodable, parent: MessageHeader?) {
        do {
            let topic = Data("kernel.\(factory.session).\(type)".utf8)
            let message = try factory.message(type, content: content, parent: parent, identities: [topic])
            channel.send(try codec.encode(message).map { Array($0) })
        } catch {
            logger.error("could not encode \(type): \(error)")
        }
    }

    /// Answers a new IOPub subscription (JEP 65): `iopub_welcome`, sent on the subscription's own
    /// topic so that subscriber receives it, tells a front end IOPub is connected, so it need
    /// not poll with `kernel_info_request` until a status arrives.
    func welcome(subscription topic: [UInt8]) {
        do {
            let content = IOPubWelcome(subscription: String(decoding: topic, as: UTF8.self))
            let message = try factory.message("iopub_welcome", content: content, parent: nil, identities: [Data(topic)])
            channel.send(try codec.encode(message).map { Array($0) })
        } catch {
            logger.error("could not encode iopub_welcome: \(error)")
        }
    }

    /// Publishes the kernel's execution state (`starting`, `busy`, `idle`).
    func publishStatus(_ state: String, parent: MessageHeader?) {
        publish("status", StatusContent(executionState: state), parent: parent)
    }
}
