#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Blocking POSIX TCP sockets, `TCP_NODELAY` on every connection: the raw baseline's whole machinery,
/// with no framing library and no event loop. Raw messages are framed as a 4-byte big-endian length
/// and the bytes.
public enum TCPSocket {
    /// The bytes of a raw frame's length prefix.
    public static let frameHeaderBytes = 4

    /// Opens a listening socket.
    ///
    /// - Parameters:
    ///   - host: the IPv4 address to bind: "0.0.0.0" (every interface) or "127.0.0.1".
    ///   - port: the port, 0 for an ephemeral one.
    /// - Returns: the socket and the port it is bound to.
    /// - Throws: ``BenchError/socket(_:errno:)``.
    public static func listen(host: String, port: Int) throws(BenchError) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .socket("socket", errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw .socket("inet_pton \(host)", errno: EINVAL)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let error = errno
            close(fd)
            throw .socket("bind/listen \(host):\(port)", errno: error)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Connects to `host:port` (a name is resolved with getaddrinfo, so `name.local` works with nss-mdns).
    ///
    /// - Parameters:
    ///   - host: a host name or address.
    ///   - port: the TCP port.
    /// - Returns: the connected socket, with `TCP_NODELAY`.
    /// - Throws: ``BenchError/socket(_:errno:)`` when no address of the host accepts.
    public static func connect(host: String, port: Int) throws(BenchError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw .socket("getaddrinfo \(host) (\(String(cString: gai_strerror(status))))", errno: EHOSTUNREACH)
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            if Glibc.connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                noDelay(fd)
                return fd
            }
            lastError = errno
            close(fd)
        }
        throw .socket("connect \(host):\(port)", errno: lastError)
    }

    /// Turns Nagle's algorithm off, so small messages leave at once.
    ///
    /// - Parameter fd: a connected socket.
    public static func noDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes all of `buffer` (without SIGPIPE when the peer has gone).
    ///
    /// - Parameters:
    ///   - fd: a connected socket.
    ///   - buffer: the bytes.
    /// - Returns: false when the connection failed first.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let written = send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Reads exactly `buffer.count` bytes.
    ///
    /// - Parameters:
    ///   - fd: a connected socket.
    ///   - buffer: where the bytes go.
    /// - Returns: false at end of stream or on error.
    public static func readExactly(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let count = read(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return false }
            offset += count
        }
        return true
    }

    /// Reads one raw frame's length prefix.
    ///
    /// - Parameter fd: a connected socket.
    /// - Returns: the length, or nil at end of stream or on error.
    public static func readFrameLength(_ fd: Int32) -> Int? {
        var header: UInt32 = 0
        guard withUnsafeMutableBytes(of: &header, { readExactly(fd, $0) }) else { return nil }
        return Int(UInt32(bigEndian: header))
    }

    /// Writes a raw frame's length prefix into the first ``frameHeaderBytes`` of `buffer`.
    ///
    /// - Parameters:
    ///   - length: the payload's length.
    ///   - buffer: the frame.
    public static func writeFrameLength(_ length: Int, into buffer: UnsafeMutableRawBufferPointer) {
        withUnsafeBytes(of: UInt32(length).bigEndian) { header in
            buffer.copyMemory(from: header)
        }
    }
}
