import Foundation

@testable import PeerConnectivityBench

/// Result documents made in memory, with round numbers.
enum DocumentFixtures {
    static let host = HostInfo(
        hostname: "test-host",
        operatingSystem: "Debian GNU/Linux 12 (bookworm)",
        kernel: "Linux 6.1.0 x86_64",
        cpuCount: 2,
        cpuModel: "Test CPU",
        swiftVersion: "6.3",
        toolVersion: ToolInfo.version
    )

    /// A run whose round trips are `p50Microseconds` at the median, for each size.
    static func document(
        test: TestKind,
        name: String = "fixture",
        sizes: [Int] = [1, 1024, 1_048_576],
        p50Microseconds: UInt64 = 50,
        samples: Bool = false,
        startedAt: Date = Date(timeIntervalSince1970: 1_795_000_000.25)
    ) -> BenchmarkDocument {
        let results = sizes.map { size in
            var result = SizeResult(size: size, planned: 100)
            result.sent = 100
            result.echoed = 99
            result.lost = 1
            result.durationNanoseconds = 10_000_000
            result.roundTrip = LatencySummary(
                count: 99,
                minNanoseconds: p50Microseconds * 500,
                meanNanoseconds: Double(p50Microseconds) * 1_100,
                p50Nanoseconds: p50Microseconds * 1_000,
                p90Nanoseconds: p50Microseconds * 1_500,
                p99Nanoseconds: p50Microseconds * 2_000,
                p999Nanoseconds: p50Microseconds * 3_000,
                maxNanoseconds: p50Microseconds * 4_000,
                stddevNanoseconds: 1_234.5
            )
            result.throughput = ThroughputSummary(
                sentBytesPerSecond: Double(size) * 1e4,
                receivedBytesPerSecond: Double(size) * 0.99e4 * 50 / Double(p50Microseconds),
                messagesPerSecond: 9_900
            )
            if samples {
                result.samples = [
                    MessageSample(
                        sequence: 1,
                        size: size,
                        sentNanoseconds: 1_000_000,
                        receivedNanoseconds: 1_050_000,
                        outcome: .echoed
                    ),
                    MessageSample(
                        sequence: 2,
                        size: size,
                        sentNanoseconds: 2_000_000,
                        receivedNanoseconds: nil,
                        outcome: .lost
                    ),
                ]
            }
            return result
        }
        var connection = ConnectionReport(method: .dnsSD)
        connection.serviceType = "p2p-bench"
        connection.browseToFoundNanoseconds = 15_000_000
        return BenchmarkDocument(
            name: name,
            startedAt: startedAt,
            finishedAt: startedAt.addingTimeInterval(2),
            runner: host,
            reflector: host,
            connection: connection,
            plan: TestPlan(test: test, sizes: sizes, count: 100, recordsSamples: samples),
            results: results
        )
    }

    /// A stream run of two streams of 1 MiB, one of them corrupted.
    static func streamDocument() -> BenchmarkDocument {
        var first = StreamResult(index: 0, name: "bench-stream-0", bytes: 1 << 20)
        first.sentBytes = 1 << 20
        first.echoedBytes = 1 << 20
        first.outcome = .completed
        first.timeToFirstByteNanoseconds = 2_000_000
        first.writeNanoseconds = 10_000_000
        first.echoNanoseconds = 12_000_000
        first.sentBytesPerSecond = 104_857_600
        first.receivedBytesPerSecond = 87_381_333
        var second = first
        second.index = 1
        second.name = "bench-stream-1"
        second.outcome = .corrupted
        second.firstMismatchOffset = 70_000
        let streams = StreamTestResult(
            streams: [first, second],
            bytesPerStream: 1 << 20,
            firstStart: 1_000,
            lastWrite: 10_001_000,
            lastEcho: 20_001_000
        )
        return BenchmarkDocument(
            name: "fixture",
            startedAt: Date(timeIntervalSince1970: 1_795_000_100),
            finishedAt: Date(timeIntervalSince1970: 1_795_000_101),
            runner: host,
            reflector: host,
            connection: ConnectionReport(method: .direct),
            plan: TestPlan(test: .stream, sizes: [], count: 1, warmup: 0, streams: 2, bytes: 1 << 20),
            results: [],
            streams: streams
        )
    }

    /// A resource run of two 64 MiB transfers, both confirmed.
    static func resourceDocument() -> BenchmarkDocument {
        let transfers = (0..<2).map { index in
            var transfer = ResourceResult(index: index, name: "bench-resource-x-\(index)", bytes: 64 << 20)
            transfer.outcome = .completed
            transfer.transferNanoseconds = 500_000_000
            transfer.confirmationNanoseconds = 100_000_000
            transfer.bytesPerSecond = Double(64 << 20) / 0.5
            transfer.confirmedSize = 64 << 20
            transfer.confirmedSHA256 = String(repeating: "ab", count: 32)
            return transfer
        }
        return BenchmarkDocument(
            name: "fixture",
            startedAt: Date(timeIntervalSince1970: 1_795_000_200),
            finishedAt: Date(timeIntervalSince1970: 1_795_000_202),
            runner: host,
            reflector: host,
            connection: ConnectionReport(method: .direct),
            plan: TestPlan(test: .resource, sizes: [], count: 2, warmup: 0, bytes: 64 << 20),
            results: [],
            resources: ResourceTestResult(
                transfers: transfers,
                bytes: 64 << 20,
                sha256: String(repeating: "ab", count: 32),
                warmupSent: 0,
                warmupCompleted: 0
            )
        )
    }
}
