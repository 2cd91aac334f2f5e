import Foundation
import PeerConnectivity
import Synchronization

/// Takes the reflector's echoes where the runner's session reads them (its ``MessageResponder``): an echo of
/// the running phase is checked and handed to the phase's ``LoadController``, a latency probe's echo to the
/// ``ProbeBook`` it is routed to, each timed as it is read, with no task between the read and the clock.
/// Everything else (the hello, receipts, reports, a notice) goes on to the session's events.
final class EchoTaker: Sendable {
    /// The phase the echoes go to, set by the sender for the length of a phase.
    let phase = CurrentPhase()
    /// The payloads of the data test.
    let pattern: PayloadPattern
    /// How the data test sends.
    let mode: DeliveryMode
    private let probes = Mutex<ProbeBook?>(nil)

    /// - Parameters:
    ///   - pattern: the payloads of the data test.
    ///   - mode: how the data test sends.
    init(pattern: PayloadPattern, mode: DeliveryMode) {
        self.pattern = pattern
        self.mode = mode
    }

    /// The responder of the runner's session: echoes and probes taken, the rest delivered.
    var responder: MessageResponder {
        MessageResponder { [self] data, _, mode in take(data, arrivedAs: mode) ? .consumed : .deliver }
    }

    /// Hands the echoes of latency probes to `book` from now on.
    func routeProbes(to book: ProbeBook) {
        probes.withLock { $0 = book }
    }

    /// Takes `data` if it is a probe's echo or an echo of the running phase; called where it is read (or,
    /// on a session with reconnection, which calls no responder, by the driver's event reader).
    ///
    /// - Returns: whether it was taken; if not, the event reader has it.
    func take(_ data: Data, arrivedAs: SendMode) -> Bool {
        if data.starts(with: LatencyProbe.prefix) {
            // Dropped when no book is routed.
            probes.withLock { $0 }?.received(data, at: MonotonicClock.now())
            return true
        }
        guard let current = phase.current, !data.starts(with: RunnerEviction.prefix),
            !data.starts(with: ReflectorReport.prefix)
        else { return false }
        let now = MonotonicClock.now()
        let inspection = data.withUnsafeBytes { pattern.inspect($0, expectedSize: current.size) }
        // Unreliable: a message that came on the connection (no UDP path yet) is counted apart.
        current.controller.received(inspection, at: now, onConnection: mode == .unreliable && arrivedAs == .reliable)
        return true
    }
}
