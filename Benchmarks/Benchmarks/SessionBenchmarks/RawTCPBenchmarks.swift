import Benchmark
import BenchmarkSupport
import PeerConnectivityBench

#if canImport(Glibc)
    import Glibc
#endif

/// The baseline of the round trips, in the same run: 64-byte frames echoed by the tools' raw echo
/// server (`RawEchoServer`, in-process, a thread per connection, blocking sockets) over plain TCP with
/// `TCP_NODELAY`, one at a time; 1,000 per iteration. The session's round trip over this one is what the
/// library costs.
func registerRawTCPBenchmarks() {
    fixtureBenchmark(
        "RoundTrip64B.rawTCP",
        configuration: .roundTrips(mallocs: BenchmarkThresholds(absolute: [.p90: 100])),
        make: { try RawTCPPair() },
        stop: { $0.stop() }
    ) { benchmark, pair in
        let count = benchmark.scaledIterations.count
        benchmark.startMeasurement()
        try pair.roundTrips(size: 64, count: count)
        benchmark.stopMeasurement()
    }
}

/// A raw echo server on 127.0.0.1 and one connection to it.
final class RawTCPPair: @unchecked Sendable {
    private let server: RawEchoServer
    private let fd: Int32

    init() throws {
        server = try RawEchoServer(host: "127.0.0.1", port: 0) { _ in }
        server.start()
        fd = try TCPSocket.connect(host: "127.0.0.1", port: server.port)
        TCPSocket.noDelay(fd)
    }

    /// Sends `count` frames of `size` bytes, each after the echo of the one before.
    func roundTrips(size: Int, count: Int) throws {
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

    func stop() {
        close(fd)
        server.stop()
    }
}
