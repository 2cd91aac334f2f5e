import Dispatch
import Foundation
import PeerConnectivity
import PeerConnectivityBench

/// The sending side's measurements, over a session connected to the `serve` child.
struct BenchClient: Sendable {
    typealias Transfer = TransferBenchResult.Transfer

    /// Bytes per echo message.
    static let echoBytes = 64
    /// Bytes per `OutgoingStream.write` call.
    static let streamWriteBytes = 1 << 20

    let session: Session
    let peer: PeerID
    let inbox: Inbox

    /// Round trips of 64-byte messages, in nanoseconds: `count` of them, or fewer if `keepGoing`
    /// turns false first.
    func echoes(count: Int, while keepGoing: @Sendable () -> Bool = { true }) async throws -> [UInt64] {
        var message = Data(repeating: 0x42, count: Self.echoBytes)
        message[0] = MessageKind.echo.rawValue
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        while samples.count < count, keepGoing() {
            let start = DispatchTime.now().uptimeNanoseconds
            try await session.send(message, toPeers: [peer], mode: .reliable)
            guard try await inbox.nextEcho() == message else { throw TransferBenchError("an echo came back changed") }
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return samples
    }

    /// Sends `file` as a resource and waits until the receiver has kept it; meanwhile measures up
    /// to `echoes` round trips.
    func sendResource(_ file: URL, bytes: Int, echoes: Int) async throws -> (Transfer, echoes: [UInt64]) {
        let ((seconds, samples), sender, receiver) = try await measured {
            let finished = Flag()
            let start = ContinuousClock.now
            let transfer = try session.sendResource(at: file, withName: file.lastPathComponent, toPeer: peer)
            let waiter = Task {
                defer { finished.raise() }
                try await transfer.wait()
                return start.duration(to: .now)
            }
            let samples = echoes > 0 ? try await self.echoes(count: echoes) { !finished.isRaised } : []
            let elapsed = try await waiter.value
            let report = try await inbox.nextReport()
            guard report.error == nil, report.bytes == bytes else {
                throw TransferBenchError("the receiver got \(report.bytes) of \(bytes) bytes: \(report.error ?? "")")
            }
            return (elapsed.seconds, samples)
        }
        let transfer = Transfer(
            bytes: bytes,
            seconds: seconds,
            bytesPerSecond: Double(bytes) / seconds,
            sender: sender,
            receiver: receiver
        )
        return (transfer, samples)
    }

    /// Writes `totalBytes` over `count` streams at once, until the receiver has read each to its end;
    /// both ends' tasks run on `executor`.
    func streams(_ count: Int, totalBytes: Int, on executor: StreamExecutor) async throws -> Transfer {
        let block = try RandomBytes.data(count: Self.streamWriteBytes)
        let (seconds, sender, receiver) = try await measured {
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    // The first stream also carries what does not divide evenly.
                    let share = totalBytes / count + (index == 0 ? totalBytes % count : 0)
                    group.addTask(executorPreference: executor.preference(for: session)) {
                        let stream = try session.startStream(withName: executor.streamName(index), toPeer: peer)
                        var remaining = share
                        while remaining > 0 {
                            let length = min(remaining, block.count)
                            try await stream.write(length == block.count ? block : block.prefix(length))
                            remaining -= length
                        }
                        try stream.finish()
                    }
                }
                try await group.waitForAll()
            }
            var received = 0
            for _ in 0..<count {
                let report = try await inbox.nextReport()
                if let error = report.error { throw TransferBenchError("stream \(report.name) failed: \(error)") }
                received += report.bytes
            }
            guard received == totalBytes else {
                throw TransferBenchError("the receiver read \(received) of \(totalBytes) bytes")
            }
            return start.duration(to: .now).seconds
        }
        return Transfer(
            bytes: totalBytes,
            seconds: seconds,
            bytesPerSecond: Double(totalBytes) / seconds,
            sender: sender,
            receiver: receiver
        )
    }

    /// Runs `body` between samples of both processes, each peak reset first.
    private func measured<T>(
        _ body: () async throws -> T
    ) async throws -> (T, sender: PhaseUsage, receiver: PhaseUsage) {
        try await session.send(MessageKind.resetPeak.message, toPeers: [peer], mode: .reliable)
        let receiverBefore = try await inbox.nextSample()
        ProcessSample.resetPeak()
        let senderBefore = ProcessSample.current()
        let value = try await body()
        let senderAfter = ProcessSample.current()
        try await session.send(MessageKind.sample.message, toPeers: [peer], mode: .reliable)
        let receiverAfter = try await inbox.nextSample()
        return (
            value,
            PhaseUsage(from: senderBefore, to: senderAfter),
            PhaseUsage(from: receiverBefore, to: receiverAfter)
        )
    }
}
