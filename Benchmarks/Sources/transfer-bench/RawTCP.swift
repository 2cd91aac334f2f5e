import Foundation
import PeerConnectivityBench

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The baseline: blocking POSIX sockets on loopback (``TCPSocket``), no framing library, TCP_NODELAY on
/// both ends.
public enum RawTCP {
    /// Serves one connection on a thread: echoes `echoSize`-byte messages (when > 0), or reads
    /// `sinkBytes` bytes and answers one byte.
    public static func serve(listener: Int32, echoSize: Int, sinkBytes: Int) {
        let thread = Thread {
            let fd = accept(listener, nil, nil)
            TCPSocket.noDelay(fd)
            defer { close(fd) }
            if echoSize > 0 {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: echoSize, alignment: 8)
                defer { buffer.deallocate() }
                while TCPSocket.readExactly(fd, buffer) { TCPSocket.writeAll(fd, UnsafeRawBufferPointer(buffer)) }
            } else {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
                defer { buffer.deallocate() }
                var total = 0
                while total < sinkBytes {
                    let count = read(fd, buffer.baseAddress!, min(buffer.count, sinkBytes - total))
                    if count <= 0 { return }
                    total += count
                }
                TCPSocket.writeAll(fd, UnsafeRawBufferPointer(rebasing: buffer[0..<1]))
            }
        }
        thread.start()
    }

    /// Round trips of `size`-byte messages, in nanoseconds, after `warmup` unmeasured ones.
    public static func roundTrips(size: Int, count: Int, warmup: Int) throws -> [UInt64] {
        let (listener, port) = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { close(listener) }
        serve(listener: listener, echoSize: size, sinkBytes: 0)
        let fd = try TCPSocket.connect(host: "127.0.0.1", port: port)
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0x42)
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for index in 0..<(warmup + count) {
            let start = DispatchTime.now().uptimeNanoseconds
            TCPSocket.writeAll(fd, UnsafeRawBufferPointer(buffer))
            guard TCPSocket.readExactly(fd, buffer) else { break }
            if index >= warmup { samples.append(DispatchTime.now().uptimeNanoseconds - start) }
        }
        return samples
    }

    /// Seconds to push `count` messages of `size` bytes one way, each with its own write, until acknowledged.
    public static func oneWay(size: Int, count: Int) throws -> Double {
        let (listener, port) = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { close(listener) }
        serve(listener: listener, echoSize: 0, sinkBytes: size * count)
        let fd = try TCPSocket.connect(host: "127.0.0.1", port: port)
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0x42)
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count { TCPSocket.writeAll(fd, UnsafeRawBufferPointer(buffer)) }
        var ack: UInt8 = 0
        _ = withUnsafeMutableBytes(of: &ack) { TCPSocket.readExactly(fd, $0) }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
