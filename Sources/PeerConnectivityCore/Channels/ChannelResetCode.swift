/// Why a channel was ended early (the RESET frame's code byte).
package enum ChannelResetCode: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The side that sent RESET cancelled the transfer (its `Progress`, its stream, or its reader).
    case cancelled = 1
    /// The receiver would not take the channel: too many open, or nowhere to put it.
    case refused = 2
    /// The root over the digests of the resource's blocks does not match the one in its END frame.
    case digestMismatch = 3
    /// The resource's END came before all of its blocks: its bytes fall short of the size its OPEN
    /// announced.
    case sizeMismatch = 4
    /// Reading or writing the data failed on the side that sent RESET (a disk error, say).
    case failed = 5
    /// The resource is larger than the receiver accepts (its configured maximum).
    case tooLarge = 6
    /// The receiver has not enough free disk space for the resource (at OPEN, or while writing it).
    case noSpace = 7
    /// The receiver has as many resources open as it takes at once; the sender may try again later.
    case busy = 8
    /// A block's bytes did not match the digest its BLOCK frame announced. The receiver keeps the
    /// blocks it has checked; the sender opens the resource again and sends the others.
    case blockMismatch = 9

    /// Reads a code from the wire; an unknown value counts as ``failed``.
    ///
    /// - Parameter wireValue: the code byte.
    package init(wireValue: UInt8) {
        self = ChannelResetCode(rawValue: wireValue) ?? .failed
    }

    package var description: String {
        switch self {
        case .cancelled: return "cancelled"
        case .refused: return "refused"
        case .digestMismatch: return "SHA-256 mismatch"
        case .sizeMismatch: return "size mismatch"
        case .failed: return "failed"
        case .tooLarge: return "too large"
        case .noSpace: return "no space"
        case .busy: return "busy"
        case .blockMismatch: return "block mismatch"
        }
    }
}
