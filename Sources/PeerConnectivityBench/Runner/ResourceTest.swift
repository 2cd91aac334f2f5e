import Foundation
import PeerConnectivity

/// The resource test: one file of `--bytes` (``StreamPattern`` bytes, made in a temporary folder and
/// hashed on the way) or the file `--file` names (hashed first), sent `--warmup` + `--count` times with
/// `sendResource`; the reflector confirms each with the size and SHA-256 of the file it received, which must
/// be the runner's. Each transfer and its confirmation must be done within `--duration`, else it is cancelled
/// and counts as timed out.
///
/// With `--interrupt-at PCT`, each measured transfer's link is cut with `abortConnection` (as a crash
/// would) once the sender's progress reaches PCT % of the file; both sessions have reconnection on, so
/// the link is resumed and the transfer goes on, sending only the blocks the reflector does not hold.
///
/// The folder test is the same with a folder sent whole: `--files` files made from a fixed seed
/// (``FolderDigest/writeTree(at:files:seed:pattern:)``) or `--folder PATH`; the reflector confirms the
/// files, bytes and ``FolderDigest`` of the tree it received. With `--beside-echo RATE`, probes on the
/// same session measure the round trip beside each transfer (``BesideEcho``).
enum ResourceTest {
    /// The seed of the sizes of the folder test's files: every run sends the same tree.
    static let folderSeed: UInt64 = 22

    /// What each transfer sends, and what the reflector's confirmation must say.
    struct Payload {
        /// The file or folder.
        var url: URL
        /// Its bytes (a folder's: its files').
        var bytes: Int
        /// Its SHA-256 (a folder's: its ``FolderDigest``).
        var sha256: String
        /// A folder's files; nil for a file.
        var files: Int?
    }

    /// The runner's reconnection when `--interrupt-at` cuts the link: the library's defaults, a 30 s
    /// window. The reflector's session must have reconnection too (the `reflector` tool's default).
    static var reconnection: Session.Reconnection {
        var reconnection = Session.Reconnection.default
        reconnection.window = .seconds(30)
        return reconnection
    }

    /// What to check when a link cut by `--interrupt-at` was not resumed.
    static let notResumed =
        "it was not resumed; the reflector must give this runner reconnection (one that knows --interrupt-at "
        + "does, unless run with --no-reconnection), and either host must reach the other's session listener, "
        + "an ephemeral TCP port, within 30 s"

    /// Runs the test on a connected session.
    ///
    /// - Parameters:
    ///   - plan: bytes, count, warm-up and duration.
    ///   - driver: the session to the reflector, with its inbox.
    /// - Returns: the test's section of the document.
    /// - Throws: when the file cannot be made, or the session has no reflector.
    static func run(_ plan: TestPlan, driver: SessionEchoDriver) async throws -> ResourceTestResult {
        guard let peer = driver.reflectorPeer, let inbox = driver.inbox else {
            throw BenchError.disconnected("not connected")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("test-runner-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let payload = try makePayload(plan, in: folder)
        let kind = payload.files == nil ? "resource" : "folder"
        let besideEcho = plan.besideEchoRate.map { BesideEcho(rate: $0, driver: driver, peer: peer) }

        let confirmations = ResourceConfirmations()
        let feeder = Task {
            do {
                for try await message in inbox.messages {
                    let now = MonotonicClock.now()
                    if let confirmation = ResourceConfirmation(decoding: message) {
                        await confirmations.deliver(confirmation, at: now)
                    }
                }
                await confirmations.end("the session ended")
            } catch {
                await confirmations.end("\(error)")
            }
        }
        defer { feeder.cancel() }

        let token = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        var warmupCompleted = 0
        for index in 0..<plan.warmup {
            var planned = ResourceResult(index: index, name: "bench-warmup-\(token)-\(index)", bytes: payload.bytes)
            planned.files = payload.files
            let result = await transfer(
                planned,
                payload: payload,
                session: driver.session,
                peer: peer,
                confirmations: confirmations,
                duration: plan.durationSeconds,
                interruptAt: nil,
                besideEcho: nil
            )
            if result.outcome == .completed { warmupCompleted += 1 }
        }
        await besideEcho?.measureIdle()
        var results: [ResourceResult] = []
        for index in 0..<plan.count {
            var planned = ResourceResult(index: index, name: "bench-\(kind)-\(token)-\(index)", bytes: payload.bytes)
            planned.files = payload.files
            results.append(
                await transfer(
                    planned,
                    payload: payload,
                    session: driver.session,
                    peer: peer,
                    confirmations: confirmations,
                    duration: plan.durationSeconds,
                    interruptAt: plan.interruptAtPercent,
                    besideEcho: besideEcho
                )
            )
        }
        return ResourceTestResult(
            transfers: results,
            bytes: payload.bytes,
            sha256: payload.sha256,
            warmupSent: plan.warmup,
            warmupCompleted: warmupCompleted,
            files: payload.files,
            besideEcho: await besideEcho?.result()
        )
    }

    /// The file of `--bytes` or the folder of `--files` made in `scratch`, or the file `--file` or the
    /// folder `--folder` names, with its digest.
    private static func makePayload(_ plan: TestPlan, in scratch: URL) throws -> Payload {
        guard plan.test == .folder else {
            if let path = plan.filePath {
                let url = URL(fileURLWithPath: path)
                guard FileDigest.isRegularFile(url) else {
                    throw BenchError.invalidPlan("--file \(path) is not a regular file")
                }
                let digest = try FileDigest(of: url)
                return Payload(url: url, bytes: digest.size, sha256: digest.sha256, files: nil)
            }
            let file = scratch.appendingPathComponent("resource.bin")
            let bytes = plan.bytes ?? 0
            let digest = try FileDigest.writePatternFile(at: file, size: bytes, index: 0, pattern: StreamPattern())
            return Payload(url: file, bytes: bytes, sha256: digest.sha256, files: nil)
        }
        let digest: FolderDigest
        let url: URL
        if let path = plan.folderPath {
            url = URL(fileURLWithPath: path)
            guard FolderDigest.isFolder(url) else { throw BenchError.invalidPlan("--folder \(path) is not a folder") }
            digest = try FolderDigest(of: url)
        } else {
            url = scratch.appendingPathComponent("tree")
            digest = try FolderDigest.writeTree(
                at: url,
                files: plan.files ?? 0,
                seed: folderSeed,
                pattern: StreamPattern()
            )
        }
        return Payload(url: url, bytes: digest.bytes, sha256: digest.sha256, files: digest.files)
    }

    /// Sends the file or folder once and waits for its confirmation, within `duration` seconds; cuts the
    /// link once `interruptAt` percent of the file is sent, when given; probes beside it, when given.
    private static func transfer(
        _ planned: ResourceResult,
        payload: Payload,
        session: Session,
        peer: PeerID,
        confirmations: ResourceConfirmations,
        duration: Double,
        interruptAt: Double?,
        besideEcho: BesideEcho?
    ) async -> ResourceResult {
        var result = planned
        let name = planned.name
        let started = MonotonicClock.now()
        let transfer: ResourceTransfer
        do {
            transfer = try session.sendResource(at: payload.url, withName: name, toPeer: peer)
        } catch {
            result.error = "sendResource: \(error)"
            return result
        }
        let prober = besideEcho?.start()
        defer { prober?.cancel() }
        let timer = Task {
            try await Task.sleep(for: .milliseconds(Int(duration * 1_000)))
            await confirmations.abandon(name)
            transfer.cancel()
        }
        defer { timer.cancel() }
        let cutter = interruptAt.map { percent in
            Task { await cut(transfer, at: Int64(Double(planned.bytes) * percent / 100), session: session, peer: peer) }
        }
        defer { cutter?.cancel() }
        let sent: UInt64
        do {
            try await transfer.wait()
            sent = MonotonicClock.now()
            prober?.cancel()
        } catch {
            cutter?.cancel()
            result.interruptedAtBytes = await cutter?.value
            result.statistics = transfer.statistics
            result.outcome = await confirmations.wasAbandoned(name) ? .timedOut : .failed
            result.error = "\(error)"
            if let cutAt = result.interruptedAtBytes {
                result.error? += " (--interrupt-at cut the link at \(cutAt) bytes: \(notResumed))"
            }
            return result
        }
        // The cut is long done when the whole file is sent; cancelled, a cutter that had not cut yet gives nil.
        cutter?.cancel()
        let interruptedAt = await cutter?.value
        let statistics = transfer.statistics
        result.statistics = statistics
        if let interruptedAt {
            result.interruptedAtBytes = interruptedAt
            result.bytesSentAfterResume =
                statistics.bytesSent >= interruptedAt ? statistics.bytesSent - interruptedAt : 0
            result.resumedBytes = statistics.bytesResumed
        }
        result.transferNanoseconds = sent - started
        result.bytesPerSecond = sent > started ? Double(planned.bytes) / (Double(sent - started) / 1e9) : 0
        var taken = await confirmations.take(name)
        if interruptedAt != nil, let (confirmation, _) = taken, confirmation.error != nil {
            // The reflector's session saw the cut attempt fail, and said so before the resumed one completed:
            // that is not the file's confirmation, which comes next.
            taken = await confirmations.take(name)
        }
        guard let (confirmation, at) = taken else {
            if await confirmations.wasAbandoned(name) {
                result.outcome = .timedOut
                result.error = "no confirmation within --duration"
            } else {
                result.error = "no confirmation: \(await confirmations.endReason ?? "none came")"
            }
            return result
        }
        result.confirmationNanoseconds = at > sent ? at - sent : 0
        result.confirmedSize = confirmation.size
        result.confirmedSHA256 = confirmation.sha256
        result.confirmedFiles = confirmation.files
        if let error = confirmation.error {
            result.error = "the reflector: \(error)"
        } else if confirmation.size == payload.bytes, confirmation.sha256 == payload.sha256,
            confirmation.files == payload.files
        {
            result.outcome = .completed
        } else {
            result.outcome = .corrupted
            result.error =
                "the reflector received \(confirmation.files.map { "\($0) files of " } ?? "")"
                + "\(confirmation.size ?? 0) bytes with another SHA-256"
        }
        if let interruptAt, interruptedAt == nil, result.outcome == .completed {
            result.outcome = .failed
            result.error = "the transfer ended before --interrupt-at \(interruptAt) was reached: nothing was cut"
        }
        return result
    }

    /// Waits until `transfer` has sent `threshold` bytes of the file, then closes its connection as a
    /// crash would. Progress is polled every millisecond: a cut lands within a few hundred kilobytes of
    /// the threshold at the speeds of a loopback.
    ///
    /// - Returns: the bytes of the file sent when the link was cut; nil when the transfer ended, or
    ///   the task was cancelled, first.
    private static func cut(_ transfer: ResourceTransfer, at threshold: Int64, session: Session, peer: PeerID) async
        -> UInt64?
    {
        let progress = transfer.progress
        while progress.completedUnitCount < threshold {
            guard !Task.isCancelled, !progress.isCancelled else { return nil }
            try? await Task.sleep(for: .milliseconds(1))
        }
        guard !Task.isCancelled else { return nil }
        let sent = transfer.bytesSent
        session.abortConnection(to: peer)
        return sent
    }
}
