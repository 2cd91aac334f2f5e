import ArgumentParser
import BenchSupport
import Foundation
import PeerConnectivity
import Synchronization

/// A connection flood against an advertiser on loopback, and a real peer's echo round trip before and during it.
@main
struct FloodBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flood-bench",
        abstract: "A real peer's 64-byte echo round trip on loopback, unloaded and during a connection flood."
    )

    @Option(help: "Flood connections (each from its own 127.1.x.y address).")
    var connections = 1_000

    @Option(help: "Milliseconds between two flood connects.")
    var pacing = 1

    @Option(help: "Measured round trips without the flood.")
    var roundTrips = 2_000

    @Option(help: "Milliseconds between two measured round trips, with and without the flood.")
    var gap = 2

    @Option(help: "Where to write the JSON result (default: results/flood-bench-<UTC date>.json).")
    var output: String?

    func validate() throws {
        guard (1...20_000).contains(connections) else { throw ValidationError("--connections must be 1...20000") }
        guard (0...100).contains(pacing) else { throw ValidationError("--pacing must be 0...100 ms") }
        guard (10...1_000_000).contains(roundTrips) else { throw ValidationError("--round-trips must be 10...1000000") }
        guard (0...1_000).contains(gap) else { throw ValidationError("--gap must be 0...1000 ms") }
    }

    func run() async throws {
        var limits = Advertiser.Configuration.default
        let echo = try await LoopbackEcho { configuration in
            configuration.logger.logLevel = .critical
            limits = configuration
        }
        _ = try await echo.connect()
        _ = try await echo.roundTrips(count: 200)
        print("unloaded: \(roundTrips) round trips, one every \(gap) ms ...")
        let unloaded = Latency(nanoseconds: try await echo.roundTrips(count: roundTrips, gap: .milliseconds(gap)))
        let connectUnloaded = try await echo.connectNewcomer()
        let before = ProcessSample.current()
        ProcessSample.resetPeak()

        print("flood: \(connections) connections ...")
        let plan = ConnectionFlood.Plan(port: echo.port, count: connections, pacing: .milliseconds(pacing))
        let floodDone = Atomic<Bool>(false)
        let floodStart = ContinuousClock.now
        let flood = Task {
            let report = await ConnectionFlood.run(plan)
            floodDone.store(true, ordering: .releasing)
            return report
        }
        try await Task.sleep(for: .milliseconds(100))
        let connectDuringFlood = try await echo.connectNewcomer()
        // Paced as the unloaded ones, for as long as the flood lasts (it opens, then waits for its
        // connections to be closed), at most 10,000.
        var loaded: [UInt64] = []
        var startedAt: [Duration] = []
        while !floodDone.load(ordering: .acquiring), loaded.count < 10_000 {
            startedAt.append(floodStart.duration(to: .now))
            loaded += try await echo.roundTrips(count: 1, gap: .milliseconds(gap))
        }
        let report = await flood.value
        // The round trips that started while the flood was still opening connections (its hardest part).
        let opening = Duration.milliseconds(report.openingMilliseconds)
        let duringOpening = Latency(nanoseconds: zip(startedAt, loaded).filter { $0.0 < opening }.map(\.1))
        let peak = ProcessSample.current().peakResidentBytes
        await echo.stop()
        let after = ProcessSample.current()

        let duringFlood = Latency(nanoseconds: loaded)
        let result = FloodBenchResult(
            date: Date(),
            host: HostInfo.current(),
            connections: connections,
            behaviours: plan.behaviours.map(\.rawValue),
            limits: .init(
                handshakeTimeoutSeconds: limits.handshakeTimeout.milliseconds / 1000,
                maximumPendingHandshakes: limits.maximumPendingHandshakes,
                maximumPendingHandshakesPerAddress: limits.maximumPendingHandshakesPerAddress
            ),
            gapMilliseconds: gap,
            unloaded: unloaded,
            duringFlood: duringFlood,
            duringOpening: duringOpening,
            p50Ratio: duringFlood.p50Microseconds / max(unloaded.p50Microseconds, 1e-9),
            connectUnloadedMilliseconds: connectUnloaded.milliseconds,
            connectDuringFloodMilliseconds: connectDuringFlood.milliseconds,
            flood: report,
            memory: .init(
                beforeBytes: before.residentBytes,
                peakDuringFloodBytes: peak,
                afterBytes: after.residentBytes
            )
        )
        let path = try ResultFile.write(result, tool: "flood-bench", date: result.date, output: output)
        let mebibyte = Double(1 << 20)
        print(
            """
            echo p50 unloaded \(String(format: "%.1f", unloaded.p50Microseconds)) us, during the flood \
            \(String(format: "%.1f", duringFlood.p50Microseconds)) us (\(duringFlood.count) samples): \
            ratio \(String(format: "%.2f", result.p50Ratio)) (target <= 2); while it opened its connections \
            \(String(format: "%.1f", duringOpening.p50Microseconds)) us (\(duringOpening.count) samples)
            connect unloaded \(String(format: "%.1f", connectUnloaded.milliseconds)) ms, during the flood \
            \(String(format: "%.1f", connectDuringFlood.milliseconds)) ms
            flood: \(report.opened) opened, \(report.failed) failed, \(report.closedByServer) closed by the \
            advertiser, \(report.stillOpen) still open; lifetime p50 \
            \(String(format: "%.0f", report.lifetime.p50Microseconds / 1000)) ms, max \
            \(String(format: "%.0f", report.lifetime.maxMicroseconds / 1000)) ms
            RSS before \(String(format: "%.1f", Double(before.residentBytes) / mebibyte)) MiB, peak \
            \(String(format: "%.1f", Double(peak) / mebibyte)) MiB, after \
            \(String(format: "%.1f", Double(after.residentBytes) / mebibyte)) MiB
            wrote \(path)
            """
        )
        if report.stillOpen > 0 || result.p50Ratio > 2 {
            throw ExitCode(1)
        }
    }
}
