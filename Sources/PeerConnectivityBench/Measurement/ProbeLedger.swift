/// The probes of a responsiveness test: which were sent, in which phase and when, and the round trips of
/// those that came back. Pure: the caller gives the times (nanoseconds of the monotonic clock).
///
/// A probe belongs to the phase it was sent in, wherever its echo arrives. A sequence number is answered
/// once: a second echo, or one never sent, is ignored.
struct ProbeLedger: Sendable {
    private struct Sent {
        var kind: ProbeKind
        var phase: Int
        var at: UInt64
        var omitted: Bool
    }

    /// The phase probes are now sent in (0 before the first ``begin(phase:omitting:)``).
    private(set) var phase = 0
    /// Whether probes sent now are left out of their phase's figures (its load still ramping up).
    private(set) var omitting = false
    /// Answered probes left out, per kind, per phase.
    private var omitted: [ProbeKind: [Int]]
    private var nextSequence: UInt64 = 1
    private var outstanding: [UInt64: Sent] = [:]
    /// Round trips per kind, per phase.
    private var samples: [ProbeKind: [[UInt64]]]
    /// Probes sent per kind, per phase.
    private var sent: [ProbeKind: [Int]]
    /// Round trips since the last ``takeInterval()``, per kind.
    private var interval: [ProbeKind: [UInt64]] = [:]

    /// No probe sent.
    ///
    /// - Parameter phases: how many phases the test has.
    init(phases: Int) {
        let empty = Array(repeating: [UInt64](), count: max(1, phases))
        samples = Dictionary(uniqueKeysWithValues: ProbeKind.allCases.map { ($0, empty) })
        sent = Dictionary(
            uniqueKeysWithValues: ProbeKind.allCases.map { ($0, Array(repeating: 0, count: empty.count)) }
        )
        omitted = sent
    }

    /// Probes sent from now on belong to `phase`.
    ///
    /// - Parameters:
    ///   - phase: the phase's index, within the phases given at the start.
    ///   - omitting: whether they are left out of its figures until ``settle()``.
    mutating func begin(phase: Int, omitting: Bool = false) {
        self.phase = min(max(0, phase), (sent[.foreign]?.count ?? 1) - 1)
        self.omitting = omitting
    }

    /// Probes sent from now on count in the phase's figures.
    mutating func settle() {
        omitting = false
    }

    /// A probe of `kind` is sent now: its sequence number.
    ///
    /// - Parameters:
    ///   - kind: where it travels.
    ///   - now: the time it is handed to the session.
    /// - Returns: the number it carries.
    mutating func send(_ kind: ProbeKind, at now: UInt64) -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        outstanding[sequence] = Sent(kind: kind, phase: phase, at: now, omitted: omitting)
        if !omitting { sent[kind]?[phase] += 1 }
        return sequence
    }

    /// A probe's echo arrived.
    ///
    /// - Parameters:
    ///   - sequence: the number it carried.
    ///   - now: when it arrived.
    /// - Returns: its round trip in nanoseconds; nil when no probe of that number is outstanding.
    @discardableResult
    mutating func answered(_ sequence: UInt64, at now: UInt64) -> UInt64? {
        guard let probe = outstanding.removeValue(forKey: sequence) else { return nil }
        let roundTrip = now >= probe.at ? now - probe.at : 0
        if probe.omitted {
            omitted[probe.kind]?[probe.phase] += 1
        } else {
            samples[probe.kind]?[probe.phase].append(roundTrip)
        }
        interval[probe.kind, default: []].append(roundTrip)
        return roundTrip
    }

    /// Probes sent and not answered.
    var outstandingCount: Int { outstanding.count }

    /// Probes out that travel on a connection: a datagram probe may never come back.
    var outstandingOnConnections: Int { outstanding.values.count { $0.kind != .datagram } }

    /// The round trips answered since the last call, per kind (empty kinds left out).
    mutating func takeInterval() -> [ProbeKind: [UInt64]] {
        defer { interval = [:] }
        return interval
    }

    /// The round trips of `kind`'s probes sent in `phase`, in the order they came back.
    ///
    /// - Parameters:
    ///   - kind: the kind.
    ///   - phase: the phase's index.
    /// - Returns: nanoseconds each.
    func roundTrips(_ kind: ProbeKind, phase: Int) -> [UInt64] {
        guard let phases = samples[kind], phases.indices.contains(phase) else { return [] }
        return phases[phase]
    }

    /// The count of `kind`'s probes sent in `phase` while it was omitting them, and answered.
    ///
    /// - Parameters:
    ///   - kind: the kind.
    ///   - phase: the phase's index.
    /// - Returns: the count.
    func omittedCount(_ kind: ProbeKind, phase: Int) -> Int {
        guard let phases = omitted[kind], phases.indices.contains(phase) else { return 0 }
        return phases[phase]
    }

    /// The count of `kind`'s probes sent in `phase`, those omitted left out.
    ///
    /// - Parameters:
    ///   - kind: the kind.
    ///   - phase: the phase's index.
    /// - Returns: the count.
    func sentCount(_ kind: ProbeKind, phase: Int) -> Int {
        guard let phases = sent[kind], phases.indices.contains(phase) else { return 0 }
        return phases[phase]
    }
}
