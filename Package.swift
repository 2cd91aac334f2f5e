// swift-tools-version:6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "PeerConnectivity",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PeerConnectivity", targets: ["PeerConnectivity"]),
        // For apps that run SwiftNIO themselves: the event loop group the peers' I/O runs on.
        .library(name: "PeerConnectivityNIO", targets: ["PeerConnectivityNIO"]),
        // For apps' tests: sessions joined in the process, with no network and no DNS-SD.
        .library(name: "PeerConnectivityTesting", targets: ["PeerConnectivityTesting"]),
        // The tools' engine (the reflector's echo service, the runner, the result schema), for the
        // benchmarks in Benchmarks/ and for apps that embed a reflector.
        .library(name: "PeerConnectivityBench", targets: ["PeerConnectivityBench"]),
        .executable(name: "peer-demo", targets: ["peer-demo"]),
        .executable(name: "peer-chat", targets: ["peer-chat"]),
        .executable(name: "reflector", targets: ["reflector"]),
        .executable(name: "test-runner", targets: ["test-runner"]),
        .executable(name: "peer-fuzz", targets: ["peer-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // `swift package generate-documentation`: the DocC catalog in Sources/PeerConnectivity (Scripts/docs.sh).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        // DNS-SD through Avahi's Bonjour compatibility layer (libavahi-compat-libdnssd-dev).
        .systemLibrary(
            name: "CDNSSD",
            providers: [.apt(["libavahi-compat-libdnssd-dev"])]
        ),
        // System calls Swift's Glibc module does not expose (renameat2), for the transport's Platform.
        .target(name: "CPlatformShims"),
        // Pure protocol core: wire format, frame codec, state machines. NIOCore only, no I/O.
        .target(
            name: "PeerConnectivityCore",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strictSettings
        ),
        // I/O layer: NIO bootstraps and channel handlers, and the DNS-SD wrapper.
        .target(
            name: "PeerConnectivityTransport",
            dependencies: [
                "CDNSSD",
                "CPlatformShims",
                "PeerConnectivityCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        // Public API: PeerID, Advertiser, Browser, Session.
        .target(
            name: "PeerConnectivity",
            dependencies: [
                "PeerConnectivityCore",
                "PeerConnectivityTransport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        // The settings that take SwiftNIO types, apart so that the public API above has none.
        .target(
            name: "PeerConnectivityNIO",
            dependencies: [
                "PeerConnectivity",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // Sessions joined in the process for apps' tests; and the helpers the project's own tests share.
        .target(
            name: "PeerConnectivityTesting",
            dependencies: [
                "PeerConnectivity",
                "PeerConnectivityTransport",
                "PeerConnectivityCore",
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "peer-demo",
            dependencies: [
                "PeerConnectivity",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // The example app: a terminal chat among the peers on the LAN.
        .executableTarget(
            name: "peer-chat",
            dependencies: [
                "PeerConnectivity",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/peer-chat",
            swiftSettings: strictSettings
        ),
        // Benchmark logic: test plans, payloads, accounting, statistics, result documents, reports,
        // the raw-TCP baseline, and the reflector and runner engines the two tools drive.
        .target(
            name: "PeerConnectivityBench",
            dependencies: [
                "PeerConnectivity",
                "PeerConnectivityTransport",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "reflector",
            dependencies: [
                "PeerConnectivity",
                "PeerConnectivityBench",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "test-runner",
            dependencies: [
                "PeerConnectivity",
                "PeerConnectivityBench",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // The fuzz target (frame parser and handshake state machine) and its corpus replay.
        .target(
            name: "PeerConnectivityFuzz",
            dependencies: [
                "PeerConnectivityCore",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/Fuzz/PeerConnectivityFuzz",
            swiftSettings: strictSettings
        ),
        // libFuzzer binary when built by Scripts/fuzz.sh (-D FUZZING -sanitize=fuzzer), else a corpus replayer.
        .executableTarget(
            name: "peer-fuzz",
            dependencies: ["PeerConnectivityFuzz"],
            path: "Tests/Fuzz/peer-fuzz",
            swiftSettings: strictSettings
        ),
        // Tests in memory: the state machines, the codecs, the handler through EmbeddedChannel, the
        // benchmark's arithmetic. No daemon, no socket; seconds.
        .testTarget(
            name: "PeerConnectivityUnitTests",
            dependencies: [
                "PeerConnectivityTesting",
                "PeerConnectivityCore",
                "PeerConnectivityTransport",
                "PeerConnectivity",
                "PeerConnectivityBench",
                "PeerConnectivityFuzz",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strictSettings
        ),
        // Tests with real parts: sockets on loopback, the real avahi-daemon, other processes, the tools,
        // and hosts in network namespaces.
        .testTarget(
            name: "PeerConnectivityIntegrationTests",
            dependencies: [
                "PeerConnectivityTesting",
                "PeerConnectivityBench",
                "PeerConnectivityNIO",
                "PeerConnectivity",
                "PeerConnectivityTransport",
                "PeerConnectivityCore",
                "PeerConnectivityFuzz",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strictSettings
        ),
        // The README's Swift samples, compiled; a test checks that they are the README's.
        .testTarget(
            name: "ReadmeTests",
            dependencies: ["PeerConnectivity"],
            swiftSettings: strictSettings
        ),
    ]
)
