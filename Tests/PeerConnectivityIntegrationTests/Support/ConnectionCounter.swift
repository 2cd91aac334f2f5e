import NIOCore
import NIOPosix
import Synchronization

/// A TCP listener on 127.0.0.1 that counts the connections made to it and says nothing on them: a stand-in
/// for an address a session should, or should not, dial. With `closesAtOnce` it closes each at once.
final class ConnectionCounter: Sendable {
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    let port: Int
    private let listener: any Channel
    private let accepted: Count

    /// Connections accepted so far.
    var count: Int { accepted.value.load(ordering: .relaxed) }

    private init(listener: any Channel, accepted: Count) {
        self.listener = listener
        self.port = listener.localAddress!.port!
        self.accepted = accepted
    }

    static func start(closesAtOnce: Bool = false) async throws -> ConnectionCounter {
        let accepted = Count()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                accepted.value.add(1, ordering: .relaxed)
                if closesAtOnce { channel.close(promise: nil) }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return ConnectionCounter(listener: listener, accepted: accepted)
    }

    func stop() async {
        try? await listener.close()
    }
}
