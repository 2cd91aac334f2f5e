import ArgumentParser
import BenchSupport
import Foundation
import PeerConnectivity

/// Measures the core issue's speed targets against a raw-TCP baseline in the same run.
@main
struct CoreBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "core-bench",
        abstract: "Round trip, throughput and message rate of PeerConnectivity against raw TCP on loopback."
    )

    @Option(help: "Measured round trips of 64-byte messages.")
    var roundTrips = 20_000

    @Option(help: "Unmeasured round trips before measuring.")
    var warmup = 2_000

    @Option(help: "1 MiB messages sent one way for throughput.")
    var bulk = 1_024

    @Option(help: "64-byte messages sent one way for the message rate.")
    var small = 500_000

    @Option(help: "Times to measure browser start to connected.")
    var connects = 5

    @Option(
        help:
            "Encryption of the PeerConnectivity sessions: none (the default here, to compare with plain raw TCP), optional or required. Scripts/bench-security.sh measures what encryption costs."
    )
    var encryption: EncryptionPreference = .none

    @Option(help: "Where to write the JSON result (default: results/core-bench-<UTC date>.json).")
    var output: String?

    @Flag(help: "Run both sessions with reconnection on (numbered messages, acknowledgements, a retransmit buffer).")
    var reconnection = false

    func validate() throws {
        for (name, value) in [("round-trips", roundTrips), ("bulk", bulk), ("small", small), ("connects", connects)] {
            guard (1...10_000_000).contains(value) else { throw ValidationError("--\(name) must be 1...10000000") }
        }
        guard warmup >= 0 else { throw ValidationError("--warmup must be >= 0") }
    }

    func run() async throws {
        let mebibyte = 1 << 20
        print("raw TCP baseline ...")
        let rawRoundTrips = try RawTCP.roundTrips(size: 64, count: roundTrips, warmup: warmup)
        let rawBulk = try RawTCP.oneWay(size: mebibyte, count: bulk)
        let rawSmall = try RawTCP.oneWay(size: 64, count: small)
        let raw = CoreBenchResult.Measurements(
            roundTrip64Bytes: .init(nanoseconds: rawRoundTrips),
            throughput1MiBBytesPerSecond: Double(bulk * mebibyte) / rawBulk,
            messages64BytesPerSecond: Double(small) / rawSmall
        )

        print("PeerConnectivity\(reconnection ? " (reconnection on)" : "") ...")
        var configuration = Session.Configuration.default
        if reconnection { configuration.reconnection = .default }
        let bench = try await PeerBench(
            serviceType: "pc-bench-\(UInt16.random(in: 0...UInt16.max) % 10000)",
            configuration: configuration,
            encryption: encryption
        )
        var connectTimes: [Double] = []
        var last: (milliseconds: Double, session: Session, peer: PeerID)?
        for _ in 0..<connects {
            if let last { await last.session.disconnect() }
            let attempt = try await bench.connectTime()
            connectTimes.append(attempt.milliseconds)
            last = attempt
        }
        let (_, session, peer) = last!
        let defaultRoundTrips = try await bench.roundTrips(
            session: session,
            peer: peer,
            size: 64,
            count: roundTrips,
            warmup: warmup
        )
        let (count, warmup) = (roundTrips, self.warmup)
        let ourRoundTrips = try await Task(executorPreference: session.taskExecutor) {
            try await bench.roundTrips(session: session, peer: peer, size: 64, count: count, warmup: warmup)
        }.value
        let ourBulk = try await bench.oneWay(session: session, peer: peer, size: mebibyte, count: bulk)
        let ourSmall = try await bench.oneWay(session: session, peer: peer, size: 64, count: small)
        await session.disconnect()
        await bench.stop()
        let ours = CoreBenchResult.Measurements(
            roundTrip64Bytes: .init(nanoseconds: ourRoundTrips),
            throughput1MiBBytesPerSecond: Double(bulk * mebibyte) / ourBulk,
            messages64BytesPerSecond: Double(small) / ourSmall
        )

        let ratios = CoreBenchResult.Ratios(
            roundTripP50: ours.roundTrip64Bytes.p50Microseconds / raw.roundTrip64Bytes.p50Microseconds,
            roundTripP50DefaultExecutor: Latency(nanoseconds: defaultRoundTrips).p50Microseconds
                / raw.roundTrip64Bytes.p50Microseconds,
            throughput1MiB: ours.throughput1MiBBytesPerSecond / raw.throughput1MiBBytesPerSecond,
            messages64Bytes: ours.messages64BytesPerSecond / raw.messages64BytesPerSecond
        )
        let medianConnect = connectTimes.sorted()[connectTimes.count / 2]
        let result = CoreBenchResult(
            date: Date(),
            hostname: ProcessInfo.processInfo.hostName,
            cpus: ProcessInfo.processInfo.activeProcessorCount,
            plan: .init(
                roundTrips: roundTrips,
                warmup: warmup,
                bulkMessages1MiB: bulk,
                smallMessages: small,
                connectRepetitions: connects,
                encryption: encryption.description
            ),
            rawTCP: raw,
            peerConnectivity: ours,
            roundTrip64BytesDefaultExecutor: .init(nanoseconds: defaultRoundTrips),
            connectMilliseconds: connectTimes,
            ratios: ratios,
            targetsMet: [
                "roundTripP50AtMost2xRaw": ratios.roundTripP50 <= 2,
                "throughput1MiBAtLeast70PercentOfRaw": ratios.throughput1MiB >= 0.7,
                "atLeast200000MessagesPerSecond": ours.messages64BytesPerSecond >= 200_000,
                "browserStartToConnectedUnder150ms": medianConnect < 150,
            ]
        )
        report(result)
        try write(result)
    }

    private func report(_ result: CoreBenchResult) {
        let table = ReportTable(widths: [34, 16, 18])
        let raw = result.rawTCP
        let ours = result.peerConnectivity
        table.row("", "raw TCP", "PeerConnectivity", "ratio")
        table.row(
            "64 B round trip p50 (us), on loop",
            String(format: "%.1f", raw.roundTrip64Bytes.p50Microseconds),
            String(format: "%.1f", ours.roundTrip64Bytes.p50Microseconds),
            String(format: "%.2fx", result.ratios.roundTripP50)
        )
        table.row(
            "  ... on the default executor",
            "",
            String(format: "%.1f", result.roundTrip64BytesDefaultExecutor.p50Microseconds),
            String(format: "%.2fx", result.ratios.roundTripP50DefaultExecutor)
        )
        table.row(
            "64 B round trip p99 (us)",
            String(format: "%.1f", raw.roundTrip64Bytes.p99Microseconds),
            String(format: "%.1f", ours.roundTrip64Bytes.p99Microseconds),
            ""
        )
        table.row(
            "1 MiB one way (MB/s)",
            String(format: "%.0f", raw.throughput1MiBBytesPerSecond / 1e6),
            String(format: "%.0f", ours.throughput1MiBBytesPerSecond / 1e6),
            String(format: "%.0f%%", result.ratios.throughput1MiB * 100)
        )
        table.row(
            "64 B one way (messages/s)",
            String(format: "%.0f", raw.messages64BytesPerSecond),
            String(format: "%.0f", ours.messages64BytesPerSecond),
            String(format: "%.0f%%", result.ratios.messages64Bytes * 100)
        )
        print(
            "browser start -> connected (ms):",
            result.connectMilliseconds.map { String(format: "%.1f", $0) }.joined(separator: ", ")
        )
        for (target, met) in result.targetsMet.sorted(by: { $0.key < $1.key }) {
            print(met ? "MET    " : "MISSED ", target)
        }
    }

    private func write(_ result: CoreBenchResult) throws {
        let path = try ResultFile.write(result, tool: "core-bench", date: result.date, output: output)
        print("wrote \(path)")
    }
}

extension EncryptionPreference: ExpressibleByArgument {}
