import ArgumentParser
import Foundation
import PeerConnectivity
import PeerConnectivityBench

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The receiving peer, run by `transfer-bench run` as a child process so that its memory is its own.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "The receiving peer (started by `run`): listens on 127.0.0.1 without DNS-SD, echoes messages, "
            + "reads streams and receives resources, deleting them. Prints `ready port=N`; exits when "
            + "standard input closes."
    )

    @Option(help: "Where received resources are put (and deleted from once they have arrived).")
    var resourceDirectory: String

    @Option(
        name: .customLong("encryption"),
        help: "Encryption of the session and advertiser: none (the default here), optional or required."
    )
    var encryptionOption: EncryptionPreference?
    /// The preference in force: none unless asked.
    var encryption: EncryptionPreference { encryptionOption ?? .none }

    @Option(help: "Seconds after which the process exits whatever it is doing.")
    var timeLimit = 600

    @ArgumentParser.Flag(help: "Keep received resources where they are and send no report for them (for `folder`).")
    var keepResources = false

    func validate() throws {
        guard (1...3600).contains(timeLimit) else { throw ValidationError("--time-limit must be 1...3600 seconds") }
        guard !resourceDirectory.isEmpty else { throw ValidationError("--resource-directory must not be empty") }
    }

    func run() async throws {
        let me = try PeerID(displayName: "transfer-bench-receiver")
        var sessionConfiguration = Session.Configuration.default
        sessionConfiguration.resourceDirectory = URL(fileURLWithPath: resourceDirectory, isDirectory: true)
        let session = Session(peer: me, encryptionPreference: encryption, configuration: sessionConfiguration)
        var configuration = Advertiser.Configuration.default
        configuration.host = "127.0.0.1"
        configuration.publishesService = false
        let advertiser = try Advertiser(
            peer: me,
            serviceType: "pc-tbench",
            encryptionPreference: encryption,
            configuration: configuration
        )
        try await advertiser.start()
        Self.exitWhenStandardInputCloses()
        let limit = timeLimit
        Task {
            try await Task.sleep(for: .seconds(limit))
            FileHandle.standardError.write(Data("transfer-bench serve: time limit of \(limit) s reached\n".utf8))
            Foundation.exit(3)
        }
        // Unbuffered: the parent waits for this line.
        FileHandle.standardOutput.write(Data("ready port=\(advertiser.port ?? 0)\n".utf8))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await invitation in advertiser.invitations {
                    do { try await invitation.accept(into: session) } catch { Reflector.complain("accept: \(error)") }
                }
            }
            group.addTask { await Reflector(session: session, keepsResources: keepResources).run() }
        }
    }

    /// The parent closes the pipe when it is done (or dies): then this process ends.
    private static func exitWhenStandardInputCloses() {
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(STDIN_FILENO, &byte, 1)
                if count == 0 || (count < 0 && errno != EINTR) { Foundation.exit(0) }
            }
        }
        thread.start()
    }
}
