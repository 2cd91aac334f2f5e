import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

#if canImport(Glibc)
    import Glibc

    /// A plaintext connection the application disconnects lingers after its GOODBYE: it shuts down only
    /// its output and reads on, dropping what comes, until the peer closes. A connection closed at once
    /// with input unread is reset by the kernel, which, over a real network, drops what it had not sent
    /// yet, the GOODBYE with it; on loopback everything is sent at once, so what these tests see is the
    /// reset itself: the peer's writes after the GOODBYE meet one, or do not.
    @Suite("Closing: a GOODBYE survives what the peer still sends")
    struct LingeringCloseTests {
        @Test(
            "after GOODBYE the session reads on, half closed: the peer's late writes meet no reset, and its close ends it"
        )
        func lingersUntilThePeerCloses() async throws {
            let joined = try await RawJoinedSession("linger", configuration: .patient)
            defer { Task { await joined.stop() } }
            let disconnected = Task { await joined.session.disconnect() }
            #expect(await joined.socket.readFrame(ofType: 0x12) != nil, "GOODBYE arrived")
            let fd = joined.socket.fd
            let late = HandFrames.data([UInt8](repeating: 0x4C, count: 64 << 10))
            // What the peer sees: the end of the stream after GOODBYE, then its own writes taken, then the
            // end of the stream again, not a reset. The pauses let a reset come back before the next write
            // (on loopback it comes at once); the session lingers 5 s, far longer than these 150 ms, so a
            // loaded machine only makes a reset more likely to be seen, never a lingering session fail.
            let (endOfStream, writeErrors, lastRead) = await onOwnThread { () -> (Bool, [Int32], Int32) in
                var byte: UInt8 = 0
                let end = read(fd, &byte, 1) == 0
                var errors: [Int32] = []
                for _ in 0..<3 {
                    let sent = late.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
                    if sent < 0 { errors.append(errno) }
                    usleep(50_000)
                }
                let last = read(fd, &byte, 1)
                return (end, errors, last < 0 ? errno : 0)
            }
            #expect(endOfStream, "the session shut its output after GOODBYE")
            #expect(writeErrors.isEmpty, "the peer's writes after GOODBYE were refused: errno \(writeErrors)")
            #expect(lastRead == 0, "the peer's read after its writes failed with errno \(lastRead) (a reset)")

            // The peer closes its side: the session's connection ends, and `disconnect` returns.
            shutdown(fd, Int32(SHUT_WR))
            await disconnected.value
            #expect(joined.session.connectedPeers.isEmpty)
        }
    }
#endif
