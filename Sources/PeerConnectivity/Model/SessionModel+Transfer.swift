import Foundation

extension SessionModel {
    /// A resource (a file) in flight, to a peer or from one.
    ///
    /// Its `progress` counts the bytes; bind a progress view to it (on Apple platforms `Progress` is
    /// key-value observable; its counts are not part of the model's observation), or cancel it, which
    /// cancels the transfer for both sides.
    public struct Transfer: Identifiable, Hashable, Sendable {
        /// Which way a transfer goes.
        public enum Direction: Hashable, Sendable {
            /// From a peer to this side (``SessionEvent/startedReceivingResource(name:from:progress:)``).
            case incoming
            /// From this side (``Session/sendResource(at:withName:toPeer:)``).
            case outgoing
        }

        /// Identifies the transfer while it is in the model: its `progress` object.
        public var id: ObjectIdentifier { ObjectIdentifier(progress) }
        /// The resource's name as sent (from a peer: untrusted, and not the local file's name).
        public let name: String
        /// The peer sending it or receiving it.
        public let peer: PeerID
        /// Which way it goes.
        public let direction: Direction
        /// Its progress: bytes done of the file's length. Cancelling it cancels the transfer.
        public let progress: Progress

        init(_ record: TransferRecord) {
            self.name = record.name
            self.peer = record.peer
            self.direction = record.isIncoming ? .incoming : .outgoing
            self.progress = record.progress
        }

        /// Transfers are equal when they are the same transfer.
        public static func == (lhs: Transfer, rhs: Transfer) -> Bool {
            lhs.progress === rhs.progress
        }

        /// Hashes the transfer's identity.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(id)
        }
    }
}
