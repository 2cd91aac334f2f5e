import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import Testing

@testable import PeerConnectivity

/// Resolves that recover, through the real avahi-daemon: a real advertiser, a real browse and real
/// resolves, with faults put in front of the resolve (it fails, or gives a stale port) by a stand-in.
@Suite("Browser resolve retries", .avahiTimeLimit, .avahi)
struct BrowserResolveRetryTests {
    /// A started advertiser on DNS-SD that accepts every invitation into a session of its own.
    struct Peer {
        let advertiser: Advertiser
        let session: Session
        let accepting: Task<Void, Never>

        init(_ peer: PeerID, serviceType: String) async throws {
            var configuration = Advertiser.Configuration.default
            configuration.handshakeTimeout = .seconds(30)
            advertiser = try Advertiser(peer: peer, serviceType: serviceType, configuration: configuration)
            session = Session(peer: peer)
            accepting = acceptAll(advertiser, into: session)
            try await advertiser.start()
        }

        func stop() async {
            await advertiser.stop()
            _ = await accepting.value
            await session.disconnect()
        }
    }

    /// A browser whose first resolve of any service points at `port` instead, as a peer's old address would.
    static func browser(_ me: PeerID, serviceType: String, firstResolvedPort port: UInt16) throws -> Browser {
        let calls = Locked(0)
        return try Browser(peer: me, serviceType: serviceType, configuration: .default) { instance, timeout in
            var resolved = try await DNSServiceResolution.resolve(instance, timeout: timeout)
            let first = calls.withLock { count in
                count += 1
                return count == 1
            }
            if first { resolved.port = port }
            return resolved
        }
    }

    /// Collects a browser's events in the background.
    static func collect(_ browser: Browser) -> (Locked<[BrowserEvent]>, Task<Void, any Error>) {
        let events = Locked<[BrowserEvent]>([])
        let task = Task {
            for try await event in browser.events { events.withLock { $0.append(event) } }
        }
        return (events, task)
    }

    @Test("a resolve that fails twice, then works, finds the peer once, and the invitation connects")
    func failsTwiceThenWorks() async throws {
        let service = uniqueServiceType("retry")
        let other = try PeerID(displayName: "late resolver")
        let peer = try await Peer(other, serviceType: service)
        let calls = Locked(0)
        let logs = LogCapture()
        var configuration = Browser.Configuration.default
        configuration.logger = logs.logger(label: "browser")
        let me = try PeerID(displayName: "retrying")
        let browser = try Browser(peer: me, serviceType: service, configuration: configuration) { instance, timeout in
            let call = calls.withLock { count in
                count += 1
                return count
            }
            guard call > 2 else { throw DNSServiceFailure.timedOut(operation: "DNSServiceResolve (test)") }
            return try await DNSServiceResolution.resolve(instance, timeout: timeout)
        }
        let (events, collector) = Self.collect(browser)
        try browser.start()

        try await eventually { !events.value.isEmpty }
        #expect(events.value == [.found(other, discoveryInfo: [:])])
        #expect(calls.value >= 3)
        let retries = logs.records.filter { $0.level == .debug && $0.message.contains("again in") }
        #expect(retries.count == 2, "\(logs.records.map(\.message))")
        #expect(!logs.records.contains { $0.level >= .warning })

        let session = Session(peer: me)
        try await browser.invitePeer(other, to: session, timeout: .seconds(20))
        #expect(session.connectedPeers == [other])
        #expect(events.value == [.found(other, discoveryInfo: [:])], "found once: no lost and found again")

        await session.disconnect()
        browser.stop()
        _ = await collector.result
        await peer.stop()
    }

    @Test("a dial to a stale port is refused; the peer is resolved again and the next invitation connects")
    func staleAddressIsResolvedAgain() async throws {
        let service = uniqueServiceType("stale")
        let other = try PeerID(displayName: "restarted")
        let peer = try await Peer(other, serviceType: service)
        let livePort = try #require(peer.advertiser.port)
        // A port that refuses: what a peer that restarted elsewhere leaves behind. Held for the whole test, so
        // that no other test's listener (nor this session's own) can take it meanwhile.
        let gone = try RefusingPort()
        defer { withExtendedLifetime(gone) {} }
        let stalePort = UInt16(gone.port)

        let me = try PeerID(displayName: "dialing")
        let browser = try Self.browser(me, serviceType: service, firstResolvedPort: stalePort)
        let (events, collector) = Self.collect(browser)
        try browser.start()
        try await eventually { !events.value.isEmpty }
        #expect(browser.runtime.endpoint(of: other)?.port == Int(stalePort))

        let session = Session(peer: me)
        let reason = await invitationFailureReason {
            try await browser.invitePeer(other, to: session, timeout: .seconds(20))
        }
        #expect(reason == .connectionFailed)
        try await eventually { browser.runtime.endpoint(of: other)?.port == livePort }
        try await browser.invitePeer(other, to: session, timeout: .seconds(20))
        #expect(session.connectedPeers == [other])
        #expect(events.value == [.found(other, discoveryInfo: [:])], "the new port without lost and found")

        await session.disconnect()
        browser.stop()
        _ = await collector.result
        await peer.stop()
    }

    @Test("another peer at the found port: the invitation fails as unexpectedPeer; resolved again, it connects")
    func takenPortIsResolvedAgain() async throws {
        let service = uniqueServiceType("taken")
        let other = try PeerID(displayName: "moved")
        let peer = try await Peer(other, serviceType: service)
        let livePort = try #require(peer.advertiser.port)
        // Another peer now listens where the first resolution points: the port was taken after the peer left it.
        // On every interface, as the peer: whichever of the host's addresses is dialled reaches it.
        let impostor = try await loopbackAdvertiser("impostor", encryption: .none) { $0.host = "::" }
        let takenPort = try #require(impostor.port.map(UInt16.init))

        let me = try PeerID(displayName: "dialing")
        let browser = try Self.browser(me, serviceType: service, firstResolvedPort: takenPort)
        let (events, collector) = Self.collect(browser)
        try browser.start()
        try await eventually { !events.value.isEmpty }
        #expect(browser.runtime.endpoint(of: other)?.port == Int(takenPort))

        // The names are compared before encryption is negotiated: the impostor's plain HELLO is enough.
        let session = Session(peer: me)
        let reason = await invitationFailureReason {
            try await browser.invitePeer(other, to: session, timeout: .seconds(20))
        }
        #expect(reason == .unexpectedPeer)
        try await eventually { browser.runtime.endpoint(of: other)?.port == livePort }
        try await browser.invitePeer(other, to: session, timeout: .seconds(20))
        #expect(session.connectedPeers == [other])

        await session.disconnect()
        browser.stop()
        _ = await collector.result
        await impostor.stop()
        await peer.stop()
    }

    @Test("a peer that restarts on a new port is reached there, after at most one refused invitation")
    func restartOnNewPort() async throws {
        let service = uniqueServiceType("restart")
        let other = try PeerID(displayName: "restarting")
        let first = try await Peer(other, serviceType: service)
        let firstPort = try #require(first.advertiser.port)
        let me = try PeerID(displayName: "watching")
        let browser = try Browser(peer: me, serviceType: service)
        let (events, collector) = Self.collect(browser)
        try browser.start()
        try await eventually { browser.runtime.endpoint(of: other)?.port == firstPort }

        // Registered again at once under the same name, the service's PTR record does not change: Avahi
        // may report neither REMOVE nor ADD, and the browser still holds the old port. The refused dial
        // makes it resolve the service again.
        await first.stop()
        let second = try await Peer(other, serviceType: service)
        let secondPort = try #require(second.advertiser.port)
        try await eventually { browser.runtime.endpoint(of: other) != nil }
        let session = Session(peer: me)
        var refusals = 0
        while true {
            do {
                try await browser.invitePeer(other, to: session, timeout: .seconds(20))
                break
            } catch let error as InvitationError
                where (error.reason == .connectionFailed || error.reason == .unexpectedPeer) && refusals == 0
            {
                // The old port refused, or was taken since by another listener: the session's own, bound after
                // the first peer stopped, was seen to get it ("connected to itself").
                refusals += 1
                try await eventually { browser.runtime.endpoint(of: other)?.port == secondPort }
            }
        }
        #expect(session.connectedPeers == [other])
        #expect(browser.runtime.endpoint(of: other)?.port == secondPort)
        #expect(events.value.last == .found(other, discoveryInfo: [:]), "\(events.value)")

        await session.disconnect()
        browser.stop()
        _ = await collector.result
        await second.stop()
    }
}
