import Foundation

/// The reflector's count of a runner's datagrams at a bitrate (`--test bulk -u`), as iperf3's UDP server
/// counts them: how many arrived and how many bytes, duplicates, those that came after a later one
/// (out of order), and the interarrival jitter of RFC 3550 (§6.4.1, from each datagram's send time in its
/// header and its arrival time here: the two clocks' offset cancels). Pure: the reflector gives it each
/// datagram with the time it arrived; its arrivals are also kept per second, from the first.
public struct DatagramReceiver: Sendable {
    /// The header each datagram starts with: its sequence number and the runner's send time in
    /// nanoseconds, both big-endian `UInt64`.
    public static let headerLength = 16

    /// Datagrams received, duplicates among them.
    public private(set) var received = 0
    /// Their bytes.
    public private(set) var bytes = 0
    /// Datagrams whose sequence number had been received already.
    public private(set) var duplicates = 0
    /// Datagrams that arrived after one with a higher sequence number.
    public private(set) var outOfOrder = 0
    /// RFC 3550's interarrival jitter, in nanoseconds.
    public private(set) var jitterNanoseconds = 0.0
    /// Each second's arrivals from the first (datagrams, bytes), duplicates included.
    public private(set) var seconds: [(datagrams: Int, bytes: Int)] = []

    /// Which sequence numbers arrived, a bit each, for the first ``trackedSequences``.
    private var seen: [UInt64] = []
    private var highest: UInt64?
    private var lastTransit: Int64?
    private var firstArrival: UInt64?

    /// The sequence numbers whose duplicates are told apart (those above count as new): 2^26, a bitmap of
    /// 8 MiB, 10 minutes of a gigabit in datagrams of 1,400 bytes.
    public static let trackedSequences: UInt64 = 1 << 26

    /// An empty count.
    public init() {}

    /// Datagrams received once each.
    public var unique: Int { received - duplicates }

    /// The header of datagram `sequence`, sent at `sentNanoseconds`.
    ///
    /// - Parameters:
    ///   - sequence: its number, from 0.
    ///   - sentNanoseconds: the sender's clock when it was sent.
    /// - Returns: 16 bytes.
    public static func header(sequence: UInt64, sentNanoseconds: UInt64) -> Data {
        var data = Data(capacity: headerLength)
        withUnsafeBytes(of: sequence.bigEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: sentNanoseconds.bigEndian) { data.append(contentsOf: $0) }
        return data
    }

    /// Counts `datagram`, which arrived at `arrivalNanoseconds` (this side's clock); one shorter than the
    /// header is counted in bytes only.
    ///
    /// - Parameters:
    ///   - datagram: its bytes, header first.
    ///   - arrivalNanoseconds: when it arrived.
    public mutating func record(_ datagram: Data, arrivalNanoseconds: UInt64) {
        let start = firstArrival ?? arrivalNanoseconds
        firstArrival = start
        let second = Int((arrivalNanoseconds &- start) / 1_000_000_000)
        while seconds.count <= second { seconds.append((0, 0)) }
        seconds[second].datagrams += 1
        seconds[second].bytes += datagram.count
        received += 1
        bytes += datagram.count
        guard datagram.count >= Self.headerLength else { return }
        let (sequence, sent) = datagram.withUnsafeBytes { raw in
            (
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
        if markSeen(sequence) {
            duplicates += 1
            return
        }
        if let highest, sequence < highest { outOfOrder += 1 }
        highest = max(highest ?? sequence, sequence)
        let transit = Int64(bitPattern: arrivalNanoseconds &- sent)
        if let lastTransit {
            let difference = Double(transit &- lastTransit).magnitude
            jitterNanoseconds += (difference - jitterNanoseconds) / 16
        }
        lastTransit = transit
    }

    /// Marks `sequence` seen; whether it had been already.
    private mutating func markSeen(_ sequence: UInt64) -> Bool {
        guard sequence < Self.trackedSequences else { return false }
        let word = Int(sequence / 64)
        let bit = UInt64(1) << (sequence % 64)
        if seen.count <= word { seen.append(contentsOf: repeatElement(0, count: word + 1 - seen.count)) }
        defer { seen[word] |= bit }
        return seen[word] & bit != 0
    }
}
