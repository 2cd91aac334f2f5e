import ArgumentParser
import Foundation
import PeerConnectivity

/// One member of a mesh: advertises, browses, invites every peer it finds (again, when one has
/// dropped), prints membership changes and the messages it receives, and broadcasts now and then.
/// `Scripts/lab-mesh.sh` runs one per lab host.
struct MeshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh",
        abstract: "Join a mesh of peers found by DNS-SD; print members and messages; broadcast every few seconds."
    )

    @Option(help: "The service type (without _ and ._tcp).")
    var service = "pc-mesh"

    @Option(help: "This peer's display name.")
    var name = ProcessInfo.processInfo.hostName

    @Option(help: "The session's peer limit.")
    var maxPeers = 16

    @Option(help: "Seconds between broadcasts to every connected peer (0: never).")
    var sayEvery = 1.0

    @Option(help: "Seconds to run before leaving by itself.")
    var duration = 120.0

    @Option(
        help: "Invite only the peer of this name, and let the session's mesh connect the rest (default: invite all)."
    )
    var invite: String?

    @Option(help: "Liveness timeout in seconds (keepalive every fifth of it).")
    var liveness = 5.0

    @Option(
        help: ArgumentHelp(
            "Turn reconnection on, with this window in seconds (0: off).",
            discussion: "Messages then go to reconnecting peers too, and each send is logged (sent to=NAME n=K)."
        )
    )
    var reconnect = 0.0

    func validate() throws {
        guard (1...64).contains(maxPeers) else { throw ValidationError("--max-peers must be 1...64") }
        guard sayEvery >= 0, duration > 0, duration <= 3600 else {
            throw ValidationError("--say-every must be >= 0 and --duration 0...3600 s")
        }
        guard liveness >= 0.5 else { throw ValidationError("--liveness must be at least 0.5 s") }
        guard reconnect >= 0, reconnect <= 600 else { throw ValidationError("--reconnect must be 0...600 s") }
    }

    func run() async throws {
        let me = try PeerID(displayName: name)
        var configuration = Session.Configuration.default
        configuration.maximumPeers = maxPeers
        configuration.livenessTimeout = .milliseconds(Int(liveness * 1000))
        configuration.keepaliveInterval = .milliseconds(Int(liveness * 200))
        if reconnect > 0 {
            var reconnection = Session.Reconnection.default
            reconnection.window = .milliseconds(Int(reconnect * 1000))
            configuration.reconnection = reconnection
        }
        let session = Session(peer: me, configuration: configuration)
        let advertiser = try Advertiser(peer: me, serviceType: service)
        try await advertiser.start()
        let browser = try Browser(peer: me, serviceType: service)
        try browser.start()
        Output.line("ready name=\(name) id=\(me.id.uuidString.lowercased())")
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await invitation in advertiser.invitations {
                    try? await invitation.accept(into: session)
                }
            }
            group.addTask { await Self.printEvents(of: session) }
            group.addTask { [invite] in await Self.inviteFoundPeers(browser, into: session, only: invite) }
            if sayEvery > 0 {
                group.addTask { await self.broadcast(on: session, browser: browser) }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
            }
            group.addTask { await signals.next() }
            await group.next()
            Output.line("leaving")
            group.cancelAll()
        }
        browser.stop()
        await advertiser.stop()
        await session.disconnect()
    }

    private static func printEvents(of session: Session) async {
        for await event in session.events {
            switch event {
            case .peerStateChanged(let peer, let state, let reason):
                let members = session.connectedPeers.count
                Output.line(
                    "\(timestamp()) state peer=\(peer.displayName) \(state) members=\(members)"
                        + (state == .connected
                            ? session.endpoints(of: peer).map { " via=\($0.remoteAddress)" } ?? "" : "")
                        + (reason?.unconfirmedMessages.map { " unconfirmed=\($0)" } ?? "")
                        + (reason.map { " reason=\($0)" } ?? "")
                )
            case .dataReceived(let data, let peer, _):
                Output.line(
                    "\(timestamp()) recv from=\(peer.displayName) text=\(String(decoding: data, as: UTF8.self))"
                )
            default:
                break
            }
        }
    }

    /// Every second, invites the peers found that the session does not hold (the tie-break makes
    /// two peers inviting each other end with one connection); only the one named `only`, if given.
    private static func inviteFoundPeers(_ browser: Browser, into session: Session, only: String?) async {
        while !Task.isCancelled {
            for peer in browser.foundPeers.keys
            where session.state(of: peer) == .notConnected && (only == nil || peer.displayName == only) {
                Task { try? await browser.invitePeer(peer, to: session, timeout: .seconds(5)) }
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    private func broadcast(on session: Session, browser: Browser) async {
        var count = 0
        var numbers: [PeerID: Int] = [:]
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(Int(sayEvery * 1000)))
            count += 1
            guard reconnect > 0 else {
                // One send per peer, so one peer leaving does not stop the message to the others.
                for peer in session.connectedPeers {
                    try? await session.send(Data("\(name) #\(count)".utf8), toPeers: [peer])
                }
                continue
            }
            // With reconnection, a numbered stream per peer, to reconnecting peers too; every send logged.
            for peer in browser.foundPeers.keys where session.state(of: peer) != .notConnected {
                let number = numbers[peer, default: 0] + 1
                do {
                    try await session.send(Data("\(name) #\(number)".utf8), toPeers: [peer])
                    numbers[peer] = number
                    Output.line("\(Self.timestamp()) sent to=\(peer.displayName) n=\(number)")
                } catch {
                    Output.line("\(Self.timestamp()) sendfail to=\(peer.displayName) n=\(number) error=\(error)")
                }
            }
        }
    }

    private static func timestamp() -> String {
        String(format: "%.3f", Date().timeIntervalSince1970)
    }
}
