import PeerConnectivity
import PeerConnectivityCore
import Testing

@testable import PeerConnectivityBench

/// When an unreliable test may start: on the session's verdict on its UDP path to the reflector.
@Suite("Unreliable test: the UDP path first")
struct UnreliablePathTests {
    static let second: UInt64 = 1_000_000_000

    static func summary(_ verdict: DatagramPathStateMachine.Verdict, probes: Int = 3) -> DatagramPathReport {
        .checked(
            DatagramPathStateMachine.Summary(
                verdict: verdict,
                probesSent: probes,
                answers: verdict == .open ? 1 : 0,
                measuredLoss: 0.05,
                windowProbes: 12,
                elapsed: 3 * second
            )
        )
    }

    @Test("open: start; probing or pending: wait, up to the limit; not probed by the reflector: judge by echoes")
    func decisions() {
        #expect(UnreliablePath.decide(Self.summary(.open), waited: 0) == .start)
        #expect(UnreliablePath.decide(Self.summary(.probing), waited: 0) == .wait)
        #expect(UnreliablePath.decide(.pending, waited: UnreliablePath.waitLimit - 1) == .wait)
        #expect(UnreliablePath.decide(.unchecked, waited: 0) == .startUnchecked)
        for report in [Self.summary(.probing), DatagramPathReport.pending] {
            guard case .fail(let error) = UnreliablePath.decide(report, waited: UnreliablePath.waitLimit) else {
                Issue.record("\(report) past the limit")
                continue
            }
            #expect(error.message.contains("no verdict on the UDP path") && error.message.contains("7449-7480"))
        }
    }

    @Test("blocked: the run stops, with the probes, the time, the loss measured and what to open")
    func blocked() {
        guard case .fail(let error) = UnreliablePath.decide(Self.summary(.blocked, probes: 14), waited: 0) else {
            Issue.record("a blocked path started")
            return
        }
        #expect(error == BenchError.blocked(error.message))
        #expect(error.message.contains("no UDP answer from the reflector to 14 probes in 3.0 s"))
        #expect(error.message.contains("loss measured 5 %, window 12 probes"))
        #expect(error.message.contains("open the reflector's UDP ports (7449-7480 by default)"))
        guard case .fail(let unbound) = UnreliablePath.decide(.unavailable, waited: 0) else {
            Issue.record("no socket, started")
            return
        }
        #expect(unbound.message.contains("could not bind a UDP socket"))
    }
}
