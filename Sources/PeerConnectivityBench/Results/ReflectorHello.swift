import Foundation

/// The first message a reflector sends each runner once the session is connected: who it is, on
/// what host, and where its raw echo server listens. The runner waits for it before sending.
public struct ReflectorHello: PrefixedMessage, Hashable, Sendable {
    /// The bytes before the JSON, so that a hello is never mistaken for an echo.
    public static let prefix = Data("pc-bench-hello\n".utf8)

    /// The hello's format version.
    public var schemaVersion: Int
    /// The reflector's display name.
    public var name: String
    /// The reflector's host.
    public var host: HostInfo
    /// The raw echo server's TCP port, nil when it runs none.
    public var rawEchoPort: Int?
    /// The flow-control window, in bytes, of the streams the reflector reads from this runner (nil from
    /// a reflector that does not say).
    public var streamWindow: Int?
    /// The bound on the unsent bytes of this runner's connection at the reflector (`TCP_NOTSENT_LOWAT`), as
    /// the runner asked; nil when none was set.
    public var notSentLowWatermark: Int?
    /// The congestion control the reflector's side of this runner's connection runs (its kernel's default,
    /// or the one the runner asked for with `-C`); nil where its system does not tell.
    public var congestionControl: String?

    /// Makes a hello.
    ///
    /// - Parameters:
    ///   - name: the reflector's display name.
    ///   - host: its host.
    ///   - rawEchoPort: its raw echo server's port.
    public init(name: String, host: HostInfo, rawEchoPort: Int?) {
        schemaVersion = 1
        self.name = name
        self.host = host
        self.rawEchoPort = rawEchoPort
    }

    /// Reads a hello message.
    ///
    /// - Parameter message: the first message from the reflector.
    /// - Throws: ``BenchError/notAReflector(_:)`` when it is not a hello.
    public init(decoding message: Data) throws(BenchError) {
        guard message.begins(with: Self.prefix) else {
            throw .notAReflector("the peer's first message is not a reflector hello (\(message.count) bytes)")
        }
        do {
            self = try JSONDecoder().decode(Self.self, from: message.dropFirst(Self.prefix.count))
        } catch {
            throw .notAReflector("the reflector's hello cannot be read: \(error)")
        }
    }
}
