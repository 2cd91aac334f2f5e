// swift-tools-version: 6.1
import PackageDescription

// Benchmarks of PeerConnectivity with ordo-one's package-benchmark: a package of their own, so that the
// library's users never resolve the benchmark tooling. Run them with Scripts/bench-micro.sh.
let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "PeerConnectivity", path: ".."),
        // The event loop's own round trip, beside the session's (the library's version of it).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // The malloc interposer gives the malloc counts (mallocCountTotal, memoryLeakedBytes) on Swift 6.3.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The pairs every round trip runs over (the in-process reflector and a client session, the event loop's
        // echo, raw TCP's), with no benchmark tooling, so that a plain executable can run them too.
        .target(
            name: "BenchmarkPairs",
            dependencies: [
                .product(name: "PeerConnectivity", package: "PeerConnectivity"),
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/BenchmarkPairs"
        ),
        // What both benchmark targets share: fixtures and tolerances.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                "BenchmarkPairs",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/BenchmarkSupport"
        ),
        // Round trips (and raw TCP's, the baseline), one-way throughput and message rate, connect time:
        // plain and encrypted.
        .executableTarget(
            name: "SessionBenchmarks",
            dependencies: [
                "BenchmarkPairs",
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PeerConnectivity", package: "PeerConnectivity"),
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
            ],
            path: "Benchmarks/SessionBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Sessions that come and go against the tools' reflector, started in-process.
        .executableTarget(
            name: "ChurnBenchmarks",
            dependencies: [
                "BenchmarkPairs",
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PeerConnectivity", package: "PeerConnectivity"),
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
            ],
            path: "Benchmarks/ChurnBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The round trips again from a plain main, for valgrind: instructions a round trip
        // (Scripts/count-instructions.sh), where this machine has no hardware counters. Not under Benchmarks/:
        // package-benchmark takes every executable there for a benchmark.
        .executableTarget(
            name: "RoundTripCounts",
            dependencies: [
                "BenchmarkPairs",
                .product(name: "PeerConnectivity", package: "PeerConnectivity"),
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
            ],
            path: "Counting/RoundTripCounts"
        ),
    ]
)
