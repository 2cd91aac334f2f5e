/// What a run does: for each message size, `warmup` unmeasured round trips, then `count` measured ones,
/// at most `window` in flight, sends spaced by `delayMilliseconds`, each message given
/// `timeoutSeconds` to come back, each size's sending stopped after `durationSeconds`.
public struct TestPlan: Codable, Hashable, Sendable {
    /// The largest message the tools send: one DATA frame (the library's inline limit; larger ones go in chunks).
    public static let maximumMessageSize = 1 << 20
    /// The largest unreliable message: one UDP datagram (`SendMode.unreliable`'s limit).
    public static let maximumUnreliableMessageSize = 65_000
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
    /// The stream test: streams opened at once (nil for the other tests).
    public var streams: Int?
    /// The stream test: bytes written on each stream; the resource test: bytes of the file (nil for the
    /// message tests).
    public var bytes: Int?
    /// The stream test: the reflector reads and checks each stream and answers with a ``StreamReceipt``
    /// instead of echoing it, so the link carries the stream one way only (nil: echoed).
    public var oneWay: Bool?
    /// The bulk test: how long the streams are written, in seconds.
    public var timeSeconds: Double?
    /// The bulk test: the reflector writes and the runner reads (nil: the runner writes).
    public var reverse: Bool?
    /// The bulk test: both write at once, each on its own streams.
    public var bidirectional: Bool?
    /// The bulk test: the first seconds left out of the totals (slow start), still in the intervals, as
    /// iperf3's `-O` (nil: none).
    public var omitSeconds: Double?
    /// The bulk test with `--mode unreliable` (`-u`): datagrams of the first size sent at this rate, in bits a
    /// second (`-b`), as iperf3's UDP test.
    public var bitrate: Double?
    /// How often a report of the last interval is printed and kept in the document's `intervals`, in
    /// seconds (nil: none).
    public var intervalSeconds: Double?
    /// The data test, open loop: messages sent at this rate per second whatever comes back, each round
    /// trip counted from the time it was due to be sent (nil: closed loop, `window` messages in flight).
    public var rate: Double?
    /// The resource test: the link is cut (closed as a crash would) once this percentage of the file has
    /// been sent, and resumed; the transfer then goes on over the resumed link (nil: not cut).
    public var interruptAtPercent: Double?
    /// The folder test: files in the folder made for the run (nil with ``folderPath``, or another test).
    public var files: Int?
    /// The folder test: the folder sent instead of one made for the run.
    public var folderPath: String?
    /// The resource test: the file sent instead of one of ``bytes`` made for the run (nil: one is made).
    public var filePath: String?
    /// The resource and folder tests: latency probes sent at this rate a second on the same session
    /// while each measured transfer runs, and as many a second on the idle session before, as
    /// transfer-time echoes (`--beside-echo`; nil: none).
    public var besideEchoRate: Double?

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
    ///   - streams: the stream test's streams.
    ///   - bytes: the stream test's bytes per stream, or the resource test's file size.
    ///   - oneWay: the stream test's streams are read by the reflector, not echoed.
    ///   - timeSeconds: the bulk test's duration.
    ///   - reverse: the bulk test's reflector writes.
    ///   - bidirectional: the bulk test writes both ways.
    ///   - omitSeconds: the bulk test's first seconds left out of the totals.
    ///   - bitrate: the bulk test's datagram rate in bits a second (`-u`).
    ///   - intervalSeconds: the interval of the reports.
    ///   - rate: the data test's open-loop rate.
    ///   - interruptAtPercent: the resource test's cut, in percent of the file.
    ///   - files: the folder test's files made for the run.
    ///   - folderPath: the folder test's folder sent instead.
    ///   - filePath: the resource test's file sent instead.
    ///   - besideEchoRate: probes a second beside each transfer.
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
        recordsSamples: Bool = false,
        streams: Int? = nil,
        bytes: Int? = nil,
        oneWay: Bool? = nil,
        timeSeconds: Double? = nil,
        reverse: Bool? = nil,
        bidirectional: Bool? = nil,
        omitSeconds: Double? = nil,
        bitrate: Double? = nil,
        intervalSeconds: Double? = nil,
        rate: Double? = nil,
        interruptAtPercent: Double? = nil,
        files: Int? = nil,
        folderPath: String? = nil,
        filePath: String? = nil,
        besideEchoRate: Double? = nil
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
        self.streams = streams
        self.bytes = bytes
        self.oneWay = oneWay
        self.timeSeconds = timeSeconds
        self.reverse = reverse
        self.bidirectional = bidirectional
        self.omitSeconds = omitSeconds
        self.bitrate = bitrate
        self.intervalSeconds = intervalSeconds
        self.rate = rate
        self.interruptAtPercent = interruptAtPercent
        self.files = files
        self.folderPath = folderPath
        self.filePath = filePath
        self.besideEchoRate = besideEchoRate
    }

    /// Checks the plan.
    ///
    /// - Throws: ``BenchError/invalidPlan(_:)`` saying which value breaks which rule and what would do.
    public func validate() throws(BenchError) {
        if test != .data, test != .bulk, mode != .reliable {
            throw .invalidPlan(
                "--mode \(mode.rawValue) applies to --test data and bulk only; --test \(test.rawValue) is reliable"
            )
        }
        if bitrate != nil, test != .bulk || mode != .unreliable {
            throw .invalidPlan("--bitrate applies to --test bulk -u (datagrams at a bitrate) only")
        }
        if oneWay == true, test != .stream { throw .invalidPlan("--one-way applies to --test stream only") }
        if let intervalSeconds, !(0.1...3_600).contains(intervalSeconds) {
            throw .invalidPlan("--interval must be 0.1...3600 s")
        }
        if interruptAtPercent != nil, test != .resource {
            throw .invalidPlan("--interrupt-at applies to --test resource only")
        }
        if filePath != nil, test != .resource { throw .invalidPlan("--file applies to --test resource only") }
        if test != .bulk, reverse == true || bidirectional == true {
            throw .invalidPlan("--reverse and --bidir apply to --test bulk only")
        }
        if test != .bulk, test != .responsiveness, omitSeconds != nil {
            throw .invalidPlan("--omit applies to --test bulk and responsiveness only")
        }
        if test == .folder {
            try validateFolder()
            return
        }
        if files != nil || folderPath != nil { throw .invalidPlan("--files and --folder apply to --test folder only") }
        if besideEchoRate != nil, test != .resource {
            throw .invalidPlan("--beside-echo applies to --test resource and folder only")
        }
        if test == .bulk {
            try validateBulk()
            return
        }
        if test == .responsiveness {
            try validateResponsiveness()
            return
        }
        if timeSeconds != nil, !test.isMessageTest {
            throw .invalidPlan("--time applies to --test bulk, data and raw-tcp")
        }
        if let rate {
            guard test.isMessageTest else { throw .invalidPlan("--rate applies to --test data and raw-tcp") }
            guard (1...1_000_000).contains(rate) else { throw .invalidPlan("--rate must be 1...1000000 messages/s") }
        }
        if test == .stream || test == .resource {
            try validateTransfer()
            return
        }
        if streams != nil { throw .invalidPlan("--streams applies to --test stream only") }
        if bytes != nil { throw .invalidPlan("--bytes applies to --test stream and --test resource only") }
        guard !sizes.isEmpty else { throw .invalidPlan("--size needs at least one size, e.g. --size 64,1024") }
        if let size = sizes.first(where: { !(1...Self.maximumMessageSize).contains($0) }) {
            throw .invalidPlan("--size \(size) is out of range: sizes are 1...\(Self.maximumMessageSize) bytes")
        }
        if mode == .unreliable, let size = sizes.first(where: { $0 > Self.maximumUnreliableMessageSize }) {
            throw .invalidPlan(
                "--size \(size) is too large for --mode unreliable: each message is one UDP datagram of at most "
                    + "\(Self.maximumUnreliableMessageSize) bytes; use sizes up to \(Self.maximumUnreliableMessageSize), "
                    + "e.g. --size 1,64,1024,16384,65000"
            )
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

    /// The largest stream or resource: 64 GiB.
    public static let maximumTransferBytes = 64 << 30
    /// The most streams at once (the library allows 256 channels each way; the reflector opens one
    /// echo per stream).
    public static let maximumStreams = 128

    private func validateBulk() throws(BenchError) {
        guard let timeSeconds, (0.1...86_400).contains(timeSeconds) else {
            throw .invalidPlan("--time must be 0.1...86400 s")
        }
        guard let streams, (1...Self.maximumStreams).contains(streams) else {
            throw .invalidPlan("--parallel must be 1...\(Self.maximumStreams)")
        }
        if reverse == true, bidirectional == true {
            throw .invalidPlan("--reverse and --bidir exclude each other: --bidir writes both ways")
        }
        if bytes != nil { throw .invalidPlan("--test bulk runs for --time: --bytes does not apply") }
        if mode == .unreliable {
            guard let bitrate, (1_000...100_000_000_000).contains(bitrate) else {
                throw .invalidPlan("--test bulk -u sends at -b RATE: 1K...100G bits a second")
            }
            guard sizes.count == 1, let length = sizes.first,
                (DatagramReceiver.headerLength...Self.maximumUnreliableMessageSize).contains(length)
            else {
                throw .invalidPlan(
                    "--test bulk -u takes one datagram length, -l \(DatagramReceiver.headerLength)..."
                        + "\(Self.maximumUnreliableMessageSize)"
                )
            }
            guard streams == 1, reverse != true, bidirectional != true, omitSeconds == nil else {
                throw .invalidPlan("--test bulk -u sends datagrams one way: no -P, -R, --bidir or -O")
            }
            return
        }
        if let omitSeconds, !(0..<timeSeconds).contains(omitSeconds) {
            throw .invalidPlan("--omit must be 0 or more and less than --time (\(timeSeconds) s)")
        }
        if let size = sizes.first {
            guard sizes.count == 1, (1...Self.maximumMessageSize).contains(size) else {
                throw .invalidPlan(
                    "--test bulk takes one --size, 1...\(Self.maximumMessageSize) (messages instead of streams)"
                )
            }
            guard streams == 1, reverse != true, bidirectional != true else {
                throw .invalidPlan(
                    "--test bulk with --size sends messages one way on one connection: no -P, -R or --bidir"
                )
            }
        }
    }

    /// The most load flows of the responsiveness test, as the responsiveness draft's most load connections.
    public static let maximumLoadFlows = 16

    private func validateResponsiveness() throws(BenchError) {
        guard let timeSeconds, (1...3_600).contains(timeSeconds) else {
            throw .invalidPlan("--test responsiveness: --time is each phase's, 1...3600 s")
        }
        guard let streams, (1...Self.maximumLoadFlows).contains(streams) else {
            throw .invalidPlan("--test responsiveness: --parallel load flows must be 1...\(Self.maximumLoadFlows)")
        }
        if let omitSeconds, !(0..<timeSeconds).contains(omitSeconds) {
            throw .invalidPlan("--omit must be 0 or more and less than --time (\(timeSeconds) s)")
        }
        if bytes != nil || !sizes.isEmpty || rate != nil {
            throw .invalidPlan(
                "--test responsiveness runs its phases for --time: --bytes, --size and --rate do not apply"
            )
        }
    }

    /// The most files of a folder made for the folder test.
    public static let maximumFolderFiles = 1_000_000
    /// The most probes a second beside a transfer.
    public static let maximumBesideEchoRate = 10_000.0

    private func validateFolder() throws(BenchError) {
        if bytes != nil || streams != nil || interruptAtPercent != nil || timeSeconds != nil || rate != nil
            || !sizes.isEmpty
        {
            throw .invalidPlan(
                "--test folder sends --files files (or --folder): --bytes, --size, --streams, --time, --rate and "
                    + "--interrupt-at do not apply"
            )
        }
        switch (files, folderPath) {
        case (let files?, nil):
            guard (1...Self.maximumFolderFiles).contains(files) else {
                throw .invalidPlan("--files must be 1...\(Self.maximumFolderFiles)")
            }
        case (nil, let path?):
            guard !path.isEmpty else { throw .invalidPlan("--folder needs a path") }
        default:
            throw .invalidPlan("--test folder takes either --files N (a folder made for the run) or --folder PATH")
        }
        try validateTransferCounts()
    }

    private func validateTransferCounts() throws(BenchError) {
        guard (1...10_000).contains(count) else { throw .invalidPlan("--count must be 1...10000 transfers") }
        guard (0...1_000).contains(warmup) else { throw .invalidPlan("--warmup must be 0...1000 transfers") }
        if let besideEchoRate, !(1...Self.maximumBesideEchoRate).contains(besideEchoRate) {
            throw .invalidPlan("--beside-echo must be 1...\(Int(Self.maximumBesideEchoRate)) probes a second")
        }
        guard (0.1...86_400).contains(durationSeconds) else { throw .invalidPlan("--duration must be 0.1...86400 s") }
    }

    private func validateTransfer() throws(BenchError) {
        if let filePath {
            // The test runs only with --test resource (checked before): its size is the file's.
            guard !filePath.isEmpty else { throw .invalidPlan("--file needs a path") }
            guard bytes == nil else { throw .invalidPlan("--file sends that file whole: --bytes does not apply") }
        } else {
            guard let bytes, (1...Self.maximumTransferBytes).contains(bytes) else {
                throw .invalidPlan("--bytes must be 1...\(Self.maximumTransferBytes) (64 GiB), e.g. --bytes 67108864")
            }
        }
        if test == .stream {
            guard let streams, (1...Self.maximumStreams).contains(streams) else {
                throw .invalidPlan("--streams must be 1...\(Self.maximumStreams)")
            }
            guard count == 1, warmup == 0 else {
                throw .invalidPlan("--test stream runs its --streams once: --count and --warmup do not apply")
            }
        } else {
            if streams != nil { throw .invalidPlan("--streams applies to --test stream only") }
            if let interruptAtPercent, !(interruptAtPercent > 0 && interruptAtPercent < 100) {
                throw .invalidPlan(
                    "--interrupt-at takes a percentage of the file strictly between 0 and 100, e.g. --interrupt-at 50"
                )
            }
            try validateTransferCounts()
            return
        }
        guard (0.1...86_400).contains(durationSeconds) else { throw .invalidPlan("--duration must be 0.1...86400 s") }
    }
}
