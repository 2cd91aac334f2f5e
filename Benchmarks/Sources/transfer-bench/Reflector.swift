import Foundation
import PeerConnectivity
import PeerConnectivityBench

/// The child's session work: one task takes the events and hands the slow work (reading a stream,
/// deleting a received file) to tasks of its own, so that echoes are answered at once.
struct Reflector: Sendable {
    let session: Session
    /// Whether received resources are kept, unreported (a failed one is still said on standard error).
    var keepsResources = false

    func run() async {
        for await event in session.events {
            switch event {
            case .dataReceived(let data, let peer, _):
                await answer(data, from: peer)
            case .streamReceived(let stream):
                Task(executorPreference: StreamExecutor(streamName: stream.name).preference(for: session)) {
                    await drain(stream)
                }
            case .finishedReceivingResource(let name, let peer, let result):
                if keepsResources {
                    if case .failure(let error) = result { Self.complain("\(name): \(error)") }
                    continue
                }
                Task { await discard(name: name, from: peer, result: result) }
            case .peerStateChanged, .startedReceivingResource:
                continue
            }
        }
    }

    private func answer(_ data: Data, from peer: PeerID) async {
        switch data.first.flatMap(MessageKind.init(rawValue:)) {
        case .echo:
            await send(data, to: peer)
        case .resetPeak:
            ProcessSample.resetPeak()
            await send(sample: ProcessSample.current(), to: peer)
        case .sample:
            await send(sample: ProcessSample.current(), to: peer)
        case .transferEnded, nil:
            Self.complain("unexpected message of \(data.count) bytes")
        }
    }

    /// Reads a stream to its end, counting and dropping the bytes, then reports.
    private func drain(_ stream: IncomingStream) async {
        var report = TransferReport(name: stream.name, bytes: 0)
        do {
            for try await chunk in stream {
                report.bytes += chunk.count
            }
        } catch {
            report.error = "\(error)"
        }
        await send(report: report, to: stream.peer)
    }

    /// Deletes a received resource, then reports its length.
    private func discard(name: String, from peer: PeerID, result: Result<URL, TransferError>) async {
        var report = TransferReport(name: name, bytes: 0)
        switch result {
        case .success(let url):
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            report.bytes = (attributes?[.size] as? NSNumber)?.intValue ?? -1
            do { try FileManager.default.removeItem(at: url) } catch { report.error = "deleting: \(error)" }
        case .failure(let error):
            report.error = "\(error)"
        }
        await send(report: report, to: peer)
    }

    private func send(sample: ProcessSample, to peer: PeerID) async {
        do { await send(try MessageKind.sample.message(sample), to: peer) } catch { Self.complain("\(error)") }
    }

    private func send(report: TransferReport, to peer: PeerID) async {
        do { await send(try MessageKind.transferEnded.message(report), to: peer) } catch { Self.complain("\(error)") }
    }

    private func send(_ data: Data, to peer: PeerID) async {
        do {
            try await session.send(data, toPeers: [peer], mode: .reliable)
        } catch {
            Self.complain("send: \(error)")
        }
    }

    /// Says on standard error what went wrong; the parent then times out or sees a report with an error.
    static func complain(_ text: String) {
        FileHandle.standardError.write(Data("transfer-bench serve: \(text)\n".utf8))
    }
}
