import Foundation
import PeerConnectivity
import PeerConnectivityCore
import Synchronization

/// What the reflector does with each message of one runner, decided where the message is read (the session's
/// ``MessageResponder``): data messages are echoed in the mode they came in; a bulk test's one-way messages
/// (between a ``MessageFlow`` start and end) and datagrams at a bitrate are counted, and their end answered
/// with a receipt; a report or reverse-bulk request goes on to the runner's event loop, which must await
/// things to answer it.
final class RunnerEcho: Sendable {
    private struct State {
        /// Messages and bytes echoed.
        var messages = 0
        var bytes = 0
        /// One-way messages counted and checked since the runner's "start", until its "end".
        var sink: (bytes: Int, mismatch: Int?)?
        /// Datagrams counted from the runner's "start-udp" to its "end".
        var datagrams: DatagramReceiver?
    }

    private let state = Mutex(State())
    private let activity: RunnerActivity

    /// - Parameter activity: touched by every message the runner sends.
    init(activity: RunnerActivity) {
        self.activity = activity
    }

    /// Messages and bytes echoed so far.
    var echoed: (messages: Int, bytes: Int) {
        state.withLock { ($0.messages, $0.bytes) }
    }

    /// The responder a runner's session calls as it reads each message.
    var responder: MessageResponder {
        MessageResponder { [self] data, _, mode in respond(to: data, mode: mode) }
    }

    /// What to do with a message of the runner: called where the session reads it (a session without
    /// reconnection) or from the runner's event loop (with reconnection, whose session calls no responder,
    /// and for the messages the responder delivers: answering those again gives the same `.deliver`,
    /// and changes nothing).
    func respond(to data: Data, mode: SendMode) -> MessageResponse {
        activity.touch()
        let kind = data.withUnsafeBytes { Self.kind(of: $0) }
        if kind == .delivered { return .deliver }
        return state.withLock { state -> MessageResponse in
            if kind == .flow {
                return Self.flow(data, state: &state)
            }
            if mode == .unreliable, state.datagrams != nil {
                state.datagrams?.record(data, arrivalNanoseconds: MonotonicClock.now())
                return .consumed
            }
            if var counted = state.sink {
                if counted.mismatch == nil {
                    let wrong = data.withUnsafeBytes {
                        ReflectorService.pattern.firstMismatch(in: $0, index: 0, offset: 0)
                    }
                    counted.mismatch = wrong.map { counted.bytes + $0 }
                }
                counted.bytes += data.count
                state.sink = counted
                return .consumed
            }
            state.messages += 1
            state.bytes += data.count
            return .reply(data)
        }
    }

    /// What a runner's message is, by its first bytes.
    private enum Kind {
        /// A request for the report or for bulk data: the reflector's event reader answers it.
        case delivered
        /// The start or end of one-way messages or datagrams.
        case flow
        /// Anything else: a payload to echo, count or record.
        case payload
    }

    /// The requests and prefixes a message is told apart by, as bytes (see
    /// `UnsafeRawBufferPointer.begins(with:)`).
    private static let reportRequest = [UInt8](ReflectorReport.request)
    private static let bulkPrefix = [UInt8](BulkRequest.prefix)
    private static let flowPrefix = [UInt8](MessageFlow.prefix)

    /// Tells a message's kind with one look at its bytes.
    private static func kind(of bytes: UnsafeRawBufferPointer) -> Kind {
        if bytes.count == reportRequest.count, bytes.begins(with: reportRequest) { return .delivered }
        if bytes.begins(with: bulkPrefix) { return .delivered }
        return bytes.begins(with: flowPrefix) ? .flow : .payload
    }

    /// A runner's start or end of one-way messages or datagrams: the end is answered with its receipt.
    private static func flow(_ data: Data, state: inout State) -> MessageResponse {
        guard let flow = MessageFlow.decoded(from: data) else { return .consumed }
        if flow.action == MessageFlow.startDatagrams {
            state.datagrams = DatagramReceiver()
        } else if flow.action == "start" {
            state.sink = (0, nil)
        } else if let counted = state.datagrams {
            state.datagrams = nil
            return .reply(DatagramReceipt(counted).encoded())
        } else if let counted = state.sink {
            state.sink = nil
            let receipt = StreamReceipt(
                name: MessageFlow.receiptName,
                bytes: counted.bytes,
                firstMismatchOffset: counted.mismatch
            )
            return .reply(receipt.encoded())
        }
        return .consumed
    }
}
