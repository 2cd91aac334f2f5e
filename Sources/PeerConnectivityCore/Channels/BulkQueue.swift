import NIOCore

/// Encoded channel frames (OPEN, BLOCK, CHUNK, END) waiting for the socket, one queue per channel, taken
/// round-robin so that every channel with something to send moves at the same pace.
///
/// Data messages and control frames do not wait here: the connection writes them before any of these.
package struct BulkQueue<Queued: QueuedFrame> {
    private var queues: [UInt32: CircularBuffer<Queued>] = [:]
    /// Channels with frames queued, in the order they get their next turn.
    private var turns = CircularBuffer<UInt32>()

    /// An empty queue.
    package init() {}

    /// Whether nothing is queued.
    package var isEmpty: Bool { turns.isEmpty }

    /// Queues `frame` after the frames already queued on `channel`.
    ///
    /// - Parameters:
    ///   - frame: the frame.
    ///   - channel: its channel.
    package mutating func append(_ frame: Queued, on channel: UInt32) {
        if queues[channel, default: []].isEmpty {
            turns.append(channel)
        }
        queues[channel, default: []].append(frame)
    }

    /// Takes the next frame: the first of the channel whose turn it is.
    ///
    /// - Returns: the frame and its channel; `nil` when nothing is queued.
    package mutating func popNext() -> (channel: UInt32, frame: Queued)? {
        guard let channel = turns.popFirst() else { return nil }
        let frame = queues[channel]!.removeFirst()
        if queues[channel]!.isEmpty {
            queues[channel] = nil
        } else {
            turns.append(channel)
        }
        return (channel, frame)
    }

    /// Drops every frame queued on `channel`.
    ///
    /// - Parameter channel: the channel.
    /// - Returns: the bytes dropped.
    @discardableResult
    package mutating func removeAll(on channel: UInt32) -> Int {
        guard let dropped = queues.removeValue(forKey: channel) else { return 0 }
        turns.removeAll { $0 == channel }
        return dropped.reduce(0) { $0 + $1.readableBytes }
    }

    /// Drops everything.
    package mutating func removeAll() {
        queues = [:]
        turns.removeAll()
    }
}
