import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The raw-tcp test's driver: length-prefixed frames over one blocking TCP socket, a sender thread per
/// phase and one receiver thread for the connection, so that the baseline has no event loop and no
/// task switch in its path.
final class RawEchoDriver: EchoDriver {
    private let fd: Int32
    private let pattern: PayloadPattern
    private let phase = CurrentPhase()

    /// Takes a connected socket and starts its receiver thread, which closes it at the end.
    init(fd: Int32, pattern: PayloadPattern) {
        self.fd = fd
        self.pattern = pattern
        let thread = Thread { [self] in receive() }
        thread.start()
    }

    func run(_ controller: LoadController, size: Int) async throws {
        try await phase.during(controller, size: size, onThread: { [self] in try send(controller, size: size) })
    }

    func close() async {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    private func send(_ controller: LoadController, size: Int) throws {
        let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: TCPSocket.frameHeaderBytes + size, alignment: 8)
        defer { frame.deallocate() }
        TCPSocket.writeFrameLength(size, into: frame)
        let payload = UnsafeMutableRawBufferPointer(rebasing: frame[TCPSocket.frameHeaderBytes...])
        try controller.sendBlocking { sequence in
            pattern.write(sequence: sequence, into: payload)
            guard TCPSocket.writeAll(fd, UnsafeRawBufferPointer(frame)) else {
                let error = BenchError.disconnected("the raw echo connection failed while sending")
                controller.fail(error)
                throw error
            }
        }
    }

    private func receive() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(pattern.maximumSize, 1), alignment: 8)
        defer {
            buffer.deallocate()
            Glibc.close(fd)
        }
        while let length = TCPSocket.readFrameLength(fd) {
            guard length <= buffer.count else {
                phase.current?.controller.fail(
                    BenchError.disconnected("the raw echo server sent a \(length)-byte frame, longer than any sent")
                )
                return
            }
            let body = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length])
            guard TCPSocket.readExactly(fd, body) else { break }
            let now = MonotonicClock.now()
            if let current = phase.current {
                let inspection = pattern.inspect(UnsafeRawBufferPointer(body), expectedSize: current.size)
                current.controller.received(inspection, at: now)
            }
        }
        phase.current?.controller.fail(BenchError.disconnected("the raw echo server closed the connection"))
    }
}
