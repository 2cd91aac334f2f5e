import Foundation
import PeerConnectivity

/// `--test bulk -u`: datagrams of one length sent one way at a set bitrate for `--time`, as iperf3's UDP
/// test. Datagram `i` is due `i` × length × 8 / bitrate seconds after the start; the sender sends every one
/// that is due and sleeps until the next, so that a late wake-up is caught up and the rate holds on average.
/// It sends the whole schedule's count even late, unless more than ``BulkTest/grace`` late. Each datagram
/// starts with its sequence number and send time (``DatagramReceiver/header(sequence:sentNanoseconds:)``); the
/// reflector counts them from the runner's `start-udp` to its `end`, sent reliably once the last datagram
/// has had ``drain`` to arrive, and answers with a ``DatagramReceipt``.
extension BulkTest {
    /// How long the runner waits after the last datagram before it asks for the receipt: datagrams still on
    /// their way over a slow link would otherwise count as lost.
    static let drain = Duration.seconds(1)

    /// Runs the test on a connected session whose UDP path is open.
    ///
    /// - Parameters:
    ///   - plan: the bitrate, the length (the first size) and the time.
    ///   - session: the session to the reflector.
    ///   - peer: the reflector.
    ///   - inbox: where its receipt arrives.
    ///   - counters: where the bytes sent are counted, for the interval reports.
    /// - Returns: the figures.
    /// - Throws: ``BenchError`` when a send fails or no receipt comes.
    static func sendDatagrams(
        _ plan: TestPlan,
        session: Session,
        peer: PeerID,
        inbox: TransferInbox,
        counters: Counters
    ) async throws -> DatagramBulkResult {
        let length = plan.sizes.first ?? 1_400
        let bitrate = plan.bitrate ?? 1_000_000
        let seconds = plan.timeSeconds ?? 10
        let spacing = Double(length * 8) / bitrate * 1e9
        let count = Int((seconds * 1e9 / spacing).rounded(.down))
        let pattern = StreamPattern()
        let body = pattern.bytes(
            index: 0,
            offset: DatagramReceiver.headerLength,
            count: length - DatagramReceiver.headerLength
        )
        try await session.send(MessageFlow(action: MessageFlow.startDatagrams, size: length).encoded(), toPeers: [peer])
        let notSentBefore = session.datagramStatistics.notSentQueueFull
        let start = MonotonicClock.now()
        let giveUp = start + UInt64(seconds * 1e9) + UInt64(grace.seconds * 1e9)
        var sent = 0
        var lateness: UInt64 = 0
        while sent < count {
            let due = start + UInt64(Double(sent) * spacing)
            let now = MonotonicClock.now()
            if now < due {
                try await Task.sleep(for: .nanoseconds(Int64(due - now)))
                continue
            }
            guard now < giveUp else { break }
            lateness = max(lateness, now - due)
            var datagram = DatagramReceiver.header(sequence: UInt64(sent), sentNanoseconds: now)
            datagram.append(body)
            do {
                try await session.send(datagram, toPeers: [peer], mode: .unreliable)
            } catch {
                throw BenchError.disconnected("sending datagram \(sent): \(error)")
            }
            sent += 1
            counters.sent.add(length, ordering: .relaxed)
        }
        // Dropped here, the socket's buffer full: not sent, so not lost on the way either.
        let notSent = min(session.datagramStatistics.notSentQueueFull - notSentBefore, sent)
        try await Task.sleep(for: drain)
        try await session.send(MessageFlow.end(size: length).encoded(), toPeers: [peer])
        let receipt = try await withTimeout(grace, orThrow: .disconnected("no datagram receipt from the reflector")) {
            for try await message in inbox.messages {
                if let receipt = DatagramReceipt.decoded(from: message) { return receipt }
            }
            throw BenchError.disconnected("the session ended before the reflector's datagram receipt")
        }
        return DatagramBulkResult(
            length: length,
            targetBitsPerSecond: bitrate,
            seconds: seconds,
            sent: sent - notSent,
            notSent: notSent,
            receipt: receipt,
            maximumLatenessNanoseconds: lateness
        )
    }
}
