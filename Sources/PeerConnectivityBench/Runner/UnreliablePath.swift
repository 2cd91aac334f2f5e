import Foundation
import PeerConnectivity
import PeerConnectivityCore

/// Whether an unreliable data test may start: the session's UDP path to the reflector must be open, so
/// that the figures are those of datagrams and not of the connection. Pure: the runner polls the session's
/// ``PeerConnectivity/DatagramPathReport`` and acts on the decision.
enum UnreliablePath {
    /// What the runner does.
    enum Decision: Equatable {
        /// Start the test.
        case start
        /// Start it, judging the path by the echoes themselves: the reflector does not probe (an earlier
        /// version), so its datagrams go unchecked.
        case startUnchecked
        /// Ask again shortly.
        case wait
        /// Stop the run with this error.
        case fail(BenchError)
    }

    /// How long the runner waits for a verdict: the ceiling of the window (6 s) and room for the endpoints
    /// to be exchanged over a lossy connection.
    static let waitLimit: UInt64 = 10_000_000_000

    /// What to open when UDP seems blocked.
    static let hint =
        "UDP between the hosts seems blocked; open the reflector's UDP ports (7449-7480 by default) in its "
        + "firewall, or run the reliable tests"

    /// The decision for `report`, `waited` nanoseconds after the runner began to ask.
    ///
    /// - Parameters:
    ///   - report: where the session's path to the reflector stands.
    ///   - waited: nanoseconds since the first ask.
    /// - Returns: what to do.
    static func decide(_ report: DatagramPathReport, waited: UInt64) -> Decision {
        switch report {
        case .checked(let summary):
            switch summary.verdict {
            case .open: return .start
            case .probing: return waited < waitLimit ? .wait : .fail(timedOut(waited))
            case .blocked:
                return .fail(
                    .blocked(
                        "no UDP answer from the reflector to \(summary.probesSent) probes in "
                            + "\(seconds(summary.elapsed)) s (loss measured \(percent(summary.measuredLoss)) %, window "
                            + "\(summary.windowProbes) probes): \(hint)"
                    )
                )
            }
        case .unchecked:
            return .startUnchecked
        case .unavailable:
            return .fail(.blocked("this runner could not bind a UDP socket: unreliable mode needs one"))
        case .pending:
            return waited < waitLimit ? .wait : .fail(timedOut(waited))
        }
    }

    /// The rule for a reflector that does not probe, judged by the phase's echoes: no echo by datagram,
    /// and the messages counted lost and the time since the phase began are past the window that the loss
    /// assumed where none is measured asks for (``PeerConnectivityCore/DatagramPathStateMachine``).
    ///
    /// - Parameters:
    ///   - lost: messages counted lost (their timeout passed).
    ///   - datagramEchoes: echoes that came by datagram.
    ///   - elapsed: nanoseconds since the phase began.
    /// - Returns: the error to stop with, or nil.
    static func judgeByEchoes(lost: Int, datagramEchoes: Int, elapsed: UInt64) -> BenchError? {
        let policy = DatagramPathStateMachine.Policy.default
        guard datagramEchoes == 0,
            DatagramPathStateMachine.judgesBlocked(
                unanswered: lost,
                elapsed: elapsed,
                loss: policy.assumedLoss,
                policy: policy
            )
        else { return nil }
        return .blocked("no UDP datagram came back in \(seconds(elapsed)) s (\(lost) messages lost): \(hint)")
    }

    private static func timedOut(_ waited: UInt64) -> BenchError {
        .blocked("no verdict on the UDP path to the reflector within \(seconds(waited)) s: \(hint)")
    }

    private static func seconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.1f", Double(nanoseconds) / 1e9)
    }

    private static func percent(_ share: Double) -> Int {
        Int((share * 100).rounded())
    }
}
