import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The baseline: blocking POSIX sockets on loopback, no framing library, TCP_NODELAY on both ends.
public enum RawTCP {
    /// A socket call that failed, with its errno.
    public struct SocketError: Error, CustomStringConvertible {
        public var call: String
        public var errno: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(errno)))" }
    }

    /// A listening socket on 127.0.0.1 and an ephemeral port.
    public static func listen() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else { throw SocketError(call: "bind/listen", errno: errno) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A connected socket to 127.0.0.1:`port`, TCP_NODELAY set.
    public static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw SocketError(call: "connect", errno: errno) }
        noDelay(fd)
        return fd
    }

    /// Sets TCP_NODELAY.
    public static func noDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes the whole buffer; stops early if the socket fails.
    public static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }

    /// Reads exactly `buffer.count` bytes; false at EOF or on an error.
    public static func readExactly(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let count = read(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if count <= 0 { return false }
            offset += count
        }
        return true
    }

    /// Serves one connection on a thread: echoes `echoSize`-byte messages (when > 0), or reads
    /// `sinkBytes` bytes and answers one byte.
    public static func serve(listener: Int32, echoSize: Int, sinkBytes: Int) {
        let thread = Thread {
            let fd = accept(listener, nil, nil)
            noDelay(fd)
            defer { close(fd) }
            if echoSize > 0 {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: echoSize, alignment: 8)
                defer { buffer.deallocate() }
                while readExactly(fd, buffer) { writeAll(fd, UnsafeRawBufferPointer(buffer)) }
            } else {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
                defer { buffer.deallocate() }
                var total = 0
                while total < sinkBytes {
                    let count = read(fd, buffer.baseAddress!, min(buffer.count, sinkBytes - total))
                    if count <= 0 { return }
                    total += count
                }
                writeAll(fd, UnsafeRawBufferPointer(rebasing: buffer[0..<1]))
            }
        }
        thread.start()
    }

    /// Round trips of `size`-byte messages, in nanoseconds, after `warmup` unmeasured ones.
    public static func roundTrips(size: Int, count: Int, warmup: Int) throws -> [UInt64] {
        let (listener, port) = try listen()
        defer { close(listener) }
        serve(listener: listener, echoSize: size, sinkBytes: 0)
        let fd = try connect(port: port)
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0x42)
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for index in 0..<(warmup + count) {
            let start = DispatchTime.now().uptimeNanoseconds
            writeAll(fd, UnsafeRawBufferPointer(buffer))
            guard readExactly(fd, buffer) else { break }
            if index >= warmup { samples.append(DispatchTime.now().uptimeNanoseconds - start) }
        }
        return samples
    }

    /// Seconds to push `count` messages of `size` bytes one way, each with its own write, until acknowledged.
    public static func oneWay(size: Int, count: Int) throws -> Double {
        let (listener, port) = try listen()
        defer { close(listener) }
        serve(listener: listener, echoSize: 0, sinkBytes: size * count)
        let fd = try connect(port: port)
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0x42)
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count { writeAll(fd, UnsafeRawBufferPointer(buffer)) }
        var ack: UInt8 = 0
        _ = withUnsafeMutableBytes(of: &ack) { readExactly(fd, $0) }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
