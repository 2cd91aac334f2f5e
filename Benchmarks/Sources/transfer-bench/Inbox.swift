import Foundation
import PeerConnectivity
import PeerConnectivityBench

/// The parent's side of the session's events, taken by one task and sorted by kind, so that echo
/// answers, samples and transfer reports can each be awaited on their own.
final class Inbox: Sendable {
    private let echoes: AsyncStream<Data>
    private let samples: AsyncStream<Data>
    private let reports: AsyncStream<Data>
    private let task: Task<Void, Never>

    init(session: Session) {
        let (echoes, echoInput) = AsyncStream.makeStream(of: Data.self)
        let (samples, sampleInput) = AsyncStream.makeStream(of: Data.self)
        let (reports, reportInput) = AsyncStream.makeStream(of: Data.self)
        self.echoes = echoes
        self.samples = samples
        self.reports = reports
        task = Task {
            defer { [echoInput, sampleInput, reportInput].forEach { $0.finish() } }
            for await event in session.events {
                switch event {
                case .dataReceived(let data, _, _):
                    switch data.first.flatMap(MessageKind.init(rawValue:)) {
                    case .echo: echoInput.yield(data)
                    case .sample: sampleInput.yield(data)
                    case .transferEnded: reportInput.yield(data)
                    case .resetPeak, nil: Reflector.complain("unexpected message of \(data.count) bytes")
                    }
                case .peerStateChanged(let peer, .notConnected, let reason):
                    print("\(peer.displayName) disconnected: \(reason.map { "\($0)" } ?? "no reason")")
                    return
                case .peerStateChanged, .streamReceived, .startedReceivingResource, .finishedReceivingResource:
                    continue
                }
            }
        }
    }

    deinit {
        task.cancel()
    }

    /// The next echo answer.
    func nextEcho() async throws -> Data {
        try await Self.next(from: echoes)
    }

    /// The next sample of the child's memory and CPU time.
    func nextSample() async throws -> ProcessSample {
        try MessageKind.value(ProcessSample.self, in: try await Self.next(from: samples))
    }

    /// The next report of a stream or resource that ended at the child.
    func nextReport() async throws -> TransferReport {
        try MessageKind.value(TransferReport.self, in: try await Self.next(from: reports))
    }

    private static func next(from stream: AsyncStream<Data>) async throws -> Data {
        var iterator = stream.makeAsyncIterator()
        guard let data = await iterator.next() else { throw TransferBenchError("the receiving peer disconnected") }
        return data
    }
}
