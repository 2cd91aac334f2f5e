import PeerConnectivity
import PeerConnectivityBench

/// The benchmarks' one echo peer: the tools' reflector (`ReflectorService`), started in this process on
/// 127.0.0.1 without DNS-SD (no avahi-daemon needed). It sends each session its hello, echoes each data
/// message, and counts messages one way between a `MessageFlow` start and end, answering with a
/// `StreamReceipt`, as it does for a test-runner.
package final class InProcessReflector {
    /// The echo service.
    package let service: ReflectorService
    /// Its session port.
    package let port: Int
    /// The encryption it and its runners use.
    package let encryption: EncryptionPreference
    /// Sessions run against it so far, to name the next runner.
    package var sessions = 0

    /// Starts a reflector.
    ///
    /// - Parameters:
    ///   - encryption: its advertiser's and sessions' preference.
    ///   - reconnection: its sessions number, acknowledge and keep reliable messages (the client's must too).
    /// - Throws: when it cannot listen.
    package init(encryption: EncryptionPreference, reconnection: Bool = false) async throws {
        var configuration = ReflectorConfiguration(
            name: "bench-reflector",
            serviceType: "pc-micro",
            host: "127.0.0.1",
            port: 0,
            rawEchoPort: nil,
            publishesService: false
        )
        configuration.encryption = encryption
        if reconnection { configuration.reconnection = .default }
        // Runners come back to back from 127.0.0.1; none is dropped for idling or refused as one too
        // many from the address, and UDP ports are ephemeral.
        configuration.invitationsPerSecondPerAddress = 100_000
        configuration.maximumRunnersPerAddress = 1_000
        configuration.idleTimeout = nil
        configuration.datagramPorts = nil
        service = try ReflectorService(configuration: configuration) { _ in }
        try await service.start()
        guard let port = service.port else { throw BenchmarkFailure("the reflector has no port") }
        self.port = port
        self.encryption = encryption
    }

    /// Waits until the reflector serves no runner (the last client's departure has been seen).
    ///
    /// - Parameter timeout: how long to wait at most.
    /// - Throws: ``BenchmarkFailure`` when runners are still served after `timeout`.
    package func waitUntilIdle(timeout: Duration = .seconds(5)) async throws {
        let deadline = ContinuousClock.now + timeout
        while service.runnerCount > 0 {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkFailure("the reflector still serves \(service.runnerCount) runners")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Stops the reflector.
    package func stop() async {
        await service.stop()
    }
}
