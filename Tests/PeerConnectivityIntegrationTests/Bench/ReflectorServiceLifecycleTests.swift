import Foundation
import Logging
import PeerConnectivity
import PeerConnectivityBench
import ServiceLifecycle
import Synchronization
import Testing

/// The reflector as a service of swift-service-lifecycle, as an app (or the tool) runs it.
@Suite("Reflector service lifecycle", .timeLimit(.minutes(1 * slowdown)))
struct ReflectorServiceLifecycleTests {
    @Test("a graceful shutdown says goodbye to the runners, stops, and logs a summary")
    func gracefulShutdown() async throws {
        let lines = Mutex<[String]>([])
        var configuration = ReflectorConfiguration(
            name: "lifecycle",
            serviceType: "pc-lifecycle",
            host: "127.0.0.1",
            port: 0,
            rawEchoPort: nil,
            publishesService: false
        )
        configuration.encryption = .none
        configuration.datagramPorts = nil
        let reflector = try ReflectorService(configuration: configuration) { line in lines.withLock { $0.append(line) }
        }
        try await reflector.start()
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: reflector)],
                logger: Logger(label: "test")
            )
        )
        let running = Task { try await group.run() }

        var sessionConfiguration = Session.Configuration.patient
        sessionConfiguration.joinsMesh = false
        let runner = Session(
            peer: try PeerID(displayName: "lifecycle-runner"),
            encryptionPreference: .none,
            configuration: sessionConfiguration
        )
        var events = runner.events.makeAsyncIterator()
        let peer = try await runner.connectPeer(host: "127.0.0.1", port: reflector.port!, timeout: .seconds(10))
        #expect(reflector.runnerCounts.served == 1)

        await group.triggerGracefulShutdown()
        try await running.value
        var reason: DisconnectReason?
        while let event = await events.next() {
            if case .peerStateChanged(peer, .notConnected, let why) = event {
                reason = why
                break
            }
        }
        #expect(reason == .peerDisconnected, "the reflector said goodbye: \(String(describing: reason))")
        let logged = lines.withLock { $0 }
        #expect(logged.contains("stopping: goodbye to 1 runners"), "\(logged)")
        #expect(logged.contains("stopped after serving 1 runners"), "\(logged)")
        // Each runner's task forgets it as its session ends, just after the goodbye.
        let deadline = ContinuousClock.now + .seconds(10)
        while reflector.runnerCounts.serving > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(reflector.runnerCounts.serving == 0)
    }
}
