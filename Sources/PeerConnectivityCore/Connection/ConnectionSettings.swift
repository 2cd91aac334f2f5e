import NIOCore

/// What a connection machine is given and never changes: this side's identity and preferences, and
/// the deadlines of the handshake. Each state of the machine reads it.
struct ConnectionSettings {
    /// This side's identity, sent in HELLO.
    let localPeer: PeerID
    /// This side's encryption preference, sent in HELLO.
    let encryption: EncryptionPreference
    /// Whether this side has seen a peer encrypted before (its key is pinned): such a peer is never
    /// accepted in the clear, whatever either preference says.
    let encryptedBefore: @Sendable (PeerID) -> Bool
    /// How many channels the peer may have open at once.
    let maximumIncomingChannels: Int
    /// The longest an invitee lets an invitation wait for the application, whatever the INVITE asks.
    let maximumInvitationTimeout: TimeAmount
    /// How long an invitee waits for the inviter's part of the handshake, and the session for its
    /// answer to a RESUME.
    let handshakeTimeout: TimeAmount
    /// How long an invitee waits for the certificate decision, when one is asked.
    let certificateDecisionTimeout: TimeAmount?

    /// Why a plain connection with `peer` is refused: this side has seen it encrypted before.
    func downgradeRefusal(for peer: PeerID) -> DisconnectReason? {
        guard encryptedBefore(peer) else { return nil }
        return .downgradeRefused.with(
            detail: "\(peer) was seen encrypted before (its key is pinned) and the HELLOs now say plain: "
                + "someone on the path may have changed a HELLO"
        )
    }
}
