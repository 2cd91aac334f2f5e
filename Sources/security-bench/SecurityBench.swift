import ArgumentParser
import BenchSupport
import Foundation
import PeerConnectivity

/// Measures the security issue's speed targets on loopback in one run: invite to connected with
/// encryption required, and bulk throughput encrypted against unencrypted.
@main
struct SecurityBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "security-bench",
        abstract: "Handshake time with encryption required, and encrypted against plain throughput, on loopback."
    )

    @Option(help: "Connections to time (invite to connected) per preference.")
    var connects = 50

    @Option(help: "1 MiB messages sent one way per throughput round.")
    var bulk = 512

    @Option(help: "Throughput rounds, alternating plain and encrypted.")
    var rounds = 3

    @Option(help: "Where to write the JSON result (default: results/security-bench-<UTC date>.json).")
    var output: String?

    func validate() throws {
        for (name, value) in [("connects", connects), ("bulk", bulk), ("rounds", rounds)] {
            guard (1...100_000).contains(value) else { throw ValidationError("--\(name) must be 1...100000") }
        }
    }

    func run() async throws {
        print("handshakes (\(connects) each) ...")
        let required = try await handshakes(.required)
        let plain = try await handshakes(.none)
        print("throughput (\(rounds) rounds of \(bulk) MiB) ...")
        var plainRates: [Double] = []
        var encryptedRates: [Double] = []
        for _ in 0..<rounds {
            plainRates.append(try await throughput(.none))
            encryptedRates.append(try await throughput(.required))
        }
        let requiredP50 = percentile(required, 0.5)
        let requiredP99 = percentile(required, 0.99)
        let ratio = percentile(encryptedRates, 0.5) / percentile(plainRates, 0.5)
        let result = SecurityBenchResult(
            date: Date(),
            hostname: ProcessInfo.processInfo.hostName,
            cpus: ProcessInfo.processInfo.activeProcessorCount,
            plan: .init(connects: connects, bulkMessages1MiB: bulk, rounds: rounds),
            handshake: .init(
                requiredMilliseconds: required,
                requiredP50: requiredP50,
                requiredP99: requiredP99,
                plainP50: percentile(plain, 0.5)
            ),
            throughput: .init(plainBytesPerSecond: plainRates, encryptedBytesPerSecond: encryptedRates, ratio: ratio),
            targetsMet: [
                "handshakeRequiredP50Under20ms": requiredP50 < 20,
                "encryptedThroughputAtLeast50PercentOfPlain": ratio >= 0.5,
            ]
        )
        print(
            String(
                format: "invite -> connected, required: p50 %.2f ms, p99 %.2f ms (plain p50 %.2f ms)",
                requiredP50,
                requiredP99,
                result.handshake.plainP50
            )
        )
        print(
            String(
                format: "1 MiB one way: plain %.0f MB/s, encrypted %.0f MB/s, ratio %.0f%%",
                percentile(plainRates, 0.5) / 1e6,
                percentile(encryptedRates, 0.5) / 1e6,
                ratio * 100
            )
        )
        for (target, met) in result.targetsMet.sorted(by: { $0.key < $1.key }) {
            print(met ? "MET    " : "MISSED ", target)
        }
        let path = try ResultFile.write(result, tool: "security-bench", date: result.date, output: output)
        print("wrote \(path)")
    }

    /// An advertiser on 127.0.0.1 (no DNS-SD) whose session accepts everything and counts messages.
    private final class Host: Sendable {
        let advertiser: Advertiser
        let session: Session
        let tasks: Task<Void, Never>

        init(_ preference: EncryptionPreference) async throws {
            var configuration = Advertiser.Configuration.default
            configuration.host = "127.0.0.1"
            configuration.publishesService = false
            // Every timed connection comes from 127.0.0.1, back to back: above the per-address invitation
            // rate limit, which is for floods, not for this measured client.
            configuration.invitationBurstPerAddress = 10_000
            configuration.invitationsPerSecondPerAddress = 10_000
            let identity = try SecurityIdentity(displayName: "security-bench-host")
            advertiser = try Advertiser(
                peer: identity.peer,
                serviceType: "pc-sbench",
                securityIdentity: identity,
                encryptionPreference: preference,
                configuration: configuration
            )
            session = Session(identity: identity, encryptionPreference: preference)
            try await advertiser.start()
            let (advertiser, session) = (self.advertiser, self.session)
            tasks = Task {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await invitation in advertiser.invitations {
                            try? await invitation.accept(into: session)
                        }
                    }
                    group.addTask {
                        // Answers a one-byte message with the count of larger ones received before it.
                        var counted = 0
                        for await event in session.events {
                            guard case .dataReceived(let data, let from, _) = event else { continue }
                            if data.count == 1 {
                                try? await session.send(Data("\(counted)".utf8), toPeers: [from])
                                counted = 0
                            } else {
                                counted += 1
                            }
                        }
                    }
                }
            }
        }

        func stop() async {
            await advertiser.stop()
            await session.disconnect()
            tasks.cancel()
        }
    }

    /// Invite to connected, in milliseconds, `connects` times, a new client session each time.
    private func handshakes(_ preference: EncryptionPreference) async throws -> [Double] {
        let host = try await Host(preference)
        defer { Task { await host.stop() } }
        let port = host.advertiser.port!
        var samples: [Double] = []
        for index in 0..<connects {
            let identity = try SecurityIdentity(displayName: "client-\(index)")
            let client = Session(identity: identity, encryptionPreference: preference)
            let start = ContinuousClock.now
            try await client.connectPeer(host: "127.0.0.1", port: port, timeout: .seconds(10))
            samples.append(start.duration(to: .now).milliseconds)
            if preference == .required, client.securityInfo(for: host.session.peer)?.isEncrypted != true {
                throw BenchError("the connection was not encrypted")
            }
            await client.disconnect()
        }
        return samples
    }

    /// Bytes per second of `bulk` 1 MiB messages one way, until the host confirms them all.
    private func throughput(_ preference: EncryptionPreference) async throws -> Double {
        let host = try await Host(preference)
        defer { Task { await host.stop() } }
        let client = Session(peer: try PeerID(displayName: "security-bench-client"), encryptionPreference: preference)
        let peer = try await client.connectPeer(host: "127.0.0.1", port: host.advertiser.port!, timeout: .seconds(10))
        guard (client.securityInfo(for: peer)?.isEncrypted ?? false) == (preference != .none) else {
            throw BenchError("the connection's encryption is not what was asked")
        }
        var events = client.events.makeAsyncIterator()
        let message = Data(repeating: 0x42, count: 1 << 20)
        let start = ContinuousClock.now
        for _ in 0..<bulk {
            try await client.send(message, toPeers: [peer])
        }
        try await client.send(Data([0]), toPeers: [peer])
        var reply: Data?
        while reply == nil, let event = await events.next() {
            if case .dataReceived(let data, _, _) = event { reply = data }
        }
        let seconds = Double(start.duration(to: .now).milliseconds) / 1000
        guard let reply, Int(String(decoding: reply, as: UTF8.self)) == bulk else {
            throw BenchError("the host did not confirm \(bulk) messages")
        }
        await client.disconnect()
        return Double(bulk << 20) / seconds
    }

    private func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction + 0.5))]
    }
}
