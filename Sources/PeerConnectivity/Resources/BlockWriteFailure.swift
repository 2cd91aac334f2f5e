import PeerConnectivityCore
import PeerConnectivityTransport

/// Why a received resource or folder ends early, as its writer says: the RESET code for the sender, the
/// error for this side, and whether the blocks checked so far are kept for a resume.
struct BlockWriteFailure: Error {
    let code: ChannelResetCode
    let error: TransferError
    /// Whether the blocks already checked stay for the sender to resume (a damaged block, a failed
    /// write); a transfer that broke a rule or a limit keeps nothing.
    let keep: Bool

    /// A write found the disk full (``POSIXFailure/isNoSpace``): the sender learns why (RESET no
    /// space), not only that something failed, and nothing is kept, as a resume would find no room either.
    static func noSpace(_ failure: POSIXFailure, peer: PeerID, name: String) -> BlockWriteFailure {
        BlockWriteFailure(
            code: .noSpace,
            error: .failed(peer: peer, name: name, detail: "writing: \(failure)"),
            keep: false
        )
    }
}
