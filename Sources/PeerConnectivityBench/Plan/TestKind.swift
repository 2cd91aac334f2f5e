/// What a run measures. Each kind is echoed by the reflector and accounted message by message.
public enum TestKind: String, Codable, CaseIterable, Sendable {
    /// Data messages through a PeerConnectivity ``PeerConnectivity/Session``, echoed by the reflector.
    case data
    /// The same plan over a plain TCP connection to the reflector's raw echo server: the baseline.
    case rawTCP = "raw-tcp"
    /// Resources (files) sent with `sendResource`: not available until the library has resources.
    case resource
    /// Byte streams opened with `startStream`: not available until the library has streams.
    case stream

    /// Whether this build can run the test.
    public var isAvailable: Bool {
        switch self {
        case .data, .rawTCP: return true
        case .resource, .stream: return false
        }
    }

    /// Why the test cannot run yet, or nil when it can.
    public var unavailableReason: String? {
        switch self {
        case .data, .rawTCP: return nil
        case .resource: return "--test resource is not available yet: the library has no resources (sendResource)"
        case .stream: return "--test stream is not available yet: the library has no streams (startStream)"
        }
    }
}
