import ArgumentParser
import Foundation
import PeerConnectivity
import PeerConnectivityBench

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Measures, against raw TCP in the same run: a resource's and parallel streams' throughput, echo
/// round trips with and without a resource transferring, and each side's peak memory.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Measure resources, streams, fairness and memory against raw TCP (the default subcommand)."
    )

    /// Raw-TCP runs of each size; the median counts.
    static let rawRepetitions = 3

    @Option(help: "Size of the resource sent (twice: alone, then with echoes), in MiB.")
    var resourceMebibytes = 1024

    @Option(help: "Bytes over all the streams together, in MiB.")
    var streamMebibytes = 1024

    @Option(help: "Streams written at once.")
    var streams = 8

    @Option(
        help:
            "64-byte echoes measured with nothing else on the connection (during the resource they go on until it ends)."
    )
    var echoes = 20_000

    /// The most echoes measured during the resource, a bound should it never end.
    static let maximumEchoesDuringResource = 1_000_000

    @Option(help: "Seconds after which the run stops, whatever it is doing.")
    var timeLimit = 600

    @Option(
        name: .customLong("encryption"),
        help:
            "Encryption of both sessions: none (the default here, to compare with plain raw TCP), optional or required."
    )
    var encryptionOption: EncryptionPreference?
    /// The preference in force: none unless asked.
    var encryption: EncryptionPreference { encryptionOption ?? .none }

    @Option(help: "Where to write the JSON result (default: results/runs/transfer-bench-<UTC date>.json).")
    var output: String?

    func validate() throws {
        guard (1...65_536).contains(resourceMebibytes) else {
            throw ValidationError("--resource-mebibytes must be 1...65536")
        }
        guard (1...65_536).contains(streamMebibytes) else {
            throw ValidationError("--stream-mebibytes must be 1...65536")
        }
        guard (1...64).contains(streams) else { throw ValidationError("--streams must be 1...64") }
        guard (1...1_000_000).contains(echoes) else { throw ValidationError("--echoes must be 1...1000000") }
        guard (10...3600).contains(timeLimit) else { throw ValidationError("--time-limit must be 10...3600 seconds") }
    }

    func run() async throws {
        let mebibyte = 1 << 20
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        print("writing a \(resourceMebibytes) MiB file to \(scratch.url.path) ...")
        let file = try scratch.makeFile(mebibytes: resourceMebibytes)
        let child = try await ChildProcess(arguments: [
            "serve", "--resource-directory", scratch.received.path, "--time-limit", "\(timeLimit)",
            "--encryption", encryption.description,
        ])
        let limit = timeLimit
        let watchdog = Task {
            try await Task.sleep(for: .seconds(limit))
            print("time limit of \(limit) s reached")
            kill(child.pid, SIGKILL)
            scratch.remove()
            Foundation.exit(3)
        }
        defer { watchdog.cancel() }
        let measurements: TransferBenchResult.Measurements
        do {
            measurements = try await measure(file: file, port: child.port)
        } catch {
            await child.stop()
            throw error
        }
        await child.stop()

        print("raw TCP ...")
        let raw = TransferBenchResult.RawTCP(
            resource: try Self.raw(mebibytes: resourceMebibytes),
            streams: try Self.raw(mebibytes: streamMebibytes)
        )
        let result = Self.result(
            plan: .init(
                resourceBytes: resourceMebibytes * mebibyte,
                streamBytes: streamMebibytes * mebibyte,
                streams: streams,
                streamWriteBytes: BenchClient.streamWriteBytes,
                echoes: echoes,
                echoBytes: BenchClient.echoBytes,
                rawRepetitions: Self.rawRepetitions,
                encryption: encryption.description
            ),
            raw: raw,
            ours: measurements
        )
        result.report()
        let path = try ResultFile.write(result, tool: "transfer-bench", date: result.date, output: output)
        print("wrote \(path)")
    }

    /// Everything through PeerConnectivity, over one session connected to the child.
    private func measure(file: URL, port: Int) async throws -> TransferBenchResult.Measurements {
        let session = Session(peer: try PeerID(displayName: "transfer-bench-sender"), encryptionPreference: encryption)
        let inbox = Inbox(session: session)
        let peer = try await session.connectPeer(host: "127.0.0.1", port: port, timeout: .seconds(10))
        let client = BenchClient(session: session, peer: peer, inbox: inbox)
        let bytes = resourceMebibytes << 20

        print("echoes, nothing else on the connection ...")
        _ = try await client.echoes(count: min(echoes, 1_000))  // warm-up
        let idle = try await client.echoes(count: echoes)
        print("resource of \(resourceMebibytes) MiB ...")
        let (resource, _) = try await client.sendResource(file, bytes: bytes, echoes: 0)
        print("resource of \(resourceMebibytes) MiB with echoes ...")
        let (resourceWithEchoes, busy) = try await client.sendResource(
            file,
            bytes: bytes,
            echoes: Self.maximumEchoesDuringResource
        )
        print("\(streams) streams, \(streamMebibytes) MiB in all, on the sessions' executors ...")
        let streamRun = try await client.streams(streams, totalBytes: streamMebibytes << 20, on: .session)
        print("\(streams) streams, \(streamMebibytes) MiB in all, on the default executor ...")
        let defaultRun = try await client.streams(streams, totalBytes: streamMebibytes << 20, on: .defaultExecutor)
        await session.disconnect()
        return .init(
            resource: resource,
            resourceWithEchoes: resourceWithEchoes,
            streams: streamRun,
            streamsDefaultExecutor: defaultRun,
            echoIdle: LatencySummary(nanoseconds: idle),
            echoDuringResource: LatencySummary(nanoseconds: busy)
        )
    }

    /// Raw TCP moving `mebibytes` MiB one way, 1 MiB per write, ``rawRepetitions`` times.
    private static func raw(mebibytes: Int) throws -> TransferBenchResult.RawRun {
        var seconds: [Double] = []
        var cpuSeconds: [Double] = []
        for _ in 0..<rawRepetitions {
            let before = ProcessSample.current()
            seconds.append(try RawTCP.oneWay(size: 1 << 20, count: mebibytes))
            let after = ProcessSample.current()
            cpuSeconds.append(
                after.userCPUSeconds + after.systemCPUSeconds - before.userCPUSeconds - before.systemCPUSeconds
            )
        }
        let median = seconds.sorted()[seconds.count / 2]
        return .init(
            bytes: mebibytes << 20,
            seconds: seconds,
            cpuSeconds: cpuSeconds,
            bytesPerSecond: Double(mebibytes << 20) / median
        )
    }

    private static func result(
        plan: TransferBenchResult.Plan,
        raw: TransferBenchResult.RawTCP,
        ours: TransferBenchResult.Measurements
    ) -> TransferBenchResult {
        let ratios = TransferBenchResult.Ratios(
            resource: ours.resource.bytesPerSecond / raw.resource.bytesPerSecond,
            resourceWithEchoes: ours.resourceWithEchoes.bytesPerSecond / raw.resource.bytesPerSecond,
            streams: ours.streams.bytesPerSecond / raw.streams.bytesPerSecond,
            streamsDefaultExecutor: ours.streamsDefaultExecutor.map { $0.bytesPerSecond / raw.streams.bytesPerSecond }
        )
        let peakDeltas = [ours.resource, ours.resourceWithEchoes].flatMap {
            [$0.sender.peakResidentDeltaBytes, $0.receiver.peakResidentDeltaBytes]
        }
        let busy = ours.echoDuringResource
        return TransferBenchResult(
            date: Date(),
            host: HostInfo.current(),
            plan: plan,
            peakResetSupported: ProcessSample.resetPeak(),
            rawTCP: raw,
            peerConnectivity: ours,
            ratios: ratios,
            targetsMet: [
                "resourceAtLeast50PercentOfRaw": ratios.resource >= 0.5,
                "streamsAtLeast70PercentOfRaw": ratios.streams >= 0.7,
                "echoP99Under10msDuringResource": busy.count > 0 && (Double(busy.p99Nanoseconds) / 1e3) < 10_000,
                "resourcePeakRSSDeltaUnder64MiBOnBothSides": peakDeltas.allSatisfy { $0 < 64 << 20 },
            ]
        )
    }
}
