import Benchmark
import BenchmarkPairs
import BenchmarkSupport
import Foundation
import PeerConnectivity
import Synchronization

/// The 64-byte echo round trip while 16 MiB messages cross the same connection one after another
/// (`EchoBesideLarge64B.during16MiB`), against the same echo with nothing else in flight
/// (`EchoBesideLarge64B.idle`), in the same run: what a large message costs the messages sent after it.
///
/// One iteration is one round trip, so the percentiles of the wall clock are those of the round trips.
/// Two sessions in one process over loopback (no reflector: it echoes every message in turn, so a 16 MiB
/// echo would hold up the next 64-byte one there, and that is the reflector's order, not the link's).
func registerLargeMessageBenchmarks() {
    let metrics: [BenchmarkMetric] = [.wallClock, .throughput]
    for (name, busy) in [("idle", false), ("during16MiB", true)] {
        let configuration = Benchmark.Configuration(
            metrics: metrics,
            warmupIterations: 50,
            scalingFactor: .one,
            maxDuration: .seconds(10),
            maxIterations: 5000
        )
        fixtureBenchmark(
            "EchoBesideLarge64B.\(name)",
            configuration: configuration,
            make: { try await EchoBesideLargeMessages(busy: busy) },
            stop: { await $0.stop() }
        ) { benchmark, fixture in
            benchmark.startMeasurement()
            try await fixture.roundTrip()
            benchmark.stopMeasurement()
        }
    }
}

/// A host session that echoes messages of at most 64 bytes and drops larger ones, and a client connected
/// to it directly; when busy, the client sends 16 MiB messages to the host, one after another, until stopped.
final class EchoBesideLargeMessages {
    private let advertiser: Advertiser
    private let host: Session
    private let client: Session
    private let peer: PeerID
    private let tasks: [Task<Void, Never>]
    private var events: Session.Events.Iterator
    private let message = Data(repeating: 0x42, count: 64)
    /// Large messages the client has sent whole (confirmed by the host).
    private let sent = LargeMessageCount()

    init(busy: Bool) async throws {
        var advertising = Advertiser.Configuration.default
        advertising.host = "127.0.0.1"
        advertising.publishesService = false
        advertiser = try Advertiser(
            peer: try PeerID(displayName: "bench-large-host"),
            serviceType: "bench",
            encryptionPreference: .none,
            configuration: advertising
        )
        try await advertiser.start()
        var configuration = Session.Configuration.default
        configuration.joinsMesh = false
        let host = Session(peer: advertiser.peer, encryptionPreference: .none, configuration: configuration)
        self.host = host
        let advertiser = self.advertiser
        let acceptor = Task {
            for await invitation in advertiser.invitations { try? await invitation.accept(into: host) }
        }
        let echo = Task(executorPreference: host.taskExecutor) {
            for await case .dataReceived(let data, let peer, _) in host.events where data.count <= 64 {
                try? await host.send(data, toPeers: [peer])
            }
        }
        client = Session(
            peer: try PeerID(displayName: "bench-large-client"),
            encryptionPreference: .none,
            configuration: configuration
        )
        events = client.events.makeAsyncIterator()
        peer = try await client.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: .seconds(10))
        var tasks = [acceptor, echo]
        if busy {
            let (client, peer, sent) = (client, peer, sent)
            tasks.append(
                Task {
                    let large = Data(repeating: 0x17, count: 16 << 20)
                    while !Task.isCancelled, (try? await client.send(large, toPeers: [peer])) != nil {
                        sent.add()
                    }
                }
            )
        }
        self.tasks = tasks
    }

    /// Sends the 64-byte message and waits for its echo.
    ///
    /// - Throws: ``BenchmarkFailure`` when the echo differs or the host leaves.
    func roundTrip() async throws {
        try await client.send(message, toPeers: [peer])
        while let event = await events.next() {
            switch event {
            case .dataReceived(let data, _, _):
                guard data == message else { throw BenchmarkFailure("an echo differs") }
                return
            case .peerStateChanged(_, .notConnected, let reason):
                throw BenchmarkFailure("disconnected: \(String(describing: reason))")
            case .peerStateChanged, .streamReceived, .startedReceivingResource, .finishedReceivingResource:
                continue
            }
        }
        throw BenchmarkFailure("the client session ended")
    }

    /// Stops the large messages, then disconnects and stops the advertiser. Prints how many 16 MiB
    /// messages crossed while measuring, so a run shows that they were in flight.
    func stop() async {
        for task in tasks { task.cancel() }
        await client.disconnect()
        await host.disconnect()
        await advertiser.stop()
        if sent.value > 0 { print("EchoBesideLarge64B: \(sent.value) messages of 16 MiB crossed") }
    }
}

/// How many large messages crossed: counted by the sending task, read by `stop`.
final class LargeMessageCount: Sendable {
    private let count = Atomic<Int>(0)

    func add() { count.add(1, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }
}
