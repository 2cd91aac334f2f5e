#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a benchmark could not be planned, connected, run or read.
public struct BenchError: Error, Hashable, CustomStringConvertible {
    private enum Code: Hashable {
        case invalidPlan
        case reflectorNotFound
        case notAReflector
        case noRawEchoPort
        case disconnected
        case socket
        case invalidDocument
        case interrupted
        case blocked
    }

    private let code: Code
    /// What happened, for a person to read.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The plan breaks a rule; `message` says which and how to fix it.
    public static func invalidPlan(_ message: String) -> BenchError {
        BenchError(.invalidPlan, message)
    }

    /// No reflector answered: none advertised, none by that name, or nothing listens at the address.
    public static func reflectorNotFound(_ message: String) -> BenchError {
        BenchError(.reflectorNotFound, message)
    }

    /// The peer connected but is not a reflector (it sent no hello, or one that cannot be read).
    public static func notAReflector(_ message: String) -> BenchError {
        BenchError(.notAReflector, message)
    }

    /// The raw-tcp test needs the reflector's raw echo port, and the reflector runs without one.
    public static let noRawEchoPort = BenchError(
        .noRawEchoPort,
        "the reflector has no raw echo server: start it with --raw-echo-port, or pass --raw-port"
    )

    /// The reflector went away during the run.
    public static func disconnected(_ message: String) -> BenchError {
        BenchError(.disconnected, message)
    }

    /// A POSIX socket call failed.
    ///
    /// - Parameters:
    ///   - call: the call, e.g. "connect 127.0.0.1:7000".
    ///   - errno: the error number it set.
    public static func socket(_ call: String, errno: Int32) -> BenchError {
        BenchError(.socket, "\(call) failed: \(String(cString: strerror(errno)))")
    }

    /// The run was stopped from outside (a signal) before its plan was done.
    public static func interrupted(_ message: String) -> BenchError {
        BenchError(.interrupted, message)
    }

    /// Nothing came back the way the test sends (UDP datagrams): something on the path drops them.
    public static func blocked(_ message: String) -> BenchError {
        BenchError(.blocked, message)
    }

    /// A file is not a result document this tool can read.
    public static func invalidDocument(_ path: String, _ why: String) -> BenchError {
        BenchError(.invalidDocument, "\(path): \(why)")
    }

    /// Whether two errors are of the same kind, whatever their messages.
    public func isSameKind(as other: BenchError) -> Bool {
        code == other.code
    }

    /// The message.
    public var description: String { message }
}
