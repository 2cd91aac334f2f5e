/// Where a run stands, for a progress line.
public struct PhaseProgress: Hashable, Sendable {
    /// The message size of the phase.
    public var size: Int
    /// Whether the phase is a warm-up.
    public var isWarmup: Bool
    /// Messages the phase plans.
    public var planned: Int
    /// Messages sent.
    public var sent: Int
    /// Intact echoes.
    public var echoed: Int
    /// Messages counted lost.
    public var lost: Int
    /// Nanoseconds since the phase started.
    public var elapsedNanoseconds: UInt64

    /// Makes a progress report.
    ///
    /// - Parameters:
    ///   - size: the message size.
    ///   - isWarmup: whether it is a warm-up.
    ///   - planned: messages planned.
    ///   - sent: messages sent.
    ///   - echoed: intact echoes.
    ///   - lost: messages lost.
    ///   - elapsedNanoseconds: time since the phase started.
    public init(
        size: Int,
        isWarmup: Bool,
        planned: Int,
        sent: Int,
        echoed: Int,
        lost: Int,
        elapsedNanoseconds: UInt64
    ) {
        self.size = size
        self.isWarmup = isWarmup
        self.planned = planned
        self.sent = sent
        self.echoed = echoed
        self.lost = lost
        self.elapsedNanoseconds = elapsedNanoseconds
    }

    /// One line, e.g. "1024 B: 500/1000 sent, 499 echoed, 0 lost, 0.4 s".
    public var line: String {
        let phase = isWarmup ? " warm-up" : ""
        let seconds = (Double(elapsedNanoseconds) / 1e8).rounded() / 10
        return "\(size) B\(phase): \(sent)/\(planned) sent, \(echoed) echoed, \(lost) lost, \(seconds) s"
    }
}
