import Synchronization

/// The channel a resource is being written on; it changes when the resource is opened again.
final class ResourceChannel: Sendable {
    private let value: Mutex<UInt32>

    init(_ number: UInt32) {
        value = Mutex(number)
    }

    /// The channel's number.
    var number: UInt32 {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
