import ArgumentParser
import BenchSupport
import Foundation
import PeerConnectivity
import PeerConnectivityBench

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

    @Option(
        help:
            "1 MiB messages sent one way for throughput, over all rounds (1 GiB a round by default: shorter rounds move with the machine)."
    )
    var bulk = 5_120

    @Option(help: "64-byte messages sent one way for the message rate.")
    var small = 500_000

    @Option(help: "Rounds to split the measurements into, each raw TCP then PeerConnectivity; ratios are medians.")
    var rounds = 5

    @Option(help: "Times to measure browser start to connected.")
    var connects = 5

    @Option(
        name: .customLong("encryption"),
        help:
            "Encryption of the PeerConnectivity sessions: none (the default here, to compare with plain raw TCP), optional or required. Scripts/bench-security.sh measures what encryption costs."
    )
    var encryptionOption: EncryptionPreference?
    /// The preference in force: none unless asked.
    var encryption: EncryptionPreference { encryptionOption ?? .none }

    @Option(help: "Where to write the JSON result (default: results/core-bench-<UTC date>.json).")
    var output: String?

    @Flag(help: "Run both sessions with reconnection on (numbered messages, acknowledgements, a retransmit buffer).")
    var reconnection = false

    func validate() throws {
        for (name, value) in [
            ("round-trips", roundTrips), ("bulk", bulk), ("small", small), ("connects", connects), ("rounds", rounds),
        ] {
            guard (1...10_000_000).contains(value) else { throw ValidationError("--\(name) must be 1...10000000") }
        }
        guard warmup >= 0 else { throw ValidationError("--warmup must be >= 0") }
        guard rounds <= min(roundTrips, bulk, small) else {
            throw ValidationError("--rounds must be at most each of --round-trips, --bulk and --small")
        }
    }

    func run() async throws {
        print("PeerConnectivity\(reconnection ? " (reconnection on)" : "") and raw TCP, \(rounds) rounds ...")
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
        var measured: [CoreBenchResult.Round] = []
        var samples = (raw: [UInt64](), ours: [UInt64](), oursDefault: [UInt64]())
        var seconds = (rawBulk: 0.0, oursBulk: 0.0, defaultBulk: 0.0, rawSmall: 0.0, oursSmall: 0.0)
        for round in 0..<rounds {
            let round = try await measureRound(round, bench: bench, session: session, peer: peer)
            measured.append(round.result)
            samples.raw += round.samples.raw
            samples.ours += round.samples.ours
            samples.oursDefault += round.samples.oursDefault
            seconds.rawBulk += round.seconds.rawBulk
            seconds.oursBulk += round.seconds.oursBulk
            seconds.defaultBulk += round.seconds.defaultBulk
            seconds.rawSmall += round.seconds.rawSmall
            seconds.oursSmall += round.seconds.oursSmall
            print(String(format: "  round %d: %@", measured.count, describe(round.result.ratios)))
        }
        await session.disconnect()
        await bench.stop()
        let (bulkCount, smallCount) = (perRound(bulk) * rounds, perRound(small) * rounds)
        func meanCPU(_ measures: (CoreBenchResult.Round) -> CoreBenchResult.Measurements) -> Double {
            measured.reduce(0) { $0 + (measures($1).cpuSecondsPerGiB1MiB ?? 0) } / Double(measured.count)
        }
        let raw = CoreBenchResult.Measurements(
            roundTrip64Bytes: .init(nanoseconds: samples.raw),
            throughput1MiBBytesPerSecond: Double(bulkCount << 20) / seconds.rawBulk,
            messages64BytesPerSecond: Double(smallCount) / seconds.rawSmall,
            cpuSecondsPerGiB1MiB: meanCPU(\.rawTCP)
        )
        let ours = CoreBenchResult.Measurements(
            roundTrip64Bytes: .init(nanoseconds: samples.ours),
            throughput1MiBBytesPerSecond: Double(bulkCount << 20) / seconds.oursBulk,
            messages64BytesPerSecond: Double(smallCount) / seconds.oursSmall,
            cpuSecondsPerGiB1MiB: meanCPU(\.peerConnectivity)
        )
        func median(_ ratio: (CoreBenchResult.Ratios) -> Double) -> Double {
            let sorted = measured.map { ratio($0.ratios) }.sorted()
            return sorted.count % 2 == 1
                ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let ratios = CoreBenchResult.Ratios(
            roundTripP50: median(\.roundTripP50),
            roundTripP50DefaultExecutor: median(\.roundTripP50DefaultExecutor),
            throughput1MiB: median(\.throughput1MiB),
            throughput1MiBDefaultExecutor: median { $0.throughput1MiBDefaultExecutor ?? 0 },
            messages64Bytes: median(\.messages64Bytes)
        )
        let medianConnect = connectTimes.sorted()[connectTimes.count / 2]
        let result = CoreBenchResult(
            date: Date(),
            hostname: ProcessInfo.processInfo.hostName,
            cpus: ProcessInfo.processInfo.activeProcessorCount,
            plan: .init(
                rounds: rounds,
                roundTrips: roundTrips,
                warmup: warmup,
                bulkMessages1MiB: bulk,
                smallMessages: small,
                connectRepetitions: connects,
                encryption: encryption.description
            ),
            rawTCP: raw,
            peerConnectivity: ours,
            roundTrip64BytesDefaultExecutor: .init(nanoseconds: samples.oursDefault),
            defaultExecutor1MiB: .init(
                bytesPerSecond: Double(bulkCount << 20) / seconds.defaultBulk,
                cpuSecondsPerGiB: measured.reduce(0) { $0 + ($1.defaultExecutor1MiB?.cpuSecondsPerGiB ?? 0) }
                    / Double(measured.count)
            ),
            connectMilliseconds: connectTimes,
            ratios: ratios,
            rounds: measured,
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

    /// What one round measured, with its samples for the totals.
    private struct MeasuredRound {
        var result: CoreBenchResult.Round
        var samples: (raw: [UInt64], ours: [UInt64], oursDefault: [UInt64])
        var seconds: (rawBulk: Double, oursBulk: Double, defaultBulk: Double, rawSmall: Double, oursSmall: Double)
    }

    /// A round's share of `total` messages or round trips.
    private func perRound(_ total: Int) -> Int { max(1, total / rounds) }

    /// Each measure raw, then through PeerConnectivity, back to back. The first round warms up with
    /// `--warmup` round trips, later ones with a tenth of them.
    private func measureRound(_ index: Int, bench: PeerBench, session: Session, peer: PeerID) async throws
        -> MeasuredRound
    {
        let mebibyte = 1 << 20
        let (count, warmup) = (perRound(roundTrips), index == 0 ? self.warmup : self.warmup / 10)
        let (bulkCount, smallCount) = (perRound(bulk), perRound(small))
        let rawRoundTrips = try RawTCP.roundTrips(size: 64, count: count, warmup: warmup)
        let ourRoundTrips = try await Task(executorPreference: session.taskExecutor) {
            try await bench.roundTrips(session: session, peer: peer, size: 64, count: count, warmup: warmup)
        }.value
        let defaultRoundTrips = try await bench.roundTrips(
            session: session,
            peer: peer,
            size: 64,
            count: count,
            warmup: warmup
        )
        let rawStart = ProcessSample.current()
        let rawBulk = try RawTCP.oneWay(size: mebibyte, count: bulkCount)
        let ourStart = ProcessSample.current()
        let ourBulk = try await Task(executorPreference: session.taskExecutor) {
            try await bench.oneWay(session: session, peer: peer, size: mebibyte, count: bulkCount)
        }.value
        let ourEnd = ProcessSample.current()
        let defaultBulk = try await bench.oneWay(session: session, peer: peer, size: mebibyte, count: bulkCount)
        let defaultEnd = ProcessSample.current()
        func cpuPerGiB(_ from: ProcessSample, _ to: ProcessSample) -> Double {
            let usage = PhaseUsage(from: from, to: to)
            return (usage.userCPUSeconds + usage.systemCPUSeconds) * Double(1 << 30) / Double(bulkCount * mebibyte)
        }
        let rawSmall = try RawTCP.oneWay(size: 64, count: smallCount)
        let ourSmall = try await bench.oneWay(session: session, peer: peer, size: 64, count: smallCount)
        let raw = CoreBenchResult.Measurements(
            roundTrip64Bytes: .init(nanoseconds: rawRoundTrips),
            throughput1MiBBytesPerSecond: Double(bulkCount * mebibyte) / rawBulk,
            messages64BytesPerSecond: Double(smallCount) / rawSmall,
            cpuSecondsPerGiB1MiB: cpuPerGiB(rawStart, ourStart)
        )
        let ours = CoreBenchResult.Measurements(
            roundTrip64Bytes: .init(nanoseconds: ourRoundTrips),
            throughput1MiBBytesPerSecond: Double(bulkCount * mebibyte) / ourBulk,
            messages64BytesPerSecond: Double(smallCount) / ourSmall,
            cpuSecondsPerGiB1MiB: cpuPerGiB(ourStart, ourEnd)
        )
        let oursDefault = LatencySummary(nanoseconds: defaultRoundTrips)
        let ratios = CoreBenchResult.Ratios(
            roundTripP50: (Double(ours.roundTrip64Bytes.p50Nanoseconds) / 1e3)
                / (Double(raw.roundTrip64Bytes.p50Nanoseconds) / 1e3),
            roundTripP50DefaultExecutor: (Double(oursDefault.p50Nanoseconds) / 1e3)
                / (Double(raw.roundTrip64Bytes.p50Nanoseconds) / 1e3),
            throughput1MiB: ours.throughput1MiBBytesPerSecond / raw.throughput1MiBBytesPerSecond,
            throughput1MiBDefaultExecutor: Double(bulkCount * mebibyte) / defaultBulk
                / raw.throughput1MiBBytesPerSecond,
            messages64Bytes: ours.messages64BytesPerSecond / raw.messages64BytesPerSecond
        )
        return MeasuredRound(
            result: .init(
                rawTCP: raw,
                peerConnectivity: ours,
                roundTrip64BytesDefaultExecutor: oursDefault,
                defaultExecutor1MiB: .init(
                    bytesPerSecond: Double(bulkCount * mebibyte) / defaultBulk,
                    cpuSecondsPerGiB: cpuPerGiB(ourEnd, defaultEnd)
                ),
                ratios: ratios
            ),
            samples: (rawRoundTrips, ourRoundTrips, defaultRoundTrips),
            seconds: (rawBulk, ourBulk, defaultBulk, rawSmall, ourSmall)
        )
    }

    private func describe(_ ratios: CoreBenchResult.Ratios) -> String {
        String(
            format: "round trip %.2fx (default executor %.2fx), 1 MiB %.0f%% (default executor %.0f%%), "
                + "64 B messages %.0f%%",
            ratios.roundTripP50,
            ratios.roundTripP50DefaultExecutor,
            ratios.throughput1MiB * 100,
            (ratios.throughput1MiBDefaultExecutor ?? 0) * 100,
            ratios.messages64Bytes * 100
        )
    }

    private func report(_ result: CoreBenchResult) {
        let table = ReportTable(widths: [34, 16, 18])
        let raw = result.rawTCP
        let ours = result.peerConnectivity
        table.row("", "raw TCP", "PeerConnectivity", "ratio")
        table.row(
            "64 B round trip p50 (us), on loop",
            String(format: "%.1f", (Double(raw.roundTrip64Bytes.p50Nanoseconds) / 1e3)),
            String(format: "%.1f", (Double(ours.roundTrip64Bytes.p50Nanoseconds) / 1e3)),
            String(format: "%.2fx", result.ratios.roundTripP50)
        )
        table.row(
            "  ... on the default executor",
            "",
            String(format: "%.1f", (Double(result.roundTrip64BytesDefaultExecutor.p50Nanoseconds) / 1e3)),
            String(format: "%.2fx", result.ratios.roundTripP50DefaultExecutor)
        )
        table.row(
            "64 B round trip p99 (us)",
            String(format: "%.1f", (Double(raw.roundTrip64Bytes.p99Nanoseconds) / 1e3)),
            String(format: "%.1f", (Double(ours.roundTrip64Bytes.p99Nanoseconds) / 1e3)),
            ""
        )
        table.row(
            "1 MiB one way (MB/s), on loop",
            String(format: "%.0f", raw.throughput1MiBBytesPerSecond / 1e6),
            String(format: "%.0f", ours.throughput1MiBBytesPerSecond / 1e6),
            String(format: "%.0f%%", result.ratios.throughput1MiB * 100)
        )
        table.row(
            "  CPU s per GiB (both ends)",
            String(format: "%.2f", raw.cpuSecondsPerGiB1MiB ?? 0),
            String(format: "%.2f", ours.cpuSecondsPerGiB1MiB ?? 0),
            String(format: "%.2fx", (ours.cpuSecondsPerGiB1MiB ?? 0) / (raw.cpuSecondsPerGiB1MiB ?? 1))
        )
        if let defaultBulk = result.defaultExecutor1MiB {
            table.row(
                "  ... on the default executor",
                "",
                String(format: "%.0f", defaultBulk.bytesPerSecond / 1e6),
                String(format: "%.0f%%", (result.ratios.throughput1MiBDefaultExecutor ?? 0) * 100)
            )
            table.row(
                "  CPU s per GiB (both ends)",
                "",
                String(format: "%.2f", defaultBulk.cpuSecondsPerGiB),
                String(format: "%.2fx", defaultBulk.cpuSecondsPerGiB / (raw.cpuSecondsPerGiB1MiB ?? 1))
            )
        }
        table.row(
            "64 B one way (messages/s)",
            String(format: "%.0f", raw.messages64BytesPerSecond),
            String(format: "%.0f", ours.messages64BytesPerSecond),
            String(format: "%.0f%%", result.ratios.messages64Bytes * 100)
        )
        print("(values: all rounds together; ratios: the median of the \(result.rounds?.count ?? 1) rounds' ratios)")
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
