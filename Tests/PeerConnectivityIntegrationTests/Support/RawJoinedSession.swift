import Foundation
import PeerConnectivity
import Testing

/// A session behind a loopback advertiser that accepts every invitation, joined by a raw socket that
/// sent a plain HELLO and INVITE by hand: for tests that write frames the library would never send.
struct RawJoinedSession {
    let session: Session
    let log: EventLog
    let advertiser: Advertiser
    let acceptor: Task<Void, Never>
    let socket: RawSocket
    /// The session's ACCEPT, its body.
    let accept: [UInt8]?

    /// Starts the session and joins it.
    ///
    /// - Parameters:
    ///   - name: the advertiser's display name.
    ///   - configuration: the session's; its liveness timeout becomes 60 s, since the raw socket answers
    ///     no keepalive and a loaded machine could otherwise end the link before a test is through.
    ///   - maximumMessageLength: the largest message the raw peer says it accepts, in its INVITE.
    ///   - hashesBlocksWithXXH3: whether its INVITE offers XXH3-64 block digests.
    init(
        _ name: String,
        configuration: Session.Configuration,
        maximumMessageLength: UInt32 = 1 << 20,
        hashesBlocksWithXXH3: Bool = false
    ) async throws {
        var configuration = configuration
        configuration.livenessTimeout = .seconds(60)
        advertiser = try await loopbackAdvertiser(name, encryption: .none)
        session = Session(peer: advertiser.peer, encryptionPreference: .none, configuration: configuration)
        log = EventLog(session)
        acceptor = acceptAll(advertiser, into: session)
        socket = try await RawSocket(port: advertiser.port!)
        socket.send(
            HandFrames.hello()
                + HandFrames.invite(
                    maximumMessageLength: maximumMessageLength,
                    hashesBlocksWithXXH3: hashesBlocksWithXXH3
                )
        )
        accept = await socket.readFrame(ofType: 0x03)
        #expect(accept != nil, "the invitation was accepted")
    }

    /// Stops accepting and advertising.
    func stop() async {
        acceptor.cancel()
        await advertiser.stop()
    }
}
