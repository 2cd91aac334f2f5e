import PeerConnectivityCore

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
    ///   - family: the address family to try (as `test-runner -4`/`-6`); the other's addresses are skipped.
    ///   - localAddress: the local address to bind before connecting (as `test-runner -B`); nil: the system's.
    /// - Returns: the connected socket, with `TCP_NODELAY`.
    /// - Throws: ``BenchError/socket(_:errno:)`` when no address of the host accepts.
    public static func connect(
        host: String,
        port: Int,
        family: AddressFamily = .any,
        localAddress: String? = nil
    ) throws(BenchError) -> Int32 {
        let local = try localAddress.map { text throws(BenchError) in try numeric(text) }
        var hints = addrinfo()
        hints.ai_family = local.map { $0.pointee.ai_family } ?? family.socketFamily
        defer { local.map { freeaddrinfo($0) } }
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
            if let local, bind(fd, local.pointee.ai_addr, local.pointee.ai_addrlen) != 0 {
                lastError = errno
                close(fd)
                throw .socket("bind \(localAddress ?? "")", errno: lastError)
            }
            if Glibc.connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                noDelay(fd)
                return fd
            }
            lastError = errno
            close(fd)
        }
        throw .socket("connect \(host):\(port)", errno: lastError)
    }

    /// The addresses of `host` of `family`, as text, in getaddrinfo's order.
    ///
    /// - Parameters:
    ///   - host: a host name or address.
    ///   - family: the family wanted.
    /// - Returns: numeric addresses ("192.0.2.7", "2001:db8::7").
    /// - Throws: ``BenchError/socket(_:errno:)`` when the host has no address of the family.
    public static func addresses(of host: String, family: AddressFamily) throws(BenchError) -> [String] {
        var hints = addrinfo()
        hints.ai_family = family.socketFamily
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            let why = String(cString: gai_strerror(status))
            throw .socket("getaddrinfo \(host), \(family) (\(why))", errno: EHOSTUNREACH)
        }
        defer { freeaddrinfo(list) }
        var found: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                current.pointee.ai_addr,
                current.pointee.ai_addrlen,
                &text,
                socklen_t(text.count),
                nil,
                0,
                NI_NUMERICHOST
            ) == 0 {
                found.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return found
    }

    /// A numeric address (port 0) as getaddrinfo gives it; free it with `freeaddrinfo`.
    private static func numeric(_ address: String) throws(BenchError) -> UnsafeMutablePointer<addrinfo> {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(address, "0", &hints, &result) == 0, let result else {
            throw .socket("\(address) is not an IP address to bind to", errno: EINVAL)
        }
        return result
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

extension AddressFamily {
    /// The getaddrinfo family: `AF_UNSPEC`, `AF_INET` or `AF_INET6`.
    fileprivate var socketFamily: Int32 {
        switch self {
        case .any: AF_UNSPEC
        case .ipv4: AF_INET
        case .ipv6: AF_INET6
        }
    }
}
