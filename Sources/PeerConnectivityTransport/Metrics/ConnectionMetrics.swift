import Metrics
import NIOCore
import PeerConnectivityCore

/// What one connection records: its opening, handshake, traffic and close (see ``PeerMetrics``).
///
/// Lives on the connection's event loop, in its ``ConnectionHandler``, whose every write goes through
/// ``sent(_:)``. The metric objects are made once, when the connection is made, from the
/// factory bootstrapped then; bytes and frames are counted in plain integers and added to them in
/// batches (once per read burst, once per flush), so the message path makes no metric call.
package final class ConnectionMetrics {
    /// "inbound" or "outbound" (see ``PeerMetrics/direction``).
    private let direction: String
    private let opened: Counter
    private let handshakes: Counter
    private let handshakeDuration: Timer
    private let bytesReceived: Counter
    private let bytesSent: Counter
    private let framesReceived: Counter
    private let framesSent: Counter
    private let linksResumed: Counter

    /// When the connection became active; nil before, and once the handshake has been timed.
    private var handshakeStart: NIODeadline?
    private var isOpen = false
    private var isClosed = false
    // Touched for every read and write, only on the connection's event loop, and no access to them stays open
    // across a call that could reach them (a flush hands the counter a copy): the runtime's check of each
    // access could never fire (see ConnectionHandler's state).
    @exclusivity(unchecked) private var pendingBytesReceived = 0
    @exclusivity(unchecked) private var pendingFramesReceived = 0
    @exclusivity(unchecked) private var pendingBytesSent = 0
    @exclusivity(unchecked) private var pendingFramesSent = 0
    /// Bytes of the frame being written still to come in later writes.
    @exclusivity(unchecked) private var remainingInFrame = 0
    /// A length prefix was cut across two writes: frames are no longer counted (bytes still are).
    @exclusivity(unchecked) private var lostTrack = false

    /// Makes the metric objects of a new connection; records nothing yet.
    ///
    /// - Parameter role: the connection's role: an invitee's connection is inbound, the others outbound.
    package init(role: ConnectionStateMachine.Role) {
        switch role {
        case .invitee: direction = PeerMetrics.inbound
        case .inviter, .resumer: direction = PeerMetrics.outbound
        }
        let byDirection = [(PeerMetrics.direction, direction)]
        opened = Counter(label: PeerMetrics.connectionsOpened, dimensions: byDirection)
        handshakes = Counter(label: PeerMetrics.handshakesCompleted, dimensions: byDirection)
        handshakeDuration = Timer(
            label: PeerMetrics.handshakeDuration,
            dimensions: byDirection,
            preferredDisplayUnit: .seconds
        )
        bytesReceived = Counter(label: PeerMetrics.bytesReceived)
        bytesSent = Counter(label: PeerMetrics.bytesSent)
        framesReceived = Counter(label: PeerMetrics.framesReceived)
        framesSent = Counter(label: PeerMetrics.framesSent)
        linksResumed = Counter(label: PeerMetrics.linksResumed)
    }

    /// The connection became active: counts it and starts the handshake's clock.
    package func connectionOpened() {
        guard !isOpen else { return }
        isOpen = true
        handshakeStart = .now()
        opened.increment()
    }

    /// The handshake ended established (an invitation or a resume): counts it and records its duration.
    package func handshakeCompleted() {
        guard let start = handshakeStart.take() else { return }
        handshakes.increment()
        handshakeDuration.recordNanoseconds(max(1, (NIODeadline.now() - start).nanoseconds))
    }

    /// A dropped link continues on this connection.
    package func linkResumed() {
        linksResumed.increment()
    }

    /// Bytes read from the channel, before decoding; counted, not yet recorded.
    ///
    /// - Parameter count: the bytes read.
    @inline(__always)
    package func received(bytes count: Int) {
        pendingBytesReceived &+= count
    }

    /// One frame decoded; counted, not yet recorded.
    @inline(__always)
    package func frameReceived() {
        pendingFramesReceived &+= 1
    }

    /// A buffer the connection handler writes: its bytes, and the frames whose length prefix is in it
    /// (a large DATA frame written as several buffers counts once). Counted, not yet recorded.
    package func sent(_ buffer: ByteBuffer) {
        pendingBytesSent &+= buffer.readableBytes
        var offset = buffer.readerIndex
        let end = buffer.writerIndex
        while !lostTrack, offset < end {
            if remainingInFrame == 0 {
                guard let length = buffer.getInteger(at: offset, as: UInt32.self) else {
                    lostTrack = true
                    break
                }
                pendingFramesSent &+= 1
                remainingInFrame = 4 + Int(length)
            }
            let taken = min(remainingInFrame, end - offset)
            remainingInFrame -= taken
            offset += taken
        }
    }

    /// Records what was read since the last call: after a burst of reads.
    package func flushReceived() {
        Self.flush(&pendingBytesReceived, into: bytesReceived)
        Self.flush(&pendingFramesReceived, into: framesReceived)
    }

    /// Records what was written since the last call: at a flush.
    package func flushSent() {
        Self.flush(&pendingBytesSent, into: bytesSent)
        Self.flush(&pendingFramesSent, into: framesSent)
    }

    /// Adds what `pending` counted to `counter`, if anything, and starts it again.
    private static func flush(_ pending: inout Int, into counter: Counter) {
        guard pending > 0 else { return }
        counter.increment(by: pending)
        pending = 0
    }

    /// This side is closing: when it says DECLINE, counts a refused invitation (or resume) by reason.
    ///
    /// - Parameters:
    ///   - reason: why it closes.
    ///   - frame: the frame it sends last, if any.
    package func closing(_ reason: DisconnectReason, sending frame: Frame?) {
        guard case .decline? = frame else { return }
        Counter(
            label: PeerMetrics.invitationsRefused,
            dimensions: [(PeerMetrics.reason, PeerMetrics.reasonName(reason))]
        )
        .increment()
    }

    /// The connection closed: records what is still counted, and the close by reason (once, and only
    /// for a connection that became active).
    ///
    /// - Parameter reason: why it closed.
    package func connectionClosed(_ reason: DisconnectReason) {
        flushReceived()
        flushSent()
        guard isOpen, !isClosed else { return }
        isClosed = true
        Counter(
            label: PeerMetrics.connectionsClosed,
            dimensions: [(PeerMetrics.reason, PeerMetrics.reasonName(reason))]
        )
        .increment()
    }
}
