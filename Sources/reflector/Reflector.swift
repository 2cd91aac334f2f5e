import ArgumentParser
import Foundation
import PeerConnectivity
import PeerConnectivityBench

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
            SHA-256 of the file received (then deleted). With --raw-echo-port it \
            also runs a plain TCP echo server of length-prefixed frames, the baseline of `test-runner run --test raw-tcp`.
            """
    )

    @Option(help: "The reflector's display name (1-63 bytes; default: reflector-<host name>).")
    var name: String?

    @Option(help: "The DNS-SD service type, without _ and ._tcp.")
    var service = "p2p-bench"

    @Option(help: "The session listener's TCP port (0: ephemeral).")
    var port = 0

    @Option(help: "Also run a raw TCP echo server on this port (0: ephemeral) for the raw-tcp baseline.")
    var rawEchoPort: Int?

    @Option(help: "The IPv4 address to listen on (0.0.0.0: every interface).")
    var bind = "0.0.0.0"

    @Option(
        help: "Encryption of its connections: required, optional or none (default: \(EncryptionPreference.default))."
    )
    var encryption: EncryptionPreference?

    @Option(help: "Runners served at once; more are declined as busy.")
    var maxRunners = 32

    @Option(help: "Runners served at once from one source address; more from it are declined as busy.")
    var maxRunnersPerAddress = 8

    @Option(help: "Seconds a runner may send nothing but keepalives before it is dropped (0: never).")
    var idleTimeout = 60.0

    @Option(help: "Invitations taken per second from one address (after a burst of four times as many).")
    var invitationRate = 8.0

    @Option(help: "The largest resource taken from a runner, in bytes (default: as large as the free space).")
    var maxResourceBytes: UInt64?

    @Option(help: "Where received resources land until confirmed and deleted (default: a new temporary folder).")
    var resourceDirectory: String?

    @Flag(help: "Listen only, without registering a DNS-SD service (runners use --connect).")
    var noDnssd = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let rawEchoPort, !(0...65535).contains(rawEchoPort) {
            throw ValidationError("--raw-echo-port must be 0...65535")
        }
        if let rawEchoPort, rawEchoPort != 0, rawEchoPort == port {
            throw ValidationError("--raw-echo-port must differ from --port")
        }
        guard (1...1024).contains(maxRunners) else { throw ValidationError("--max-runners must be 1...1024") }
        guard (1...1024).contains(maxRunnersPerAddress) else {
            throw ValidationError("--max-runners-per-address must be 1...1024")
        }
        guard invitationRate > 0, invitationRate <= 100_000 else {
            throw ValidationError("--invitation-rate must be above 0 and at most 100000")
        }
        guard idleTimeout >= 0, idleTimeout <= 86_400 else {
            throw ValidationError("--idle-timeout must be 0...86400 s")
        }
        if let name, !(1...63).contains(name.utf8.count) {
            throw ValidationError("--name must be 1 to 63 bytes of UTF-8, is \(name.utf8.count)")
        }
    }

    func run() async throws {
        ProcessLimits.raiseOpenFileLimit()
        var configuration = ReflectorConfiguration()
        if let name { configuration.name = name }
        configuration.serviceType = service
        configuration.host = bind
        configuration.port = port
        configuration.rawEchoPort = rawEchoPort
        configuration.publishesService = !noDnssd
        configuration.maximumRunners = maxRunners
        configuration.maximumRunnersPerAddress = maxRunnersPerAddress
        configuration.invitationsPerSecondPerAddress = invitationRate
        configuration.maximumResourceSize = maxResourceBytes
        configuration.idleTimeout = idleTimeout > 0 ? .milliseconds(Int(idleTimeout * 1_000)) : nil
        configuration.encryption = encryption ?? .default
        configuration.resourceDirectory = resourceDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
        let reflector: ReflectorService
        do {
            reflector = try ReflectorService(configuration: configuration, log: Log.line)
            try await reflector.start()
        } catch {
            FileHandle.standardError.write(Data("reflector: \(error)\n".utf8))
            throw ExitCode(2)
        }
        Log.line(
            "ready name=\(configuration.name) service=_\(service)._tcp port=\(reflector.port ?? 0) "
                + "raw-echo-port=\(reflector.rawEchoPort.map(String.init) ?? "none") dns-sd=\(!noDnssd) "
                + "encryption=\(configuration.encryption)"
        )
        let signal = await ShutdownSignal.next()
        Log.line("stopping on \(signal): goodbye to \(reflector.runnerCount) runners")
        await reflector.stop()
        Log.line("stopped")
        // Sessions' event streams end only when the sessions are released; leave without waiting for them.
        Foundation.exit(0)
    }
}
