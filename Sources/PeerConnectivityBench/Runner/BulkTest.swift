import Foundation
import PeerConnectivity
import Synchronization

/// The bulk test, as iperf3 measures a link: `--parallel` streams written for `--time` seconds one way
/// (runner to reflector; `--reverse`: reflector to runner; `--bidir`: both at once), every byte the
/// ``StreamPattern``'s and checked by the reader. Forward streams are the one-way streams of the stream
/// test (the reflector reads them and answers with a ``StreamReceipt``); reverse streams are asked for
/// with a ``BulkRequest``. Every `--interval` the bytes written forward and read back are reported.
enum BulkTest {
    /// How long after its writing time a direction may take to finish before its streams count as failed.
    static let grace = Duration.seconds(10)

    /// Bytes written forward and read back so far, for the interval reports: in all, and with more than one
    /// stream each way, per stream (`-P`, printed as iperf3 does, each stream and a sum).
    final class Counters: Sendable {
        let sent = Atomic<Int>(0)
        let received = Atomic<Int>(0)
        /// Whether each stream is counted too: with one, its bytes are the totals, and no write takes a lock.
        private let countsStreams: Bool
        /// Per stream, with more than one (empty with one). Always a lock, never an optional one: ThreadSanitizer
        /// does not see an optional `Mutex`'s `withLock` order the accesses it guards, and reports them as races.
        private let perStream: Mutex<(sent: [Int], received: [Int])>

        /// Counters for `streams` streams each way.
        init(streams: Int = 1) {
            countsStreams = streams > 1
            let zeros = countsStreams ? Array(repeating: 0, count: streams) : []
            perStream = Mutex((zeros, zeros))
        }

        /// `bytes` more written on stream `index`.
        func sent(_ bytes: Int, stream index: Int) {
            sent.add(bytes, ordering: .relaxed)
            guard countsStreams else { return }
            perStream.withLock { if $0.sent.indices.contains(index) { $0.sent[index] += bytes } }
        }

        /// `bytes` more read on stream `index`.
        func received(_ bytes: Int, stream index: Int) {
            received.add(bytes, ordering: .relaxed)
            guard countsStreams else { return }
            perStream.withLock { if $0.received.indices.contains(index) { $0.received[index] += bytes } }
        }

        /// The bytes so far in all and, with more than one stream, each stream's (empty with one), taken together:
        /// with more than one the totals are the streams' sums, read under the same lock, so that an interval's
        /// streams always add up to its total (the atomics are a step ahead of the streams while a count is added).
        var snapshot: (sent: Int, received: Int, streams: (sent: [Int], received: [Int])) {
            guard countsStreams else {
                return (sent.load(ordering: .relaxed), received.load(ordering: .relaxed), ([], []))
            }
            let streams = perStream.withLock { $0 }
            return (streams.sent.reduce(0, +), streams.received.reduce(0, +), streams)
        }
    }

    /// Runs the test on a connected session.
    ///
    /// - Parameters:
    ///   - plan: streams, time, direction.
    ///   - driver: the session to the reflector, with its inbox.
    ///   - counters: where the bytes are counted as they go, for the interval reports.
    /// - Returns: the test's section of the document.
    /// - Throws: ``BenchError/disconnected(_:)`` when the session has no reflector or no inbox.
    static func run(_ plan: TestPlan, driver: SessionEchoDriver, counters: Counters) async throws -> BulkTestResult {
        guard let peer = driver.reflectorPeer, let inbox = driver.inbox else {
            throw BenchError.disconnected("not connected")
        }
        let streams = plan.streams ?? 1
        let time = Duration.milliseconds(Int((plan.timeSeconds ?? 10) * 1_000))
        let forward = plan.reverse != true
        let reverse = plan.reverse == true || plan.bidirectional == true
        let pattern = StreamPattern()
        let session = driver.session
        if plan.mode == .unreliable {
            var result = BulkTestResult(streamCount: 1, timeSeconds: plan.timeSeconds ?? 10, forward: nil, reverse: nil)
            result.datagrams = try await sendDatagrams(
                plan,
                session: session,
                peer: peer,
                inbox: inbox,
                counters: counters
            )
            return result
        }
        let mark = omissionMark(after: plan.omitSeconds, counters: counters)
        defer { mark?.cancel() }
        if let size = plan.sizes.first, !plan.sizes.isEmpty {
            let forward = await sendMessages(
                size: size,
                for: time,
                session: session,
                peer: peer,
                inbox: inbox,
                pattern: pattern,
                counters: counters
            )
            let omitted = await omitted(mark)
            return BulkTestResult(
                streamCount: 1,
                timeSeconds: plan.timeSeconds ?? 10,
                forward: omitted.map { forward.omitting($0.sent, over: $0.seconds) } ?? forward,
                reverse: nil
            )
        }
        async let forwardResult: BulkDirection? =
            forward
            ? sendForward(
                streams,
                for: time,
                session: session,
                peer: peer,
                inbox: inbox,
                pattern: pattern,
                counters: counters
            ) : nil
        async let reverseResult: BulkDirection? =
            reverse
            ? receiveReverse(
                streams,
                for: time,
                session: session,
                peer: peer,
                inbox: inbox,
                pattern: pattern,
                counters: counters
            ) : nil
        let (forwardDone, reverseDone) = await (forwardResult, reverseResult)
        let omitted = await omitted(mark)
        return BulkTestResult(
            streamCount: streams,
            timeSeconds: plan.timeSeconds ?? 10,
            forward: omitted.flatMap { mark in forwardDone?.omitting(mark.sent, over: mark.seconds) } ?? forwardDone,
            reverse: omitted.flatMap { mark in reverseDone?.omitting(mark.received, over: mark.seconds) } ?? reverseDone
        )
    }

    /// The counters when the omitted seconds end, and when that was (the timer may fire late).
    private typealias Mark = (sent: Int, received: Int, seconds: Double)

    /// With `--omit`, reads the counters once the omitted seconds have passed; nil without.
    private static func omissionMark(after seconds: Double?, counters: Counters) -> Task<Mark?, Never>? {
        guard let seconds, seconds > 0 else { return nil }
        let started = ContinuousClock.now
        return Task {
            guard (try? await Task.sleep(for: .milliseconds(Int(seconds * 1_000)))) != nil else { return nil }
            return (
                counters.sent.load(ordering: .relaxed),
                counters.received.load(ordering: .relaxed),
                started.duration(to: .now).seconds
            )
        }
    }

    /// The mark, if it was reached before the test ended; a test shorter than its omitted seconds has none.
    private static func omitted(_ mark: Task<Mark?, Never>?) async -> Mark? {
        mark?.cancel()
        return await mark?.value
    }

    // MARK: - Runner to reflector

    static func sendForward(
        _ count: Int,
        for time: Duration,
        session: Session,
        peer: PeerID,
        inbox: TransferInbox,
        pattern: StreamPattern,
        counters: Counters
    ) async -> BulkDirection {
        let started = ContinuousClock.now
        let deadline = started + time
        let written = await withTaskGroup(of: (Int, String?).self) { group -> [(Int, String?)] in
            for index in 0..<count {
                // On the session's event loop, as each stream's reader at the reflector: a write goes into the
                // connection's queue without waking another thread for each chunk (Session.streamExecutor).
                group.addTask(executorPreference: session.streamExecutor) {
                    await write(
                        index,
                        until: deadline,
                        session: session,
                        peer: peer,
                        pattern: pattern,
                        counters: counters
                    )
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Each receipt says how many bytes the reflector read, and whether they were the pattern's.
        let (receipts, receiptError) = await self.receipts(count, from: inbox, until: deadline + grace)
        let seconds = started.duration(to: .now)
        var errors = written.compactMap(\.1)
        for index in 0..<count where receipts[index] == nil {
            errors.append("stream \(index): no receipt from the reflector" + (receiptError.map { ": \($0)" } ?? ""))
        }
        errors += receipts.values.compactMap { receipt in receipt.error.map { "\(receipt.name): the reflector: \($0)" }
        }
        var direction = BulkDirection(
            sentBytes: written.map(\.0).reduce(0, +),
            receivedBytes: receipts.values.map(\.bytes).reduce(0, +),
            seconds: seconds.seconds,
            corruptedStreams: receipts.values.filter { $0.firstMismatchOffset != nil }.count,
            failedStreams: errors.count,
            errors: errors
        )
        // The reflector's own view, each second, its streams added up.
        let views = receipts.values.compactMap(\.bytesPerSecond)
        if !views.isEmpty {
            direction.reflectorBytesPerSecond = (0..<(views.map(\.count).max() ?? 0)).map { second in
                views.reduce(0) { $0 + ($1.indices.contains(second) ? $1[second] : 0) }
            }
        }
        return direction
    }

    /// The reflector's receipts for the forward streams, until each has one or `deadline` passes; and why
    /// they stopped coming, when the reflector left.
    private static func receipts(
        _ count: Int,
        from inbox: TransferInbox,
        until deadline: ContinuousClock.Instant
    ) async -> ([Int: StreamReceipt], String?) {
        await withTaskGroup(of: ([Int: StreamReceipt], String?)?.self) { group in
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            group.addTask {
                var receipts: [Int: StreamReceipt] = [:]
                do {
                    for try await message in inbox.messages {
                        guard let receipt = StreamReceipt(decoding: message),
                            receipt.name.hasPrefix(StreamTest.oneWayPrefix),
                            let index = Int(receipt.name.dropFirst(StreamTest.oneWayPrefix.count)),
                            (0..<count).contains(index)
                        else { continue }
                        receipts[index] = receipt
                        if receipts.count == count { break }
                    }
                    return (receipts, nil)
                } catch {
                    return (receipts, "\(error)")
                }
            }
            // The receipts, or the timer's nil: then none complete came in time.
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? ([:], "the reflector's receipts did not come in time")
        }
    }

    /// Writes stream `index` until `deadline`; returns the bytes written and the error that stopped it.
    private static func write(
        _ index: Int,
        until deadline: ContinuousClock.Instant,
        session: Session,
        peer: PeerID,
        pattern: StreamPattern,
        counters: Counters
    ) async -> (Int, String?) {
        var offset = 0
        do {
            let stream = try session.startStream(withName: "\(StreamTest.oneWayPrefix)\(index)", toPeer: peer)
            while ContinuousClock.now < deadline {
                // A slice of the pattern's table: in plaintext the socket writes it where it is.
                let bytes = pattern.buffer(index: index, offset: offset, count: StreamTest.writeSize)
                try await stream.write(bytes)
                offset += bytes.readableBytes
                counters.sent(bytes.readableBytes, stream: index)
            }
            try stream.finish()
            return (offset, nil)
        } catch {
            return (offset, "stream \(index): writing: \(error)")
        }
    }

    // MARK: - Runner to reflector, in messages

    /// `--size`: messages of `size` bytes one way for `time`, all the pattern's first bytes, counted and
    /// checked by the reflector, which answers the end with a receipt.
    private static func sendMessages(
        size: Int,
        for time: Duration,
        session: Session,
        peer: PeerID,
        inbox: TransferInbox,
        pattern: StreamPattern,
        counters: Counters
    ) async -> BulkDirection {
        var message = Data(count: size)
        message.withUnsafeMutableBytes { pattern.write(index: 0, offset: 0, into: $0) }
        let started = ContinuousClock.now
        let deadline = started + time
        var sent = 0
        var errors: [String] = []
        do {
            try await session.send(MessageFlow.start(size: size).encoded(), toPeers: [peer])
            while ContinuousClock.now < deadline {
                try await session.send(message, toPeers: [peer])
                sent += size
                counters.sent.add(size, ordering: .relaxed)
            }
            try await session.send(MessageFlow.end(size: size).encoded(), toPeers: [peer])
        } catch {
            errors.append("sending: \(error)")
        }
        let receipt = try? await withTimeout(grace, orThrow: .disconnected("no receipt")) {
            for try await message in inbox.messages {
                if let receipt = StreamReceipt(decoding: message), receipt.name == MessageFlow.receiptName {
                    return receipt
                }
            }
            throw BenchError.disconnected("the session ended")
        }
        if receipt == nil { errors.append("no receipt from the reflector") }
        let seconds = started.duration(to: .now)
        return BulkDirection(
            sentBytes: sent,
            receivedBytes: receipt?.bytes ?? 0,
            seconds: seconds.seconds,
            corruptedStreams: receipt?.firstMismatchOffset == nil ? 0 : 1,
            failedStreams: errors.count,
            errors: errors
        )
    }

    // MARK: - Reflector to runner

    static func receiveReverse(
        _ count: Int,
        for time: Duration,
        session: Session,
        peer: PeerID,
        inbox: TransferInbox,
        pattern: StreamPattern,
        counters: Counters
    ) async -> BulkDirection {
        let started = ContinuousClock.now
        // This direction's own bytes: the counters may count other flows too (the responsiveness test's).
        let own = Counters()
        let milliseconds = Int(time.components.seconds * 1_000 + time.components.attoseconds / 1_000_000_000_000_000)
        var errors: [String] = []
        for index in 0..<count {
            do {
                try await session.send(BulkRequest(index: index, milliseconds: milliseconds).encoded(), toPeers: [peer])
            } catch {
                errors.append("stream \(index): asking the reflector: \(error)")
            }
        }
        let results = await withTaskGroup(of: (Int, Bool, String?)?.self) { group -> [(Int, Bool, String?)] in
            group.addTask {
                try? await Task.sleep(until: started + time + grace, clock: .continuous)
                return nil
            }
            group.addTask {
                await withTaskGroup(of: (Int, Bool, String?).self) { readers -> (Int, Bool, String?)? in
                    var opened = 0
                    do {
                        for try await stream in inbox.streams {
                            guard stream.name.hasPrefix(BulkRequest.streamPrefix),
                                let index = Int(stream.name.dropFirst(BulkRequest.streamPrefix.count)),
                                (0..<count).contains(index)
                            else {
                                stream.cancel()
                                continue
                            }
                            readers.addTask(executorPreference: session.streamExecutor) {
                                await read(stream, index: index, pattern: pattern, counters: counters, own: own)
                            }
                            opened += 1
                            if opened == count { break }
                        }
                    } catch {}
                    return nil
                }
            }
            var results: [(Int, Bool, String?)] = []
            for await result in group {
                if let result { results.append(result) } else { break }
            }
            group.cancelAll()
            return results
        }
        let seconds = started.duration(to: .now)
        errors += results.compactMap(\.2)
        return BulkDirection(
            sentBytes: 0,
            receivedBytes: own.received.load(ordering: .relaxed),
            seconds: seconds.seconds,
            corruptedStreams: results.filter(\.1).count,
            failedStreams: errors.count,
            errors: errors
        )
    }

    /// Reads one reverse stream to its end, checking its bytes; returns the bytes, whether one differed,
    /// and the error that stopped it.
    private static func read(
        _ stream: IncomingStream,
        index: Int,
        pattern: StreamPattern,
        counters: Counters,
        own: Counters
    ) async -> (Int, Bool, String?) {
        var offset = 0
        var corrupted = false
        do {
            for try await chunk in stream {
                if !corrupted {
                    corrupted =
                        chunk.withUnsafeBytes { pattern.firstMismatch(in: $0, index: index, offset: offset) } != nil
                }
                offset += chunk.count
                counters.received(chunk.count, stream: index)
                own.received.add(chunk.count, ordering: .relaxed)
            }
            return (offset, corrupted, nil)
        } catch {
            return (offset, corrupted, "reverse stream \(index): reading: \(error)")
        }
    }
}
