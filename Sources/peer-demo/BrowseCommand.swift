import ArgumentParser
import Foundation
import PeerConnectivity

/// Finds an advertiser (or connects to it directly), invites it and exchanges messages.
struct BrowseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "Find an advertiser, invite it, send messages and print their round trips."
    )

    @Option(help: "The service type (without _ and ._tcp).")
    var service = "pc-demo"

    @Option(help: "This peer's display name.")
    var name = "browser"

    @Option(help: "Connect to HOST:PORT directly instead of browsing.")
    var connect: String?

    @Option(help: "How many messages to send.")
    var count = 5

    @Option(help: "Seconds to wait for the advertiser to be found and to accept.")
    var timeout = 10

    func validate() throws {
        guard count >= 0, count <= 1_000_000 else { throw ValidationError("--count must be 0...1000000") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        if let connect, parseEndpoint(connect) == nil {
            throw ValidationError("--connect takes HOST:PORT, e.g. 127.0.0.1:7000")
        }
    }

    func run() async throws {
        let me = try PeerID(displayName: name)
        let session = Session(peer: me)
        var events = session.events.makeAsyncIterator()
        let started = ContinuousClock.now
        let peer: PeerID
        if let connect, let (host, port) = parseEndpoint(connect) {
            peer = try await session.connectPeer(
                host: host,
                port: port,
                withContext: Data("hello from \(name)".utf8),
                timeout: .seconds(timeout)
            )
        } else {
            let browser = try Browser(peer: me, serviceType: service)
            try browser.start()
            guard let (found, info) = try await firstFound(browser) else {
                throw ValidationError("no advertiser of _\(service)._tcp found within \(timeout) s")
            }
            Output.line("found \(found) info=\(info) after \(started.duration(to: .now))")
            try await browser.invitePeer(
                found,
                to: session,
                withContext: Data("hello from \(name)".utf8),
                timeout: .seconds(timeout)
            )
            browser.stop()
            peer = found
        }
        Output.line("connected to \(peer) after \(started.duration(to: .now))")

        for sequence in 0..<count {
            let message = Data("message \(sequence) from \(name)".utf8)
            let sent = ContinuousClock.now
            try await session.send(message, toPeers: [peer], mode: .reliable)
            while let event = await events.next() {
                if case .dataReceived(let echo, _, _) = event {
                    guard echo == message else { throw ValidationError("echo \(sequence) differs from what was sent") }
                    Output.line("echo \(sequence): \(echo.count) bytes, round trip \(sent.duration(to: .now))")
                    break
                }
                if case .peerStateChanged(_, .notConnected, let reason) = event {
                    throw ValidationError("peer disconnected: \(reason.map { "\($0)" } ?? "?")")
                }
            }
        }
        await session.disconnect()
        Output.line("done")
    }

    private func firstFound(_ browser: Browser) async throws -> (PeerID, [String: String])? {
        try await withThrowingTaskGroup(of: (PeerID, [String: String])?.self) { group in
            group.addTask {
                for try await event in browser.events {
                    if case .found(let peer, let info) = event { return (peer, info) }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// Splits "HOST:PORT".
func parseEndpoint(_ text: String) -> (String, Int)? {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
        (1...65535).contains(port), colon != text.startIndex
    else { return nil }
    return (String(text[..<colon]), port)
}
