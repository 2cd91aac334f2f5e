import PeerConnectivityCore
import PeerConnectivityTransport

/// Why a stream or a resource transfer failed.
///
/// Both sides of a transfer get an error when it fails: the side that cancelled gets
/// ``cancelled(peer:name:)``, the other ``cancelledByPeer(peer:name:)``; a resource whose bytes do not
/// match its digests gets ``digestMismatch(peer:name:)`` on both sides.
public struct TransferError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case cancelled
        case cancelledByPeer
        case refused
        case digestMismatch
        case sizeMismatch
        case failed
        case connectionClosed
        case alreadyFinished
        case nameTooLong
    }

    private let code: Code

    /// The peer on the other side of the transfer, when known.
    public let peer: PeerID?

    /// The stream's or resource's name, when known.
    public let name: String?

    /// Why the connection closed, for ``connectionClosed(_:peer:name:)``.
    public let reason: DisconnectReason?

    /// More about what went wrong (an I/O error, say), when there is more.
    public let detail: String?

    private init(_ code: Code, peer: PeerID?, name: String?, reason: DisconnectReason? = nil, detail: String? = nil) {
        self.code = code
        self.peer = peer
        self.name = name
        self.reason = reason
        self.detail = detail
    }

    /// This side cancelled the transfer (its `Progress`, its stream, or the task that used it).
    public static func cancelled(peer: PeerID?, name: String?) -> TransferError {
        TransferError(.cancelled, peer: peer, name: name)
    }

    /// The other side cancelled the transfer.
    public static func cancelledByPeer(peer: PeerID?, name: String?) -> TransferError {
        TransferError(.cancelledByPeer, peer: peer, name: name)
    }

    /// The receiver would not take the transfer (too many open at once, or nowhere to store it).
    public static func refused(peer: PeerID?, name: String?, detail: String? = nil) -> TransferError {
        TransferError(.refused, peer: peer, name: name, detail: detail)
    }

    /// The resource's bytes do not match the digests the sender computed: a block's (XXH64 or XXH3-64), or
    /// the root over them (SHA-256). After a damaged block the receiver keeps the blocks it checked and the sender
    /// opens the resource again, up to four times in all, so a sender sees this error only when that
    /// keeps failing; after a root that does not match, nothing is kept.
    public static func digestMismatch(peer: PeerID?, name: String?) -> TransferError {
        TransferError(.digestMismatch, peer: peer, name: name)
    }

    /// The resource's blocks do not add up to the size announced (some never came before END):
    /// nothing was kept.
    public static func sizeMismatch(peer: PeerID?, name: String?, detail: String? = nil) -> TransferError {
        TransferError(.sizeMismatch, peer: peer, name: name, detail: detail)
    }

    /// Reading or writing the data failed on one side (a disk error, say).
    public static func failed(peer: PeerID?, name: String?, detail: String?) -> TransferError {
        TransferError(.failed, peer: peer, name: name, detail: detail)
    }

    /// The connection to the peer closed before the transfer completed.
    public static func connectionClosed(_ reason: DisconnectReason?, peer: PeerID?, name: String?) -> TransferError {
        TransferError(.connectionClosed, peer: peer, name: name, reason: reason)
    }

    /// A write after the stream was finished.
    public static func alreadyFinished(peer: PeerID?, name: String?) -> TransferError {
        TransferError(.alreadyFinished, peer: peer, name: name)
    }

    /// The name is longer than the wire protocol carries (16 KiB of UTF-8).
    public static func nameTooLong(peer: PeerID?, name: String?) -> TransferError {
        TransferError(.nameTooLong, peer: peer, name: name)
    }

    /// Errors are equal when they are of the same kind and name the same peer.
    public static func == (lhs: TransferError, rhs: TransferError) -> Bool {
        lhs.code == rhs.code && lhs.peer == rhs.peer
    }

    /// Hashes the kind and the peer.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(peer)
    }

    /// A sentence saying what failed.
    public var description: String {
        let what = name.map { "transfer \"\(LogSafe.escaped($0, limit: 80))\"" } ?? "transfer"
        let with = peer.map { " with \($0)" } ?? ""
        let more = detail.map { ": \($0)" } ?? ""
        switch code {
        case .cancelled: return "\(what)\(with) was cancelled"
        case .cancelledByPeer: return "\(what)\(with) was cancelled by the peer"
        case .refused: return "\(what)\(with) was refused\(more)"
        case .digestMismatch: return "\(what)\(with): the digest of the bytes received does not match the sender's"
        case .sizeMismatch: return "\(what)\(with): the length received differs from the size announced\(more)"
        case .failed: return "\(what)\(with) failed\(more)"
        case .connectionClosed:
            return "\(what)\(with) ended with its connection (\(reason.map { "\($0)" } ?? "closed"))"
        case .alreadyFinished: return "\(what)\(with) is already finished"
        case .nameTooLong:
            return "\(what): the name is longer than \(WireProtocol.maximumChannelNameLength) bytes of UTF-8"
        }
    }

    /// The error for a channel that ended, seen from this side.
    static func from(_ error: ChannelClosedError, peer: PeerID?, name: String?) -> TransferError {
        switch error.cause {
        case .connectionClosed(let reason): return .connectionClosed(reason, peer: peer, name: name)
        case .reset(let code, let byPeer): return .from(code, byPeer: byPeer, peer: peer, name: name)
        }
    }

    /// The error for a RESET code.
    static func from(_ code: ChannelResetCode, byPeer: Bool, peer: PeerID?, name: String?) -> TransferError {
        switch code {
        case .cancelled: return byPeer ? .cancelledByPeer(peer: peer, name: name) : .cancelled(peer: peer, name: name)
        case .refused: return .refused(peer: peer, name: name)
        case .digestMismatch: return .digestMismatch(peer: peer, name: name)
        case .sizeMismatch: return .sizeMismatch(peer: peer, name: name)
        case .failed:
            return .failed(peer: peer, name: name, detail: byPeer ? "the peer could not read or write the data" : nil)
        case .tooLarge:
            return .refused(peer: peer, name: name, detail: "larger than the receiver accepts")
        case .noSpace:
            return .failed(peer: peer, name: name, detail: "the receiver has not enough free disk space")
        case .busy:
            return .refused(
                peer: peer,
                name: name,
                detail: "the receiver has as many resources open as it takes; try again later"
            )
        case .blockMismatch:
            return .digestMismatch(peer: peer, name: name)
        }
    }
}
