import BenchmarkSupport
import PeerConnectivity
import PeerConnectivityBench

/// The tools' reflector (`ReflectorService`), started in this process on 127.0.0.1 without DNS-SD
/// (no avahi-daemon needed), as churn-bench started the `reflector` executable.
final class InProcessReflector {
    /// The echo service.
    let service: ReflectorService
    /// Its session port.
    let port: Int
    /// The encryption it and its runners use.
    let encryption: EncryptionPreference
    /// Sessions run against it so far, to name the next runner.
    var sessions = 0

    /// Starts a reflector.
    ///
    /// - Parameter encryption: its advertiser's and sessions' preference.
    /// - Throws: when it cannot listen.
    init(encryption: EncryptionPreference) async throws {
        var configuration = ReflectorConfiguration(
            name: "churn-reflector",
            serviceType: "pc-micro",
            host: "127.0.0.1",
            port: 0,
            rawEchoPort: nil,
            publishesService: false
        )
        configuration.encryption = encryption
        // Runners come back to back from 127.0.0.1; none is dropped for idling, and UDP ports are ephemeral.
        configuration.invitationsPerSecondPerAddress = 100_000
        configuration.idleTimeout = nil
        configuration.datagramPorts = nil
        service = try ReflectorService(configuration: configuration) { _ in }
        try await service.start()
        guard let port = service.port else { throw BenchmarkFailure("the reflector has no port") }
        self.port = port
        self.encryption = encryption
    }

    /// Runs `count` sessions against it, then waits until it has let every runner go.
    ///
    /// - Parameter count: sessions to run.
    /// - Throws: ``BenchmarkFailure`` when a session fails or the reflector keeps a runner.
    func churn(_ count: Int) async throws {
        try await ChurnClient.run(count: count, port: port, encryption: encryption, first: sessions)
        sessions += count
        let deadline = ContinuousClock.now + .seconds(5)
        while service.runnerCount > 0 {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkFailure("the reflector still serves \(service.runnerCount) runners")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Stops it.
    func stop() async {
        await service.stop()
    }
}
