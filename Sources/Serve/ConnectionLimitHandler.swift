import HTTPTypes
import NIOCore
import NIOHTTPTypes
import OpenAIAPI
import Foundation

/// In each connection's pipeline: counts the connection against the server's `ConnectionLimit`
/// while it is open, and when it is one too many answers its first request 503 (with
/// `Retry-After`, in OpenAI's error shape) and closes it, passing nothing on. A refused
/// connection that sends no request within a second is closed without an answer, so refused
/// connections cannot hold descriptors for the idle timeout; when even refusing would take
/// descriptors the server cannot spare, the connection is closed at once. An admitted connection
/// is marked idle from its start and after each answer, busy from each request's head, so the
/// limit can close the one idle longest to admit another.
final class ConnectionLimitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Counts the connection from `handlerAdded` to `handlerRemoved`, which NIO calls once each.
    private let limit: ConnectionLimit
    /// Whether this connection is over the limit.
    private var refused = false
    /// A refused connection's close, if it sends no request in time.
    private var closing: Scheduled<Void>?

    init(limit: ConnectionLimit) {
        self.limit = limit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        switch limit.admit() {
        case .admitted:
            limit.setIdle(context.channel, true)
        case .refused:
            refused = true
            closing = context.eventLoop.assumeIsolated().scheduleTask(in: Self.refusalWait) { context.close(promise: nil) }
        case .dropped:
            refused = true
            context.close(promise: nil)
        }
    }

    /// How long a refused connection may take to send the request its 503 answers.
    static let refusalWait = TimeAmount.seconds(1)

    func handlerRemoved(context: ChannelHandlerContext) {
        if !refused { limit.setIdle(context.channel, false) }
        limit.leave()
        closing?.cancel()
        closing = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !refused, case .end = unwrapOutboundIn(data) { limit.setIdle(context.channel, true) }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard refused else {
            if case .head = unwrapInboundIn(data) { limit.setIdle(context.channel, false) }
            return context.fireChannelRead(data)
        }
        guard case .head = unwrapInboundIn(data) else { return }
        let error = APIErrorResponse(message: "the server has \(limit.limit) connections open, the most it takes; try again shortly",
                                     type: "server_error", code: "too_many_connections")
        let body = ByteBuffer(data: (try? JSONEncoder().encode(error)) ?? Data())
        let fields: HTTPFields = [.contentType: "application/json", .contentLength: "\(body.readableBytes)", .connection: "close",
                                  .retryAfter: "\(ServerLimits.retryAfterSeconds)"]
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .serviceUnavailable, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
