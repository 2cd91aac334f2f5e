import Foundation
import PeerConnectivity
import Testing

/// What peers can write into an application's log: nothing raw, and not without bound.
@Suite("Logs under hostile peers", .serialized, .timeLimit(.minutes(1 * slowdown)))
struct LogSafetyTests {
    /// Whether `text` holds a control character (other than none at all), raw.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }
    }

    @Test("display names, contexts and names with newlines, ESC and NUL are escaped in every log record")
    func escaped() async throws {
        let logs = LogCapture()
        let advertiser = try await loopbackAdvertiser("logged", encryption: .none) {
            $0.logger = logs.logger(label: "advertiser")
            $0.maximumPendingInvitations = 1
        }
        var configuration = Session.Configuration.patient
        configuration.logger = logs.logger(label: "session")
        configuration.maximumResourceSize = 10
        let host = Session(peer: advertiser.peer, encryptionPreference: .none, configuration: configuration)
        // Invitations wait unanswered: past the first they are declined as busy, logged with the inviter.
        for name in ["a\nforged line", "b\u{1B}[2J\u{1B}[31mred", "c\u{0}\r\nforged"] {
            let socket = try await RawSocket(port: advertiser.port!)
            socket.send(HandFrames.hello(name: name) + HandFrames.invite(context: Array("ctx\nforged".utf8)))
            // A malformed frame after it: a protocol violation, logged with the peer.
            socket.send(HandFrames.frame(type: 0x7F, body: Array("\n\u{1B}".utf8)))
            _ = await socket.readUntilClosed()
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(host.connectedPeers.isEmpty)
        let records = logs.records
        #expect(!records.isEmpty)
        for record in records {
            #expect(
                !Self.hasControlCharacter(record.message),
                "raw control character in \(record.message.debugDescription)"
            )
            for (key, value) in record.metadata {
                #expect(!Self.hasControlCharacter(value), "raw control character in \(key)=\(value.debugDescription)")
            }
        }
        #expect(records.contains { $0.line.contains("a\\nforged line") }, "the names are there, escaped")
    }

    @Test("warnings about peers are rate-limited, and the next one says how many were left out")
    func rateLimited() async throws {
        let logs = LogCapture()
        // The warning budget reads a clock that stands still until the test moves it: what it earns back does not
        // depend on how long the 80 connections take on this machine.
        let clock = ManualClock()
        let advertiser = try await loopbackAdvertiser("flooded-log", encryption: .none) {
            $0.logger = logs.logger(label: "advertiser")
            $0.uptimeNanoseconds = { clock.uptimeNanoseconds }
        }
        func violate() async throws {
            let socket = try await RawSocket(port: advertiser.port!)
            socket.send(HandFrames.hello() + HandFrames.data(Array("too early".utf8)))
            _ = await socket.readUntilClosed()
        }
        for _ in 0..<80 { try await violate() }
        let warnings = { @Sendable in logs.records.filter { $0.level == .warning } }
        // The burst of 20, nothing earned back.
        try await eventually { warnings().count >= 20 }
        #expect(warnings().count == 20, "\(warnings().count) warnings for 80 connections")
        // A second later, one more, which says how many were left out.
        clock.advance(by: .seconds(1))
        try await violate()
        try await eventually { warnings().count >= 21 }
        #expect(warnings().count == 21, "\(warnings().count) warnings")
        #expect(
            warnings().last?.message.contains("similar warnings left out") == true,
            "\(warnings().last?.message ?? "")"
        )
    }
}
