import Foundation
import Synchronization

/// A resource in flight in a session, either way, as ``SessionModel`` shows it.
struct TransferRecord: Sendable {
    let name: String
    let peer: PeerID
    let isIncoming: Bool
    let progress: Progress
}

/// The resources in flight in a session, both ways, and a feed of their starts and ends.
///
/// Incoming resources are in ``SessionEvent`` already, but outgoing ones are not (as in MPC, the
/// sender holds its ``ResourceTransfer``), and a finished event does not say which of two resources
/// of one name it ends. The session records both here, where each start and end happens, so a model
/// can show every transfer in progress without being told by the application.
final class TransferRegistry: Sendable {
    /// A transfer started or ended; `ended` carries the identity of the transfer's `Progress`.
    enum Change: Sendable {
        case started(TransferRecord)
        case ended(ObjectIdentifier)
    }

    /// What identifies a transfer where it ends: the channel of an incoming one (the event that ends
    /// it carries no `Progress`), the `Progress` of an outgoing one.
    enum Key: Hashable, Sendable {
        case channel(TransferKey)
        case progress(ObjectIdentifier)
    }

    private let table = Mutex([Key: TransferRecord]())
    /// Changes for every subscriber; each starts from a snapshot (``subscribe()``), so none are kept.
    let changes = EventHub<Change>(keepsEarlyEvents: false)

    /// Records a transfer that starts.
    ///
    /// - Parameters:
    ///   - record: the transfer.
    ///   - key: what ``ended(_:)`` will be given for it.
    func started(_ record: TransferRecord, key: Key) {
        table.withLock { table in
            table[key] = record
            changes.yield(.started(record))
        }
    }

    /// Removes a transfer that ended, however it ended.
    ///
    /// - Parameter key: the key it was started with.
    func ended(_ key: Key) {
        table.withLock { table in
            if let record = table.removeValue(forKey: key) {
                changes.yield(.ended(ObjectIdentifier(record.progress)))
            }
        }
    }

    /// The transfers in progress.
    var inProgress: [TransferRecord] {
        table.withLock { Array($0.values) }
    }

    /// A new subscriber of ``changes`` and the transfers in progress at that moment, together.
    ///
    /// - Returns: its id, and the transfers.
    func subscribe() -> (id: Int, inProgress: [TransferRecord]) {
        table.withLock { table in
            (changes.subscribe(claimsEarlyEvents: false), Array(table.values))
        }
    }
}
