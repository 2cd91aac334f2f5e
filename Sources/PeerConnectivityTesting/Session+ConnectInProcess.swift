import Foundation
import PeerConnectivity

extension Session {
    /// Connects this session to `other`, another session of this process, with no network: no DNS-SD,
    /// no address, no port. This session invites and `other` accepts, as an advertiser's application
    /// would; when this returns, each sees the other as ``PeerState/connected``.
    ///
    /// The two sessions talk through a pair of local sockets with the library's whole protocol (the
    /// handshake, TLS 1.3 when their encryption preferences ask for it, messages, streams, resources,
    /// the keepalive), so an app's tests exercise the code it runs for real, on a machine or in a
    /// container that has no network at all. What needs an address does not happen over such a link:
    /// the mesh does not introduce a third session, a dropped link is not resumed, and unreliable
    /// messages (``SendMode/unreliable``), which have no UDP address to go to, travel over the link itself.
    ///
    /// ```swift
    /// let alice = Session(peer: try PeerID(displayName: "alice"))
    /// let bob = Session(peer: try PeerID(displayName: "bob"))
    /// try await alice.connectInProcess(to: bob)
    /// try await alice.send(Data("hi".utf8), toPeers: [bob.peer], mode: .reliable)
    /// ```
    ///
    /// - Parameters:
    ///   - other: the session to connect to; it accepts the invitation.
    ///   - context: the invitation's context, as `Browser.invitePeer(_:to:withContext:timeout:)` sends it.
    ///   - timeout: how long the handshake may take.
    /// - Throws: ``SessionError`` when either session cannot take the other (full, or already connected to
    ///   it); ``InvitationError`` when the handshake fails (their encryption preferences do not meet, say).
    public func connectInProcess(to other: Session, context: Data? = nil, timeout: Duration = .seconds(10))
        async throws
    {
        try await joinInProcess(other, context: context, timeout: timeout)
    }
}
