// swift-tools-version: 6.1
import PackageDescription

// Benchmarks of PeerConnectivity with ordo-one's package-benchmark: a package of their own, so that the
// library's users never resolve the benchmark tooling. Run them with Scripts/bench-micro.sh.
let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "PeerConnectivity", path: ".."),
        // The malloc interposer gives the malloc counts (mallocCountTotal, memoryLeakedBytes) on Swift 6.3.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
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
        // Resources and streams against raw TCP, with a receiver process of its own
        // (Scripts/bench-transfers.sh). The test-runner's resource test is to take its place.
        .executableTarget(
            name: "transfer-bench",
            dependencies: [
                .product(name: "PeerConnectivity", package: "PeerConnectivity"),
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/transfer-bench",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "TransferBenchTests",
            dependencies: [
                "transfer-bench",
                .product(name: "PeerConnectivityBench", package: "PeerConnectivity"),
            ],
            path: "Tests/TransferBenchTests"
        ),
    ]
)
