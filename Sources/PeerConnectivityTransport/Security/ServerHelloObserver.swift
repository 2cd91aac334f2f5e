import NIOCore
import PeerConnectivityCore

/// Sits in front of the TLS handler (next to the socket) until the server's first record has passed,
/// reads the cipher suite from it (see ``TLSServerHello``), reports it, and leaves the pipeline.
///
/// On the client side the ServerHello is read from the socket; on the server side it is written to it.
/// It looks at no more than the first 512 bytes of that direction, and passes every byte on unchanged.
/// It leaves on the next turn of the event loop, not inside the read or write that told it: the TLS
/// handler's flush of that write would otherwise not reach the socket.
package final class ServerHelloObserver: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    /// The most bytes looked at before giving up.
    static let limit = 512

    private let watchesIncoming: Bool
    private var seen: [UInt8] = []
    private var report: ((UInt16?) -> Void)?

    /// - Parameters:
    ///   - isClient: this side is the TLS client, so the ServerHello comes in; else it goes out.
    ///   - report: called once, on the event loop, with the cipher suite or `nil`.
    package init(isClient: Bool, report: @escaping (UInt16?) -> Void) {
        self.watchesIncoming = isClient
        self.report = report
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if watchesIncoming { look(at: unwrapInboundIn(data), context: context) }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !watchesIncoming { look(at: unwrapOutboundIn(data), context: context) }
        context.write(data, promise: promise)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        finish(nil, context: nil)
    }

    private func look(at buffer: ByteBuffer, context: ChannelHandlerContext) {
        guard report != nil else { return }
        seen += buffer.readableBytesView.prefix(Self.limit - seen.count)
        switch TLSServerHello.read(seen) {
        case .needMoreBytes where seen.count < Self.limit:
            return
        case .cipherSuite(let suite):
            finish(suite, context: context)
        case .needMoreBytes, .notAServerHello:
            finish(nil, context: context)
        }
    }

    private func finish(_ suite: UInt16?, context: ChannelHandlerContext?) {
        guard let report else { return }
        self.report = nil
        seen = []
        report(suite)
        guard let context else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let context = loopBound.value
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
