import Foundation
import PeerConnectivity
import Testing

/// Two connected sessions over loopback without DNS-SD: `client` invited `host` (directly, or through
/// a proxy `through` starts in front of the host's port and whose port it returns), whose events
/// `hostLog` collects (and `clientLog` the client's). Both sessions are ``Session/Configuration/patient`` unless
/// given configurations of their own.
struct SessionPair {
    let client: Session
    let host: Session
    let clientLog: EventLog
    let hostLog: EventLog
    let advertiser: Advertiser
    let acceptor: Task<Void, Never>

    static func connect(
        host hostConfiguration: Session.Configuration = .patient,
        client clientConfiguration: Session.Configuration = .patient,
        clientSession: Session? = nil,
        encryption: EncryptionPreference = .default,
        through proxy: (Int) async throws -> Int = { $0 }
    ) async throws -> SessionPair {
        let advertiser = try await loopbackAdvertiser("pair-host", encryption: encryption)
        let host = Session(peer: advertiser.peer, encryptionPreference: encryption, configuration: hostConfiguration)
        let hostLog = EventLog(host)
        let acceptor = acceptAll(advertiser, into: host)
        let client =
            try clientSession
            ?? Session(
                peer: try PeerID(displayName: "pair-client"),
                encryptionPreference: encryption,
                configuration: clientConfiguration
            )
        let clientLog = EventLog(client)
        let port = try await proxy(advertiser.port!)
        try await client.connectPeer(host: "127.0.0.1", port: port, timeout: invitationTimeout)
        try await hostLog.waitFor(client.peer, .connected)
        return SessionPair(
            client: client,
            host: host,
            clientLog: clientLog,
            hostLog: hostLog,
            advertiser: advertiser,
            acceptor: acceptor
        )
    }
}

extension Session.Configuration {
    /// The default with 30 s for each connection's handshake, as ``loopbackAdvertiser(_:encryption:configure:)``
    /// gives its advertisers: the 5 s default ran out before a TLS handshake was through while the whole suite
    /// started at once on two CPUs.
    static var patient: Session.Configuration {
        var configuration = Session.Configuration.default
        configuration.handshakeTimeout = .seconds(30)
        return configuration
    }
}
