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
        // What both benchmark targets share: the in-process reflector, fixtures, tolerances, plain and encrypted.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PeerConnectivity", package: "PeerConnectivity"),
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
            ],
            path: "Benchmarks/BenchmarkSupport"
        ),
        // Round trips (and raw TCP's, the baseline), one-way throughput and message rate, connect time:
        // plain and encrypted.
        .executableTarget(
            name: "SessionBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PeerConnectivity", package: "PeerConnectivity"),
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/SessionBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Sessions that come and go against the tools' reflector, started in-process.
        .executableTarget(
            name: "ChurnBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PeerConnectivity", package: "PeerConnectivity"),
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
            ],
            path: "Benchmarks/ChurnBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
