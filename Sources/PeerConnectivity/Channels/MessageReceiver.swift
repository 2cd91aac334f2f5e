import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The receiving end of a large message (a channel of kind message): gathers its chunks into one
/// buffer, and hands the message over when END arrives.
///
/// Memory is bounded: the buffer never grows past the size announced (the ``ChannelTable`` closes the
/// connection on a byte more), and that size is at most the limit this side announced (a larger OPEN is
/// refused before anything arrives) and was counted in the session's and the process's budget for large
/// messages (``LargeMessageMemory``) before the receiver was made; the count is given back when the message
/// is delivered or dropped. The buffer is mapped for the message alone (``MappedMessageBuffer``), so that its
/// pages go back to the kernel when it is let go. What is in flight is bounded by the channel's window,
/// given back as chunks are copied in, without waiting for the application: the application's lag holds up
/// reading at the socket instead (the session's receive backpressure), once the message is delivered.
final class MessageReceiver: IncomingTransfer, Sendable {
    private struct State {
        /// The bytes so far; nil once the message was delivered or dropped.
        var bytes: MappedMessageBuffer?
        /// Bytes not yet credited back to the writer.
        var credit: CreditBatch
    }

    let peer: PeerID
    var name: String { "message" }
    var endsAtEnd: Bool { true }
    private let connection: Connection
    private let channel: UInt32
    private let reservation: LargeMessageMemory.Reservation
    private let state: Mutex<State>

    /// Makes the receiving end and widens the channel's window to `window` bytes.
    ///
    /// - Parameters:
    ///   - buffer: where the message is gathered, mapped for its announced size (checked against this side's
    ///     limit already).
    ///   - window: the channel's flow-control window.
    ///   - reservation: the message's bytes in the budget; given back when it ends.
    init(
        peer: PeerID,
        connection: Connection,
        channel: UInt32,
        buffer: sending MappedMessageBuffer,
        window: Int,
        reservation: LargeMessageMemory.Reservation
    ) {
        self.peer = peer
        self.connection = connection
        self.channel = channel
        self.reservation = reservation
        self.state = Mutex(State(bytes: buffer, credit: CreditBatch(size: window / 4)))
        if window > WireProtocol.initialChannelWindow {
            connection.grantCredit(window - WireProtocol.initialChannelWindow, on: channel)
        }
    }

    func received(_ bytes: ByteBuffer) {
        let grant = state.withLock { state -> Int in
            guard let buffer = state.bytes else { return 0 }
            buffer.append(bytes)
            return state.credit.took(bytes.readableBytes)
        }
        if grant > 0 { connection.grantCredit(grant, on: channel) }
    }

    /// The message, whole, once END has arrived (the ``ChannelTable`` checked that the bytes add up to
    /// its size); the receiver lets go of it, and of its place in the budget.
    func takeMessage() -> Data {
        let bytes = takeBuffer()
        reservation.release()
        return bytes?.takeData() ?? Data()
    }

    func ended(digest: [UInt8]?) {}

    /// The writer cancelled it or the connection closed: what arrived is dropped (its memory unmapped),
    /// nothing is delivered.
    func failed(_ error: TransferError) {
        let bytes = takeBuffer()
        reservation.release()
        withExtendedLifetime(bytes) {}  // unmapped here, outside the lock
    }

    private func takeBuffer() -> MappedMessageBuffer? {
        state.withLock { state -> MappedMessageBuffer? in
            defer { state.bytes = nil }
            return state.bytes
        }
    }
}
