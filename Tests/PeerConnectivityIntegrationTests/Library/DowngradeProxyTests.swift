import Foundation
import Logging
import Testing

@testable import PeerConnectivity

/// Someone on the path rewrites the encryption preference in the plain HELLOs to none: a real TCP
/// proxy on loopback between two real sessions.
@Suite("Downgrade: a HELLO rewritten on the path never gives a silent plain link", .timeLimit(.minutes(1 * slowdown)))
struct DowngradeProxyTests {
    /// An advertiser on 127.0.0.1 with a session behind it that accepts every invitation.
    struct Host {
        let advertiser: Advertiser
        let session: Session
        let log: EventLog
        let acceptor: Task<Void, Never>

        init(
            _ preference: EncryptionPreference = .default,
            policy: CertificatePolicy = .acceptBound,
            logger: Logger? = nil
        ) async throws {
            var configuration = Advertiser.Configuration.default
            configuration.host = "127.0.0.1"
            configuration.publishesService = false
            configuration.certificatePolicy = policy
            // No test here is about the handshake timeout; its 5 s default ran out before a TLS handshake through
            // the proxy was done on a loaded machine.
            configuration.handshakeTimeout = .seconds(30)
            if let logger { configuration.logger = logger }
            let peer = try PeerID(displayName: "host")
            advertiser = try Advertiser(
                peer: peer,
                serviceType: "loopback",
                encryptionPreference: preference,
                configuration: configuration
            )
            try await advertiser.start()
            var sessionConfiguration = Session.Configuration.patient
            sessionConfiguration.certificatePolicy = policy
            session = Session(peer: peer, encryptionPreference: preference, configuration: sessionConfiguration)
            log = EventLog(session)
            acceptor = acceptAll(advertiser, into: session)
        }
    }

    private static func client(
        _ preference: EncryptionPreference = .default,
        policy: CertificatePolicy = .acceptBound,
        logger: Logger? = nil
    ) throws -> Session {
        var configuration = Session.Configuration.patient
        configuration.certificatePolicy = policy
        // As the host's: the client's own 5 s for its TLS handshake ran out on a loaded machine.
        configuration.handshakeTimeout = .seconds(30)
        if let logger { configuration.logger = logger }
        return Session(
            peer: try PeerID(displayName: "client"),
            encryptionPreference: preference,
            configuration: configuration
        )
    }

    @Test("default sessions, both HELLOs rewritten to none: refused on both sides, never plain")
    func defaultsRefuseRewrittenHellos() async throws {
        let host = try await Host()
        defer { host.acceptor.cancel() }
        let proxy = try await HelloRewritingProxy.start(to: host.advertiser.port!, rewritesHellos: true)
        defer { Task { await proxy.stop() } }
        let client = try Self.client()
        #expect(
            await invitationFailureReason { try await client.connectPeer(host: "127.0.0.1", port: proxy.port) }
                == .encryptionRequired
        )
        #expect(client.connectedPeers.isEmpty)
        #expect(host.session.connectedPeers.isEmpty)
    }

    @Test("the same proxy without the rewrite: connected, encrypted with TLS 1.3, and the link says so")
    func untouchedProxyEncrypts() async throws {
        let host = try await Host()
        defer { host.acceptor.cancel() }
        let proxy = try await HelloRewritingProxy.start(to: host.advertiser.port!, rewritesHellos: false)
        defer { Task { await proxy.stop() } }
        let client = try Self.client()
        let peer = try await client.connectPeer(host: "127.0.0.1", port: proxy.port, timeout: invitationTimeout)
        let security = try #require(client.securityInfo(for: peer))
        #expect(security.isEncrypted)
        #expect(security.tlsVersion == "TLS 1.3")
        #expect(
            security.cipherSuite?.hasPrefix("TLS_") == true,
            "cipher suite \(String(describing: security.cipherSuite))"
        )
        #expect(security.summary == "TLS 1.3, \(security.cipherSuite ?? "")")
        try await host.log.waitFor(client.peer, .connected)
        let hostSide = try #require(host.session.securityInfo(for: client.peer))
        #expect(hostSide.cipherSuite == security.cipherSuite, "both ends name the same suite")
        #expect(hostSide.tlsVersion == "TLS 1.3")
        await client.disconnect()
    }

    @Test("a pinned peer is refused in the clear as a downgrade, even with .optional on both sides")
    func pinnedPeerRefusesPlain() async throws {
        let hostPins = TrustStore()
        let clientPins = TrustStore()
        let hostLogs = LogCapture()
        let host = try await Host(
            .optional,
            policy: .trustOnFirstUse(hostPins),
            logger: hostLogs.logger(label: "host")
        )
        defer { host.acceptor.cancel() }
        let client = try Self.client(.optional, policy: .trustOnFirstUse(clientPins))

        // First meeting, untouched: encrypted, and each side pins the other's key.
        let peer = try await client.connectPeer(
            host: "127.0.0.1",
            port: host.advertiser.port!,
            timeout: invitationTimeout
        )
        #expect(client.securityInfo(for: peer)?.isEncrypted == true)
        #expect(clientPins.pinnedKey(for: peer.id) != nil)
        #expect(hostPins.pinnedKey(for: client.peer.id) != nil)
        await client.disconnect()
        try await host.log.waitFor(client.peer, .notConnected)

        // Again through the proxy that rewrites both HELLOs to none.
        let proxy = try await HelloRewritingProxy.start(to: host.advertiser.port!, rewritesHellos: true)
        defer { Task { await proxy.stop() } }
        #expect(
            await invitationFailureReason { try await client.connectPeer(host: "127.0.0.1", port: proxy.port) }
                == .downgradeRefused
        )
        #expect(client.connectedPeers.isEmpty)
        #expect(host.session.state(of: client.peer) == .notConnected)
        // The operator of the invited side reads it, with the peer and its address.
        try await #require(
            eventually {
                hostLogs.records.contains { record in
                    record.level == .warning && record.message.contains("seen encrypted before")
                        && record.message.contains("\(client.peer)")
                        && record.metadata["remote"]?.contains("127.0.0.1") == true
                }
            },
            "no warning naming the downgrade, the peer and its address: \(hostLogs.records.map(\.line))"
        )
    }

    @Test(".optional on both sides and never pinned: plain, and said so in the log and on the link")
    func optionalFallsBackVisibly() async throws {
        let clientLogs = LogCapture()
        let host = try await Host(.optional)
        defer { host.acceptor.cancel() }
        let proxy = try await HelloRewritingProxy.start(to: host.advertiser.port!, rewritesHellos: true)
        defer { Task { await proxy.stop() } }
        let client = try Self.client(.optional, logger: clientLogs.logger(label: "client"))
        let peer = try await client.connectPeer(host: "127.0.0.1", port: proxy.port, timeout: invitationTimeout)
        let security = try #require(client.securityInfo(for: peer))
        #expect(!security.isEncrypted)
        #expect(security.tlsVersion == nil && security.cipherSuite == nil)
        #expect(security.summary == "plain (not encrypted)")
        let warnings = clientLogs.records.filter { $0.level == .warning && $0.message.contains("NOT encrypted") }
        #expect(warnings.count == 1, "\(clientLogs.records.map(\.line))")
        await client.disconnect()
    }
}
