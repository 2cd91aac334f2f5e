import ArgumentParser
import Foundation
import Logging
import Metrics
import PeerConnectivity
import PeerConnectivityBench
import PeerConnectivityCore
import Prometheus
import ServiceLifecycle
import UnixSignals

/// The benchmark's echo side: advertises, accepts every test-runner into a session of its own, echoes.
@main
struct Reflector: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reflector",
        abstract: "Advertise a PeerConnectivity echo peer for test-runner, until SIGINT or SIGTERM.",
        discussion: """
            Each test-runner that invites the reflector gets a session of its own, a hello message (this host's \
            description and the raw echo port), every data message echoed back in the mode it came in, every \
            stream echoed back on a stream of the same name, and every resource confirmed with the size and \
            SHA-256 of the file received (then deleted). It also runs a raw TCP echo server of length-prefixed \
            frames, the baseline of `test-runner run --test raw-tcp`: plain TCP for a runner with --encryption \
            none, TLS 1.3 otherwise, as the runner's own session. Ports to open in a firewall (defaults): TCP \
            7447 (sessions) and 7448 (raw echo), UDP 7449-7480 (unreliable messages, one port per runner), and \
            UDP 5353 for DNS-SD; on a host without avahi-daemon, run it with --no-dnssd (runners then use \
            --connect). A runner that asks for reconnection in its invitation (test-runner --interrupt-at) gets \
            it: its link, if it drops, is resumed with its resources; resuming dials a session's own listener, on \
            an ephemeral TCP port of either host. Other runners' sessions have none.
            """,
        version: ToolInfo(name: "reflector", commit: SourceRevision.commit).versionLine
    )

    @Option(help: "The reflector's display name (1-63 bytes; default: reflector-<host name>).")
    var name: String?

    @Option(help: "The DNS-SD service type, without _ and ._tcp.")
    var service = "p2p-bench"

    @Option(help: "The session listener's TCP port (0: ephemeral).")
    var port = ReflectorConfiguration.defaultPort

    @Option(help: "The raw TCP echo server's port for the raw-tcp baseline (0: ephemeral).")
    var rawEchoPort = ReflectorConfiguration.defaultRawEchoPort

    @Flag(help: "Run no raw TCP echo server.")
    var noRawEcho = false

    @Option(
        help: """
            The UDP ports the runners' sessions take for unreliable messages, FIRST-LAST, one per runner \
            (\"ephemeral\": any).
            """
    )
    var udpPorts =
        "\(ReflectorConfiguration.defaultDatagramPorts.lowerBound)-\(ReflectorConfiguration.defaultDatagramPorts.upperBound)"

    @Option(help: "The address to listen on (::: every interface, IPv6 and IPv4; 0.0.0.0: every IPv4 interface).")
    var bind = "::"

    @Option(
        help: "Encryption of its connections: required, optional or none (default: \(EncryptionPreference.default))."
    )
    var encryption: EncryptionPreference?

    @Option(
        name: [.customShort("w"), .customLong("stream-window")],
        help: """
            The flow-control window of the streams read from each runner, in bytes (default: \
            \(ReflectorConfiguration.aloneStreamWindow) for a runner served alone, \
            \(ReflectorConfiguration.sharedStreamWindow) for each that comes while others are served).
            """
    )
    var streamWindow: Int?

    @Option(help: "Runners served at once; more are declined as busy.")
    var maxRunners = 32

    @Option(
        help: """
            Runners served at once from one source (an IPv4 address; a global IPv6 address counts as its \
            --ipv6-prefix-length network); more from it are declined as busy. When all --max-runners places are \
            held, a runner from a source that holds none takes the place of the longest-held runner of the \
            source that holds the most. The default serves a responsiveness run whole (up to 16 load flows and \
            its probes, a session each).
            """
    )
    var maxRunnersPerAddress = TestPlan.maximumLoadFlows + 1

    @Option(
        help: """
            The leading bits of a global IPv6 address that name its source for the per-address limits (runner \
            places, invitation rate, pending handshakes); 128 counts each address on its own. IPv4, loopback and \
            link-local addresses always count each on its own.
            """
    )
    var ipv6PrefixLength = Advertiser.Configuration.default.ipv6PrefixLength

    @Option(help: "Seconds a runner may send nothing but keepalives before it is dropped (0: never).")
    var idleTimeout = 60.0

    @Option(
        help: """
            Seconds a runner's connection may bring nothing, keepalives included (one a second), before the runner \
            is dropped as gone.
            """
    )
    var livenessTimeout = Session.Configuration.default.livenessTimeout.seconds

    @Option(help: "Invitations taken per second from one address (after a burst of four times as many).")
    var invitationRate = 8.0

    @Option(help: "The largest resource taken from a runner, in bytes (default: as large as the free space).")
    var maxResourceBytes: UInt64?

    @Option(
        help: """
            The memory, in bytes, that all runners' large messages (over 1 MiB) may hold while they arrive; a \
            message that would go over it is refused as busy.
            """
    )
    var largeMessageBudget = ReflectorConfiguration().largeMessageBudget

    @Option(help: "Where received resources land until confirmed and deleted (default: a new temporary folder).")
    var resourceDirectory: String?

    @Flag(
        help: """
            Give no runner reconnection, even one that asks for it (test-runner --interrupt-at): a link that \
            drops is then not resumed, and the runner is gone at once.
            """
    )
    var noReconnection = false

    @Flag(help: "Listen only, without registering a DNS-SD service (runners use --connect).")
    var noDnssd = false

    @Option(
        help: """
            Serve the library's metrics for Prometheus at http://HOST:PORT/metrics on this TCP port (0: \
            ephemeral; default: no metrics).
            """
    )
    var metricsPort: Int?

    @Option(help: "The address the metrics are served on (0.0.0.0: every interface).")
    var metricsHost = "127.0.0.1"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard (0...65535).contains(rawEchoPort) else { throw ValidationError("--raw-echo-port must be 0...65535") }
        if !noRawEcho, rawEchoPort != 0, rawEchoPort == port {
            throw ValidationError("--raw-echo-port must differ from --port")
        }
        guard udpPorts == "ephemeral" || Self.portRange(udpPorts) != nil else {
            throw ValidationError("--udp-ports takes FIRST-LAST (1-65535, FIRST <= LAST), e.g. 7449-7480, or ephemeral")
        }
        if let streamWindow, !ReflectorConfiguration.streamWindowRange.contains(streamWindow) {
            throw ValidationError("--stream-window must be \(ReflectorConfiguration.streamWindowRange) bytes")
        }
        guard (1...1024).contains(maxRunners) else { throw ValidationError("--max-runners must be 1...1024") }
        guard (1...1024).contains(maxRunnersPerAddress) else {
            throw ValidationError("--max-runners-per-address must be 1...1024")
        }
        guard (1...128).contains(ipv6PrefixLength) else {
            throw ValidationError("--ipv6-prefix-length must be 1...128")
        }
        guard invitationRate > 0, invitationRate <= 100_000 else {
            throw ValidationError("--invitation-rate must be above 0 and at most 100000")
        }
        guard idleTimeout >= 0, idleTimeout <= 86_400 else {
            throw ValidationError("--idle-timeout must be 0...86400 s")
        }
        guard livenessTimeout >= 2, livenessTimeout <= 3_600 else {
            throw ValidationError("--liveness-timeout must be 2...3600 s (keepalives go once a second)")
        }
        guard largeMessageBudget >= 0 else { throw ValidationError("--large-message-budget must be 0 or more bytes") }
        if let metricsPort, !(0...65535).contains(metricsPort) {
            throw ValidationError("--metrics-port must be 0...65535")
        }
        if let name, !(1...63).contains(name.utf8.count) {
            throw ValidationError("--name must be 1 to 63 bytes of UTF-8, is \(name.utf8.count)")
        }
    }

    func run() async throws {
        ProcessLimits.raiseOpenFileLimit()
        // Before the first connection: the library makes its metric objects from the factory bootstrapped then.
        var exporter: MetricsExporter?
        do {
            if let metricsPort { exporter = try await Self.startMetrics(host: metricsHost, port: metricsPort) }
        } catch {
            try? FileHandle.standardError.write(
                contentsOf:
                    Data("reflector: metrics on \(metricsHost):\(metricsPort ?? 0): \(error)\n".utf8)
            )
            throw ExitCode(2)
        }
        var configuration = ReflectorConfiguration()
        if let name { configuration.name = name }
        configuration.serviceType = service
        configuration.host = bind
        configuration.port = port
        configuration.rawEchoPort = noRawEcho ? nil : rawEchoPort
        configuration.datagramPorts = Self.portRange(udpPorts)
        configuration.publishesService = !noDnssd
        configuration.maximumRunners = maxRunners
        configuration.maximumRunnersPerAddress = maxRunnersPerAddress
        configuration.ipv6PrefixLength = ipv6PrefixLength
        configuration.invitationsPerSecondPerAddress = invitationRate
        configuration.maximumResourceSize = maxResourceBytes
        configuration.largeMessageBudget = largeMessageBudget
        configuration.streamWindow = streamWindow
        configuration.idleTimeout = idleTimeout > 0 ? .milliseconds(Int(idleTimeout * 1_000)) : nil
        configuration.livenessTimeout = .milliseconds(Int(livenessTimeout * 1_000))
        configuration.encryption = encryption ?? .default
        configuration.reconnection = noReconnection ? nil : ReflectorConfiguration.defaultReconnection
        configuration.resourceDirectory = resourceDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
        let reflector: ReflectorService
        do {
            reflector = try ReflectorService(configuration: configuration, log: Log.line)
            try await reflector.start()
        } catch {
            try? FileHandle.standardError.write(contentsOf: Data("reflector: \(error)\n".utf8))
            throw ExitCode(2)
        }
        // SIGTERM and SIGINT are caught from here on: one that comes just after "ready" still shuts the
        // reflector down gracefully, rather than killing it before the service group has started.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        Log.line(
            "ready name=\(LogSafe.escaped(configuration.name)) service=_\(service)._tcp bind=\(bind) "
                + "port=\(reflector.port ?? 0) raw-echo-port=\(reflector.rawEchoPort.map(String.init) ?? "none") "
                + "udp-ports=\(configuration.datagramPorts.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "ephemeral") "
                + "dns-sd=\(!noDnssd) encryption=\(configuration.encryption) reconnection=\(!noReconnection) "
                + "version=\(ToolInfo.version) commit=\(SourceRevision.commit ?? "unknown")"
                + (exporter.map { " metrics-port=\(String($0.port))" } ?? "")
        )
        // A service of swift-service-lifecycle: SIGTERM or SIGINT shuts it down gracefully (runners told,
        // transfers ended, its partial files removed, a summary logged).
        var logger = Logger(label: "reflector")
        logger.logLevel = .warning
        var services = [ServiceGroupConfiguration.ServiceConfiguration(service: reflector)]
        if let exporter { services.append(.init(service: exporter)) }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await _ in signals {
                    await group.triggerGracefulShutdown()
                    return
                }
            }
            try await group.run()
            tasks.cancelAll()
        }
        // Sessions' event streams end only when the sessions are released; leave without waiting for them.
        Foundation.exit(0)
    }

    /// Bootstraps swift-metrics with a Prometheus registry and serves it over HTTP.
    static func startMetrics(host: String, port: Int) async throws -> MetricsExporter {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return try await MetricsExporter.bind(host: host, port: port, registry: registry)
    }

    /// "7449-7480" as a range of ports.
    static func portRange(_ text: String) -> ClosedRange<Int>? {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 2, (1...65535).contains(parts[0]), (parts[0]...65535).contains(parts[1]) else {
            return nil
        }
        return parts[0]...parts[1]
    }
}
