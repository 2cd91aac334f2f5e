import NIOCore
import NIOHTTP1
import Prometheus

/// Answers `GET /metrics` with the registry's metrics in Prometheus's text format, anything else with
/// 404 or 405; one request per connection, then it closes.
final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The content type of Prometheus's text exposition format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let registry: PrometheusCollectorRegistry
    private var request: HTTPRequestHead?

    /// - Parameter registry: where the reflector's metrics are.
    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request.take() else { return }
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let status: HTTPResponseStatus
        var body = context.channel.allocator.buffer(capacity: 0)
        if path != "/metrics" {
            status = .notFound
            body.writeString("not found: try GET /metrics\n")
        } else if head.method != .GET && head.method != .HEAD {
            status = .methodNotAllowed
        } else {
            status = .ok
            if head.method == .GET { body.writeBytes(registry.emitToBuffer()) }
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: status == .ok ? Self.contentType : "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        headers.add(name: "Connection", value: "close")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil
        )
        if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}
