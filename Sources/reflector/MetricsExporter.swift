import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import ServiceLifecycle

/// The reflector's metrics over HTTP for Prometheus (`--metrics-port`): a service of the reflector's
/// `ServiceGroup` that serves `GET /metrics` until the graceful shutdown.
final class MetricsExporter: Service {
    /// The bound port (the one the system chose, when asked for port 0).
    let port: Int
    private let channel: any Channel

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    /// Binds the HTTP listener; it serves at once.
    ///
    /// - Parameters:
    ///   - host: the address to listen on ("127.0.0.1": this host only).
    ///   - port: the TCP port, 0 for an ephemeral one.
    ///   - registry: the metrics to serve.
    /// - Returns: the exporter, to run in a `ServiceGroup`.
    /// - Throws: if the address cannot be bound.
    static func bind(host: String, port: Int, registry: PrometheusCollectorRegistry) async throws -> MetricsExporter {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(registry: registry))
                }
            }
            .bind(host: host, port: port)
            .get()
        return MetricsExporter(channel: channel, port: channel.localAddress?.port ?? port)
    }

    /// Serves until the graceful shutdown or the task's cancellation, then closes the listener.
    func run() async throws {
        try? await gracefulShutdown()
        try? await channel.close()
    }
}
