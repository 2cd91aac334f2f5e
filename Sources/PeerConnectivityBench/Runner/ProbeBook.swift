import Foundation
import Synchronization

/// The ``ProbeLedger`` of the responsiveness test and of `--beside-echo`, shared by the probe senders,
/// the sessions' receiver tasks (which time each echo as they read it) and the interval reports.
final class ProbeBook: Sendable {
    private let ledger: Mutex<ProbeLedger>
    private let phaseNames: [String]

    /// No probe sent yet.
    ///
    /// - Parameter phases: the test's phases, in order.
    convenience init(phases: [ResponsivenessPhase.Name]) {
        self.init(phaseNames: phases.map(\.rawValue))
    }

    /// No probe sent yet.
    ///
    /// - Parameter phaseNames: the names of the phases, in order.
    init(phaseNames: [String]) {
        ledger = Mutex(ProbeLedger(phases: phaseNames.count))
        self.phaseNames = phaseNames
    }

    /// Probes sent from now on belong to the phase at `index`, left out of its figures until ``settle()``
    /// when `omitting`.
    func begin(phase index: Int, omitting: Bool = false) {
        ledger.withLock { $0.begin(phase: index, omitting: omitting) }
    }

    /// Probes sent from now on count in the phase's figures.
    func settle() {
        ledger.withLock { $0.settle() }
    }

    /// The name of the phase probes are now sent in.
    var currentPhase: String {
        let index = ledger.withLock { $0.phase }
        return phaseNames.indices.contains(index) ? phaseNames[index] : ""
    }

    /// A new probe of `kind`, counted as sent now: the message to send.
    func nextProbe(_ kind: ProbeKind) -> Data {
        let now = MonotonicClock.now()
        return LatencyProbe.encoded(ledger.withLock { $0.send(kind, at: now) })
    }

    /// A message that came back, read at `now`: counted when it is the echo of an outstanding probe.
    ///
    /// - Returns: whether it was a probe's echo.
    @discardableResult
    func received(_ message: Data, at now: UInt64) -> Bool {
        guard let sequence = LatencyProbe.sequence(of: message) else { return false }
        ledger.withLock { _ = $0.answered(sequence, at: now) }
        return true
    }

    /// The round trips answered since the last call, per kind.
    func takeInterval() -> [ProbeKind: [UInt64]] {
        ledger.withLock { $0.takeInterval() }
    }

    /// Waits until every probe sent has come back, or `limit` has passed (polled every 10 ms); with
    /// `onConnectionsOnly`, every probe but the datagram ones, which may be lost.
    func awaitOutstanding(upTo limit: Duration, onConnectionsOnly: Bool = false) async {
        let deadline = ContinuousClock.now + limit
        while ledger.withLock({ onConnectionsOnly ? $0.outstandingOnConnections : $0.outstandingCount }) > 0,
            ContinuousClock.now < deadline
        {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// What `kind`'s probes sent in the phase at `index` gave.
    func result(_ kind: ProbeKind, phase index: Int) -> ProbeResult {
        ledger.withLock {
            ProbeResult(
                sent: $0.sentCount(kind, phase: index),
                roundTrips: $0.roundTrips(kind, phase: index),
                omitted: $0.omittedCount(kind, phase: index)
            )
        }
    }
}
