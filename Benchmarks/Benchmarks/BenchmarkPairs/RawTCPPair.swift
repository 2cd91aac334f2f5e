import PeerConnectivityBench

#if canImport(Glibc)
    import Glibc
#endif

/// A raw echo server on 127.0.0.1 and one connection to it.
package final class RawTCPPair: @unchecked Sendable {
    private let server: RawEchoServer
    private let fd: Int32

    /// Starts the echo server and connects to it.
    ///
    /// - Throws: when either fails.
    package init() throws {
        server = try RawEchoServer(host: "127.0.0.1", port: 0) { _ in }
        server.start()
        fd = try TCPSocket.connect(host: "127.0.0.1", port: server.port)
        TCPSocket.noDelay(fd)
    }

    /// Sends `count` frames of `size` bytes, each after the echo of the one before.
    package func roundTrips(size: Int, count: Int) throws {
        let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: TCPSocket.frameHeaderBytes + size, alignment: 8)
        defer { frame.deallocate() }
        frame.initializeMemory(as: UInt8.self, repeating: 0x45)
        TCPSocket.writeFrameLength(size, into: frame)
        for _ in 0..<count {
            guard TCPSocket.writeAll(fd, UnsafeRawBufferPointer(frame)), TCPSocket.readExactly(fd, frame) else {
                throw BenchmarkFailure("the raw echo connection ended")
            }
        }
    }

    /// Closes the connection and stops the server.
    package func stop() {
        close(fd)
        server.stop()
    }
}
