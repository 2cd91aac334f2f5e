import Foundation
import PeerConnectivity
import Testing

/// Fewer messages than a batch are acknowledged by the receiver's one-shot timer on its event loop.
@Suite("Acknowledgement timer", .timeLimit(.minutes(1 * slowdown)))
struct AcknowledgementTimerTests {
    @Test("one message, far less than a batch, is acknowledged soon after it arrives; so is the next")
    func loneMessageAcknowledged() async throws {
        let configuration = ReconnectionTests.configuration()
        let pair = try await SessionPair.connect(host: configuration, client: configuration)
        defer { pair.acceptor.cancel() }
        for round in 1...2 {
            try await pair.client.send(ReconnectionTests.numbered(round), toPeers: [pair.host.peer])
            // The ACK is due 100 ms after the message; the bound is loose so that a loaded machine passes.
            let deadline = ContinuousClock.now + waitLimit
            while pair.client.unconfirmedMessageCount(to: pair.host.peer) != 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(pair.client.unconfirmedMessageCount(to: pair.host.peer) == 0, "round \(round)")
        }
        await pair.client.disconnect()
        await pair.host.disconnect()
    }
}
