import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures
private typealias Machine = ConnectionStateMachine

/// `DisconnectReason`: equality, descriptions and wire bytes.
@Suite("DisconnectReason")
struct DisconnectReasonTests {
    // MARK: - Reasons

    @Test("DisconnectReason equality ignores the detail; the description includes it")
    func reasonEquality() {
        let detailed = DisconnectReason.protocolViolation.with(detail: "bad frame")
        #expect(detailed == .protocolViolation)
        #expect(detailed.hashValue == DisconnectReason.protocolViolation.hashValue)
        #expect(detailed != .peerDisconnected)
        #expect(detailed.detail == "bad frame")
        #expect(detailed.description == "protocol violation: bad frame")
        #expect(DisconnectReason.protocolViolation.description == "protocol violation")
        #expect(Machine.Action.close(detailed, sending: nil) == .close(.protocolViolation, sending: nil))
    }

    @Test("every reason survives its wire byte")
    func reasonWireValues() {
        let all: [DisconnectReason] = [
            .localDisconnect, .peerDisconnected, .declined, .timedOut, .connectionLost, .livenessTimeout,
            .protocolViolation, .incompatibleVersion, .sessionFull, .unexpectedPeer, .connectionFailed,
            .handshakeTimeout, .busy, .duplicate,
        ]
        #expect(Set(all.map(\.wireValue)).count == all.count)
        for reason in all {
            #expect(DisconnectReason(wireValue: reason.wireValue) == reason)
            #expect(DisconnectReason(wireValue: reason.wireValue).detail == nil)
        }
        #expect(DisconnectReason(wireValue: 0) == .peerDisconnected)
        #expect(DisconnectReason(wireValue: 200) == .peerDisconnected)
    }
}
