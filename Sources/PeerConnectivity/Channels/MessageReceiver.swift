import Foundation
import NIOCore
import NIOFoundationCompat
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The receiving end of one large message (a channel of kind message): its bytes, gathered into one
/// buffer of the size its OPEN announced, handed to the application whole at END.
///
/// Memory is bounded: the buffer never grows past the size announced (the ``ChannelTable`` closes the
/// connection on a byte more), and that size is at most the limit this side announced (a larger OPEN is
/// refused before anything arrives). What is in flight is bounded by the channel's window, given back as
/// chunks are copied in, without waiting for the application: the application's lag holds up reading at
/// the socket instead (the session's receive backpressure), once the message is delivered.
final class MessageReceiver: IncomingTransfer, Sendable {
    let peer: PeerID
    var name: String { "message" }
    var endsAtEnd: Bool { true }
    private let connection: Connection
    private let channel: UInt32
    private let size: Int
    /// The bytes so far, and those not yet credited back to the writer.
    private let state: Mutex<(bytes: ByteBuffer?, credit: CreditBatch)>

    /// Makes the receiving end and widens the channel's window to `window` bytes.
    ///
    /// - Parameters:
    ///   - size: the message's size, from its OPEN (checked against this side's limit already).
    ///   - window: the channel's flow-control window.
    init(peer: PeerID, connection: Connection, channel: UInt32, size: Int, window: Int) {
        self.peer = peer
        self.connection = connection
        self.channel = channel
        self.size = size
        self.state = Mutex((nil, CreditBatch(size: window / 4)))
        if window > WireProtocol.initialChannelWindow {
            connection.grantCredit(window - WireProtocol.initialChannelWindow, on: channel)
        }
    }

    func received(_ bytes: ByteBuffer) {
        let grant = state.withLock { state -> Int in
            if state.bytes == nil {
                // The whole message at once: it is never copied again as it grows.
                state.bytes = connection.allocator.buffer(capacity: size)
            }
            state.bytes!.writeImmutableBuffer(bytes)
            return state.credit.took(bytes.readableBytes)
        }
        if grant > 0 { connection.grantCredit(grant, on: channel) }
    }

    /// The message, whole, once END has arrived (the ``ChannelTable`` checked that the bytes add up to
    /// its size); the receiver lets go of it.
    func takeMessage() -> Data {
        let bytes = state.withLock { state -> ByteBuffer? in
            defer { state.bytes = nil }
            return state.bytes
        }
        guard let bytes else { return Data() }
        return Data(buffer: bytes, byteTransferStrategy: .noCopy)
    }

    func ended(digest: [UInt8]?) {}

    /// The writer cancelled it or the connection closed: what arrived is dropped, nothing is delivered.
    func failed(_ error: TransferError) {
        state.withLock { $0.bytes = nil }
    }
}
