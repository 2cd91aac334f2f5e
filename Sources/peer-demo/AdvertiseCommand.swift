import ArgumentParser
import Dispatch
import Foundation
import PeerConnectivity

/// Advertises a peer, answers invitations and echoes every message back to its sender.
struct AdvertiseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advertise",
        abstract: "Advertise a peer and echo every message back to its sender, until SIGINT or SIGTERM."
    )

    @Option(help: "The service type (without _ and ._tcp).")
    var service = "pc-demo"

    @Option(help: "This peer's display name.")
    var name = "echo"

    @Option(help: "What to do with invitations.")
    var answer = InvitationAnswer.accept

    @Option(help: "The TCP port to listen on (0: ephemeral).")
    var port = 0

    @Flag(help: "Listen only, without registering a DNS-SD service (peers connect directly).")
    var noDnssd = false

    @Option(help: "Disconnect after echoing this many messages (0: never).")
    var disconnectAfter = 0

    @Option(help: "Where received resources are put (default: the session's, under the temporary directory).")
    var resourceDirectory: String?

    @Option(
        help: """
            Seconds a new connection has to say HELLO and send its invitation, TLS handshake included (default: \
            the library's, 5).
            """
    )
    var handshakeTimeout: Double?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let handshakeTimeout, !(handshakeTimeout > 0 && handshakeTimeout <= 3_600) {
            throw ValidationError("--handshake-timeout must be more than 0 and at most 3600 seconds")
        }
        guard disconnectAfter >= 0 else { throw ValidationError("--disconnect-after must be >= 0") }
    }

    func run() async throws {
        let me = try PeerID(displayName: name)
        var sessionConfiguration = Session.Configuration.default
        if let resourceDirectory {
            sessionConfiguration.resourceDirectory = URL(fileURLWithPath: resourceDirectory, isDirectory: true)
        }
        let session = Session(peer: me, configuration: sessionConfiguration)
        var configuration = Advertiser.Configuration.default
        configuration.port = port
        configuration.publishesService = !noDnssd
        if let handshakeTimeout { configuration.handshakeTimeout = .milliseconds(Int(handshakeTimeout * 1_000)) }
        let advertiser = try Advertiser(
            peer: me,
            discoveryInfo: ["role": "echo"],
            serviceType: service,
            configuration: configuration
        )
        do {
            try await advertiser.start()
        } catch {
            try? FileHandle.standardError.write(contentsOf: Data("peer-demo: \(error)\n".utf8))
            throw ExitCode(2)
        }
        Output.line("ready peer=\(me.id.uuidString.lowercased()) port=\(advertiser.port ?? 0)")

        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await invitation in advertiser.invitations {
                    Output.line(
                        "invitation from=\(invitation.peer.displayName) context=\(String(decoding: invitation.context, as: UTF8.self))"
                    )
                    switch answer {
                    case .accept:
                        do { try await invitation.accept(into: session) } catch {
                            Output.line("accept failed: \(error)")
                        }
                    case .decline:
                        invitation.decline()
                    case .ignore:
                        break
                    }
                }
            }
            group.addTask {
                var echoed = 0
                for await event in session.events {
                    switch event {
                    case .peerStateChanged(let peer, let state, let reason):
                        Output.line("state peer=\(peer.displayName) \(state)\(reason.map { " reason=\($0)" } ?? "")")
                    case .dataReceived(let data, let peer, let mode):
                        do {
                            try await session.send(data, toPeers: [peer], mode: mode)
                        } catch {
                            Output.line("echo failed: \(error)")
                        }
                        echoed += 1
                        if echoed == disconnectAfter {
                            Output.line("disconnecting after \(echoed) messages")
                            await session.disconnect()
                        }
                    case .streamReceived(let incoming):
                        Task { await Self.echo(incoming, in: session) }
                    case .startedReceivingResource(let name, let peer, _):
                        Output.line("resource started name=\(name) peer=\(peer.displayName)")
                    case .finishedReceivingResource(let name, _, let result):
                        switch result {
                        case .success(let url): Output.line("resource done name=\(name) file=\(url.path)")
                        case .failure(let error): Output.line("resource failed name=\(name): \(error)")
                        }
                    }
                }
            }
            await signals.next()
            Output.line("stopping")
            await advertiser.stop()
            await session.disconnect()
            group.cancelAll()
        }
        Output.line("stopped")
        // The session's event stream only ends when the session is released; leave without waiting for it.
        Foundation.exit(0)
    }

    /// Writes every chunk of `incoming` back to its peer on a stream of the same name.
    private static func echo(_ incoming: IncomingStream, in session: Session) async {
        Output.line("stream name=\(incoming.name) peer=\(incoming.peer.displayName)")
        do {
            let outgoing = try session.startStream(withName: incoming.name, toPeer: incoming.peer)
            for try await chunk in incoming {
                try await outgoing.write(chunk)
            }
            try outgoing.finish()
            Output.line("stream done name=\(incoming.name)")
        } catch {
            Output.line("stream failed name=\(incoming.name): \(error)")
        }
    }
}
