/// What a run does: for each message size, `warmup` unmeasured round trips, then `count` measured ones,
/// at most `window` in flight, sends spaced by `delayMilliseconds`, each message given
/// `timeoutSeconds` to come back, each size's sending stopped after `durationSeconds`.
public struct TestPlan: Codable, Hashable, Sendable {
    /// The largest message: the session's default ``PeerConnectivity/Session/Configuration/maximumMessageLength``.
    public static let maximumMessageSize = 1 << 20
    /// The most messages in flight.
    public static let maximumWindow = 65_536

    /// The test.
    public var test: TestKind
    /// The session's delivery mode (data test).
    public var mode: DeliveryMode
    /// Message sizes in bytes, run in this order.
    public var sizes: [Int]
    /// Measured messages per size.
    public var count: Int
    /// Unmeasured messages per size, sent (and echoed) before the measured ones.
    public var warmup: Int
    /// The most messages between the oldest one not yet answered and the next one sent.
    public var window: Int
    /// The least time between the starts of two sends, in milliseconds (0: as fast as the window allows).
    public var delayMilliseconds: Double
    /// How long a message may take to come back before it counts as lost, in seconds.
    public var timeoutSeconds: Double
    /// The longest time spent sending one size's messages (warm-up and measured each), in seconds;
    /// messages in flight then still get their timeout.
    public var durationSeconds: Double
    /// Whether the result keeps every message's times (memory grows with `count`).
    public var recordsSamples: Bool

    /// Makes a plan.
    ///
    /// - Parameters:
    ///   - test: the test.
    ///   - mode: the delivery mode.
    ///   - sizes: message sizes in bytes.
    ///   - count: measured messages per size.
    ///   - warmup: unmeasured messages per size.
    ///   - window: messages in flight at most.
    ///   - delayMilliseconds: least time between sends.
    ///   - timeoutSeconds: time a message has to come back.
    ///   - durationSeconds: cap on the time spent sending one size.
    ///   - recordsSamples: keep every message's times.
    public init(
        test: TestKind = .data,
        mode: DeliveryMode = .reliable,
        sizes: [Int] = [64],
        count: Int = 1_000,
        warmup: Int = 100,
        window: Int = 1,
        delayMilliseconds: Double = 0,
        timeoutSeconds: Double = 5,
        durationSeconds: Double = 60,
        recordsSamples: Bool = false
    ) {
        self.test = test
        self.mode = mode
        self.sizes = sizes
        self.count = count
        self.warmup = warmup
        self.window = window
        self.delayMilliseconds = delayMilliseconds
        self.timeoutSeconds = timeoutSeconds
        self.durationSeconds = durationSeconds
        self.recordsSamples = recordsSamples
    }

    /// Checks the plan.
    ///
    /// - Throws: ``BenchError/invalidPlan(_:)`` saying which value breaks which rule and what would do.
    public func validate() throws(BenchError) {
        if let reason = test.unavailableReason { throw .invalidPlan(reason) }
        if let reason = mode.unavailableReason { throw .invalidPlan(reason) }
        if test == .rawTCP, mode != .reliable {
            throw .invalidPlan("--test raw-tcp is plain TCP: only --mode reliable applies")
        }
        guard !sizes.isEmpty else { throw .invalidPlan("--size needs at least one size, e.g. --size 64,1024") }
        if let size = sizes.first(where: { !(1...Self.maximumMessageSize).contains($0) }) {
            throw .invalidPlan("--size \(size) is out of range: sizes are 1...\(Self.maximumMessageSize) bytes")
        }
        guard Set(sizes).count == sizes.count else { throw .invalidPlan("--size lists a size twice") }
        guard (1...100_000_000).contains(count) else { throw .invalidPlan("--count must be 1...100000000") }
        guard (0...10_000_000).contains(warmup) else { throw .invalidPlan("--warmup must be 0...10000000") }
        guard (1...Self.maximumWindow).contains(window) else {
            throw .invalidPlan("--window must be 1...\(Self.maximumWindow)")
        }
        if let smallest = sizes.min(), smallest < PayloadPattern.sequenceBytes {
            let limit = 1 << (8 * smallest)
            guard window <= limit else {
                throw .invalidPlan(
                    "--window \(window) is too large for \(smallest)-byte messages: a payload under "
                        + "\(PayloadPattern.sequenceBytes) bytes carries only the low bytes of its sequence number, "
                        + "so at most \(limit) may be in flight; use --window \(limit) or less, or larger sizes"
                )
            }
        }
        guard (0...60_000).contains(delayMilliseconds) else { throw .invalidPlan("--delay-ms must be 0...60000") }
        guard (0.001...3_600).contains(timeoutSeconds) else { throw .invalidPlan("--timeout must be 0.001...3600 s") }
        guard (0.1...86_400).contains(durationSeconds) else { throw .invalidPlan("--duration must be 0.1...86400 s") }
    }
}
