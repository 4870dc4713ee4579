import Foundation
import JupyterProtocol
import Logging

/// The one owner of the IOPub socket. Any task or thread publishes through it; messages are
/// queued and sent in order by the socket's thread.
final class IOPubPublisher: Sendable {
    private let channel: any MessageTransport
    private let codec: WireCodec
    private let factory: MessageFactory
    private let logger: Logger

    init(channel: any MessageTransport, codec: WireCodec, factory: MessageFactory, logger: Logger) {
        self.channel = channel
        self.codec = codec
        self.factory = factory
        self.logger = logger
    }

    /// Publishes a message of `type` with `content`, in answer to `parent`, on the topic
    /// `kernel.SESSION.TYPE`.
    func publish(_ type: String, _ content: some Encodable, parent: MessageHeader?, metadata: [String: JSONValue] = [:]) {
        send(type, content, parent: parent, topic: Data("kernel.\(factory.session).\(type)".utf8), metadata: metadata)
    }

    /// Answers a new IOPub subscription (JEP 65): `iopub_welcome`, sent on the subscription's own
    /// topic so that subscriber receives it, tells a front end IOPub is connected, so it need
    /// not poll with `kernel_info_request` until a status arrives.
    func welcome(subscription topic: [UInt8]) {
        send("iopub_welcome", IOPubWelcome(subscription: String(decoding: topic, as: UTF8.self)), parent: nil, topic: Data(topic))
    }

    private func send(_ type: String, _ content: some Encodable, parent: MessageHeader?, topic: Data, metadata: [String: JSONValue] = [:]) {
        do {
            let message = try factory.message(type, content: content, parent: parent, identities: [topic], metadata: metadata)
            channel.send(try codec.encode(message).map { Array($0) })
        } catch {
            logger.error("could not encode \(type): \(error)")
        }
    }

    /// Publishes the kernel's execution state (`starting`, `busy`, `idle`).
    func publishStatus(_ state: String, parent: MessageHeader?) {
        publish("status", StatusContent(executionState: state), parent: parent)
    }
}
