#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on which every connection is refused, over IPv4 and IPv6, for as long as this lives: a socket
/// bound to it on `[::]` that never listens. A listener's port closed again is not one: another test in
/// parallel may bind it or dial from it meanwhile, and then a dial meant to be refused connects. Without
/// `SO_REUSEADDR` on this socket, nothing else on the machine can bind the port while it is held.
final class RefusingPort: Sendable {
    /// The port.
    let port: Int
    private let fd: Int32

    /// Binds a new socket to a port the system picks.
    init() throws {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RefusingPortError(call: "socket", code: errno) }
        var no: Int32 = 0
        setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &no, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_any
        address.sin6_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            let code = errno
            close(fd)
            throw RefusingPortError(call: bound == 0 ? "getsockname" : "bind", code: code)
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin6_port))
    }

    deinit {
        close(fd)
    }
}

/// Why a ``RefusingPort`` could not be made.
struct RefusingPortError: Error, CustomStringConvertible {
    let call: String
    let code: Int32
    var description: String { "\(call) failed: errno \(code)" }
}
