import Foundation
import PeerConnectivity
import Synchronization

/// The stream test: `--streams` streams of `--bytes` each to the reflector at once, each echoed back on a
/// stream of the same name, every byte of every echo checked against ``StreamPattern``; or, `--one-way`,
/// each read and checked by the reflector, which answers with a ``StreamReceipt``. Bounded by
/// `--duration`: streams not done by then are cancelled and count as timed out.
enum StreamTest {
    /// Bytes handed to one `write` (the library cuts them into 64 KiB chunks).
    static let writeSize = 256 << 10
    /// The prefix of the echoed streams' names; the index follows.
    static let namePrefix = "bench-stream-"
    /// The prefix of the one-way streams' names; the index follows.
    static let oneWayPrefix = "bench-oneway-"

    /// What is known of one stream; times on the monotonic clock.
    private struct Record {
        var started: UInt64?
        var finished: UInt64?
        var sent = 0
        var firstByte: UInt64?
        var lastByte: UInt64?
        var echoed = 0
        var mismatch: Int?
        var ended = false
        var error: String?
    }

    /// Every stream's record, written by its writer and its reader tasks.
    private final class Tracker: Sendable {
        let records: Mutex<[Record]>

        init(count: Int) {
            records = Mutex(Array(repeating: Record(), count: count))
        }

        func update(_ index: Int, _ body: (inout Record) -> Void) {
            records.withLock { body(&$0[index]) }
        }
    }

    /// Runs the test on a connected session.
    ///
    /// - Parameters:
    ///   - plan: streams, bytes and duration.
    ///   - driver: the session to the reflector, with its inbox.
    /// - Returns: the test's section of the document.
    /// - Throws: ``BenchError/disconnected(_:)`` when the session has no reflector or no inbox.
    static func run(_ plan: TestPlan, driver: SessionEchoDriver) async throws -> StreamTestResult {
        guard let peer = driver.reflectorPeer, let inbox = driver.inbox else {
            throw BenchError.disconnected("not connected")
        }
        let count = plan.streams ?? 1
        let bytes = plan.bytes ?? 0
        let oneWay = plan.oneWay ?? false
        let prefix = oneWay ? oneWayPrefix : namePrefix
        let pattern = StreamPattern()
        let tracker = Tracker(count: count)
        let session = driver.session
        var timedOut = false
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<count {
                group.addTask {
                    await write(
                        index,
                        name: "\(prefix)\(index)",
                        bytes: bytes,
                        session: session,
                        peer: peer,
                        pattern: pattern,
                        tracker: tracker
                    )
                    return false
                }
            }
            group.addTask {
                if oneWay {
                    await readReceipts(count: count, inbox: inbox, tracker: tracker)
                } else {
                    await readEchoes(count: count, inbox: inbox, pattern: pattern, tracker: tracker)
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(plan.durationSeconds * 1_000)))
                return !Task.isCancelled
            }
            var done = 0
            for await isTimer in group {
                if isTimer {
                    timedOut = true
                    group.cancelAll()
                } else {
                    done += 1
                    if done == count + 1 { group.cancelAll() }
                }
            }
        }
        let records = tracker.records.withLock { $0 }
        let results = records.enumerated().map { index, record in
            result(index, record, name: "\(prefix)\(index)", bytes: bytes, oneWay: oneWay, timedOut: timedOut)
        }
        let starts = records.compactMap(\.started)
        let firstStart = starts.min() ?? 0
        return StreamTestResult(
            streams: results,
            bytesPerStream: bytes,
            firstStart: firstStart,
            lastWrite: records.compactMap(\.finished).max() ?? firstStart,
            lastEcho: records.compactMap(\.lastByte).max() ?? firstStart,
            oneWay: oneWay
        )
    }

    private static func write(
        _ index: Int,
        name: String,
        bytes: Int,
        session: Session,
        peer: PeerID,
        pattern: StreamPattern,
        tracker: Tracker
    ) async {
        tracker.update(index) { $0.started = MonotonicClock.now() }
        do {
            let stream = try session.startStream(withName: name, toPeer: peer)
            var buffer = Data(count: min(writeSize, max(bytes, 1)))
            var offset = 0
            while offset < bytes {
                let length = min(buffer.count, bytes - offset)
                buffer.withUnsafeMutableBytes { buffer in
                    pattern.write(
                        index: index,
                        offset: offset,
                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<length])
                    )
                }
                try await stream.write(length == buffer.count ? buffer : buffer.prefix(length))
                offset += length
                tracker.update(index) { $0.sent = offset }
            }
            try stream.finish()
            tracker.update(index) { $0.finished = MonotonicClock.now() }
        } catch {
            tracker.update(index) { $0.error = $0.error ?? "writing: \(error)" }
        }
    }

    /// Takes the reflector's echo streams from the inbox and reads each in a task of its own.
    private static func readEchoes(count: Int, inbox: TransferInbox, pattern: StreamPattern, tracker: Tracker) async {
        await withTaskGroup(of: Void.self) { group in
            var opened = 0
            do {
                for try await stream in inbox.streams {
                    guard stream.name.hasPrefix(namePrefix), let index = Int(stream.name.dropFirst(namePrefix.count)),
                        (0..<count).contains(index)
                    else {
                        stream.cancel()
                        continue
                    }
                    group.addTask { await read(stream, index: index, pattern: pattern, tracker: tracker) }
                    opened += 1
                    if opened == count { break }
                }
            } catch {
                for index in 0..<count {
                    tracker.update(index) { if !$0.ended { $0.error = $0.error ?? "\(error)" } }
                }
            }
        }
    }

    /// One-way: takes the reflector's receipts from the inbox until every stream has one.
    private static func readReceipts(count: Int, inbox: TransferInbox, tracker: Tracker) async {
        var received = Set<Int>()
        do {
            for try await message in inbox.messages {
                let now = MonotonicClock.now()
                guard let receipt = StreamReceipt(decoding: message), receipt.name.hasPrefix(oneWayPrefix),
                    let index = Int(receipt.name.dropFirst(oneWayPrefix.count)), (0..<count).contains(index)
                else { continue }
                tracker.update(index) { record in
                    record.lastByte = now
                    record.echoed = receipt.bytes
                    record.mismatch = receipt.firstMismatchOffset
                    if let error = receipt.error { record.error = record.error ?? "the reflector: \(error)" }
                    record.ended = receipt.error == nil
                }
                received.insert(index)
                if received.count == count { return }
            }
        } catch {
            for index in 0..<count where !received.contains(index) {
                tracker.update(index) { $0.error = $0.error ?? "\(error)" }
            }
        }
    }

    private static func read(_ stream: IncomingStream, index: Int, pattern: StreamPattern, tracker: Tracker) async {
        var offset = 0
        var mismatch: Int?
        do {
            for try await chunk in stream {
                let now = MonotonicClock.now()
                if mismatch == nil {
                    mismatch = chunk.withUnsafeBytes { pattern.firstMismatch(in: $0, index: index, offset: offset) }
                        .map { offset + $0 }
                }
                offset += chunk.count
                tracker.update(index) { record in
                    if record.firstByte == nil { record.firstByte = now }
                    record.lastByte = now
                    record.echoed = offset
                    record.mismatch = mismatch
                }
            }
            tracker.update(index) { $0.ended = true }
        } catch {
            tracker.update(index) { $0.error = $0.error ?? "reading the echo: \(error)" }
        }
    }

    private static func result(
        _ index: Int,
        _ record: Record,
        name: String,
        bytes: Int,
        oneWay: Bool,
        timedOut: Bool
    ) -> StreamResult {
        var result = StreamResult(index: index, name: name, bytes: bytes)
        result.sentBytes = record.sent
        result.echoedBytes = record.echoed
        result.firstMismatchOffset = record.mismatch ?? (record.echoed > bytes ? bytes : nil)
        result.error = record.error
        let start = record.started ?? 0
        result.timeToFirstByteNanoseconds = record.firstByte.map { $0 - start }
        result.writeNanoseconds = record.finished.map { $0 - start }
        result.echoNanoseconds = record.lastByte.map { $0 - start }
        if let time = result.writeNanoseconds, time > 0 {
            result.sentBytesPerSecond = Double(record.sent) / (Double(time) / 1e9)
        }
        if let time = result.echoNanoseconds, time > 0 {
            let rate = Double(record.echoed) / (Double(time) / 1e9)
            if oneWay { result.deliveredBytesPerSecond = rate } else { result.receivedBytesPerSecond = rate }
        }
        if result.firstMismatchOffset != nil {
            result.outcome = .corrupted
        } else if record.ended, record.finished != nil, record.echoed == bytes {
            result.outcome = .completed
        } else if timedOut, record.error == nil || record.error?.contains("cancel") == true {
            result.outcome = .timedOut
            result.error = "not done within --duration"
        } else {
            result.outcome = .failed
            if result.error == nil { result.error = "the echo ended after \(record.echoed) of \(bytes) bytes" }
        }
        return result
    }
}
