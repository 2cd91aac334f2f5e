import Foundation
import PeerConnectivity

/// The resource test: one file of `--bytes` (``StreamPattern`` bytes, made in a temporary folder and
/// hashed on the way), sent `--warmup` + `--count` times with `sendResource`; the reflector confirms each
/// with the size and SHA-256 of the file it received, which must be the runner's. Each transfer and its
/// confirmation must be done within `--duration`, else it is cancelled and counts as timed out.
enum ResourceTest {
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
        let bytes = plan.bytes ?? 0
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("test-runner-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("resource.bin")
        let digest = try FileDigest.writePatternFile(at: file, size: bytes, index: 0, pattern: StreamPattern())

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
            let result = await transfer(
                ResourceResult(index: index, name: "bench-warmup-\(token)-\(index)", bytes: bytes),
                file: file,
                digest: digest,
                session: driver.session,
                peer: peer,
                confirmations: confirmations,
                duration: plan.durationSeconds
            )
            if result.outcome == .completed { warmupCompleted += 1 }
        }
        var results: [ResourceResult] = []
        for index in 0..<plan.count {
            results.append(
                await transfer(
                    ResourceResult(index: index, name: "bench-resource-\(token)-\(index)", bytes: bytes),
                    file: file,
                    digest: digest,
                    session: driver.session,
                    peer: peer,
                    confirmations: confirmations,
                    duration: plan.durationSeconds
                )
            )
        }
        return ResourceTestResult(
            transfers: results,
            bytes: bytes,
            sha256: digest.sha256,
            warmupSent: plan.warmup,
            warmupCompleted: warmupCompleted
        )
    }

    /// Sends the file once and waits for its confirmation, within `duration` seconds.
    private static func transfer(
        _ planned: ResourceResult,
        file: URL,
        digest: FileDigest,
        session: Session,
        peer: PeerID,
        confirmations: ResourceConfirmations,
        duration: Double
    ) async -> ResourceResult {
        var result = planned
        let name = planned.name
        let started = MonotonicClock.now()
        let transfer: ResourceTransfer
        do {
            transfer = try session.sendResource(at: file, withName: name, toPeer: peer)
        } catch {
            result.error = "sendResource: \(error)"
            return result
        }
        let timer = Task {
            try await Task.sleep(for: .milliseconds(Int(duration * 1_000)))
            await confirmations.abandon(name)
            transfer.cancel()
        }
        defer { timer.cancel() }
        let sent: UInt64
        do {
            try await transfer.wait()
            sent = MonotonicClock.now()
        } catch {
            result.outcome = await confirmations.wasAbandoned(name) ? .timedOut : .failed
            result.error = "\(error)"
            return result
        }
        result.transferNanoseconds = sent - started
        result.bytesPerSecond = sent > started ? Double(planned.bytes) / (Double(sent - started) / 1e9) : 0
        guard let (confirmation, at) = await confirmations.take(name) else {
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
        if let error = confirmation.error {
            result.error = "the reflector: \(error)"
        } else if confirmation.size == digest.size, confirmation.sha256 == digest.sha256 {
            result.outcome = .completed
        } else {
            result.outcome = .corrupted
            result.error = "the reflector received \(confirmation.size ?? 0) bytes with another SHA-256"
        }
        return result
    }
}
