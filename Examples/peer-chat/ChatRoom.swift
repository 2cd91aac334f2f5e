import Foundation
import PeerConnectivity

/// One person in the chat. It advertises and browses the service, invites the peers it finds, accepts
/// their invitations, and prints what happens; the lines it reads are messages or commands.
///
/// "Mesh" by inviting: each peer invites those whose id sorts after its own, so every pair connects
/// once and everyone is connected to everyone. There is no reconnection: a peer that drops stays out
/// until it is found again.
@MainActor
final class ChatRoom {
    private let me: PeerID
    private let session: Session
    private let advertiser: Advertiser
    private let browser: Browser
    /// Who is here, who was found, what is on its way: for /peers.
    private let model: SessionModel

    init(name: String, service: String, downloads: URL?) throws {
        me = try PeerID(displayName: name)
        var configuration = Session.Configuration.default
        if let downloads { configuration.resourceDirectory = downloads }
        session = Session(peer: me, configuration: configuration)
        advertiser = try Advertiser(peer: me, serviceType: service)
        browser = try Browser(peer: me, serviceType: service)
        model = SessionModel(session: session, browser: browser)
    }

    /// Chats until `/quit` or the end of the input.
    func run(input: AsyncStream<String>) async throws {
        try await advertiser.start()
        try browser.start()
        say("* \(me.displayName) is here. Type to talk; /send PATH, /peers, /quit.")
        await withDiscardingTaskGroup { group in
            group.addTask { await self.model.run() }
            group.addTask { await self.acceptInvitations() }
            group.addTask { await self.inviteFoundPeers() }
            group.addTask { await self.reportEvents() }
            group.addTask { await self.printMessages() }
            for await line in input {
                guard await handle(line) else { break }
            }
            await advertiser.stop()
            browser.stop()
            await session.disconnect()
            group.cancelAll()
        }
        say("* bye")
    }

    private func acceptInvitations() async {
        for await invitation in advertiser.invitations {
            do { try await invitation.accept(into: session) } catch { say("* \(error)") }
        }
    }

    private func inviteFoundPeers() async {
        do {
            for try await case .found(let peer, _) in browser.events where me.id.uuidString < peer.id.uuidString {
                Task {
                    do { try await browser.invitePeer(peer, to: session, timeout: .seconds(10)) } catch {
                        say("* \(error)")
                    }
                }
            }
        } catch {
            say("* browsing failed: \(error)")
        }
    }

    /// Joins, leaves and files. (This loop also takes every message, and lets them go: the typed
    /// messages are printed by `printMessages`, which has its own subscription.)
    private func reportEvents() async {
        for await event in session.events {
            switch event {
            case .peerStateChanged(let peer, .connected, _):
                say("* \(peer.displayName) joined")
            case .peerStateChanged(let peer, .notConnected, let reason):
                say("* \(peer.displayName) left (\(reason.map { "\($0)" } ?? "?"))")
            case .startedReceivingResource(let name, let peer, _):
                say("* receiving \(name) from \(peer.displayName)")
            case .finishedReceivingResource(let name, let peer, .success(let file)):
                say("* received \(name) from \(peer.displayName): \(file.path)")
            case .finishedReceivingResource(_, _, .failure(let error)):
                say("* \(error)")
            default:
                break
            }
        }
    }

    private func printMessages() async {
        var messages = session.messages(of: ChatLine.self).makeAsyncIterator()
        while true {
            do {
                guard let (line, peer) = try await messages.next() else { return }
                say("[\(peer.displayName)] \(line.text)")
            } catch {
                say("* \(error)")  // a message we cannot read: say so, and read on
            }
        }
    }

    /// A line typed: a command or a message. `false` to leave.
    private func handle(_ line: String) async -> Bool {
        if line == "/quit" { return false }
        if line == "/peers" {
            showPeers()
        } else if line.hasPrefix("/send ") {
            sendFile(URL(fileURLWithPath: String(line.dropFirst("/send ".count))))
        } else if !line.isEmpty {
            let everyone = session.connectedPeers
            guard !everyone.isEmpty else {
                say("* nobody is here yet")
                return true
            }
            do { try await session.send(ChatLine(text: line), toPeers: everyone) } catch { say("* \(error)") }
        }
        return true
    }

    private func showPeers() {
        let here = model.connectedPeers.map(\.displayName)
        say("* here: \(here.isEmpty ? "nobody" : here.joined(separator: ", "))")
        let away = model.discovered.keys.filter { model.peers[$0]?.state != .connected }.map(\.displayName)
        if !away.isEmpty { say("* found, not connected: \(away.sorted().joined(separator: ", "))") }
        for transfer in model.transfers.values {
            let way = transfer.direction == .incoming ? "from" : "to"
            let percent = Int(transfer.progress.fractionCompleted * 100)
            say("* \(transfer.name) \(way) \(transfer.peer.displayName): \(percent)%")
        }
    }

    private func sendFile(_ file: URL) {
        for peer in session.connectedPeers {
            do {
                let transfer = try session.sendResource(at: file, withName: file.lastPathComponent, toPeer: peer)
                Task {
                    do {
                        try await transfer.wait()
                        say("* sent \(transfer.name) to \(peer.displayName)")
                    } catch {
                        say("* \(error)")
                    }
                }
            } catch {
                say("* \(error)")
            }
        }
    }
}
