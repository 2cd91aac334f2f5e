/// A frame that waits in a ``BulkQueue``: all the queue needs to know of it is its length on the wire.
package protocol QueuedFrame {
    /// The frame's length on the wire.
    var readableBytes: Int { get }
}
