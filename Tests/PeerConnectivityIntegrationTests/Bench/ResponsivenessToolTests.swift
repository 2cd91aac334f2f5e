import Foundation
import PeerConnectivityBench
import PeerConnectivityTesting
import Testing

/// Latency under load through the real tools on loopback: the four phases in order, each with its load,
/// both kinds of probes answered and an RPM; the intervals name their phase; the loaded connection's
/// `TCP_NOTSENT_LOWAT` is said. No figure is judged by its size: the machine may be loaded.
@Suite("test-runner --test responsiveness", .serialized, .timeLimit(.minutes(3 * slowdown)))
struct ResponsivenessToolTests {
    @Test("idle, download, upload and both: each phase's load, probes of both kinds back, an RPM and its band")
    func phases() async throws {
        let reflector = try ToolProcess(
            "reflector",
            [
                "--no-dnssd", "--bind", "127.0.0.1", "--port", "0", "--raw-echo-port", "0", "--udp-ports", "ephemeral",
                "--encryption", "none", "--name", "responsive",
            ]
        )
        defer { withExtendedLifetime(reflector) {} }
        let ready = try #require(try await reflector.line(containing: " ready "))
        let port = try #require(ToolProcess.value("port", in: ready))
        let folder = try ScratchDirectory("responsiveness").url
        for lowat in [nil, "0"] as [String?] {
            let path = folder.appendingPathComponent("run-\(lowat ?? "default").json").path
            let run = try ToolProcess(
                "test-runner",
                [
                    "run", "--test", "responsiveness", "-c", "127.0.0.1:\(port)", "-t", "1", "-P", "2",
                    "--encryption", "none", "--output", path,
                ] + (lowat.map { ["--not-sent-lowat", $0] } ?? [])
            )
            #expect(try await run.exitStatus() == 0, "\(run.output) \(run.errors)")
            let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: path)))
            let result = try #require(document.responsiveness)
            #expect(result.phases.map(\.name) == [.idle, .download, .upload, .both])
            #expect(result.loadFlows == 2 && result.phaseSeconds == 1)
            #expect(
                result.runnerNotSentLowWatermark
                    == (lowat == nil ? RunnerConfiguration.defaultNotSentLowWatermark : nil)
            )
            #expect(
                result.reflectorNotSentLowWatermark == result.runnerNotSentLowWatermark,
                "the reflector's hello says"
            )
            for phase in result.phases {
                #expect((phase.download != nil) == [.download, .both].contains(phase.name), "\(phase.name)")
                #expect((phase.upload != nil) == [.upload, .both].contains(phase.name), "\(phase.name)")
                for direction in [phase.download, phase.upload].compactMap({ $0 }) {
                    #expect(direction.receivedBytes > 0 && direction.failedStreams == 0, "\(phase.name): \(direction)")
                    #expect(direction.corruptedStreams == 0, "\(phase.name): every byte of the load checked")
                }
                if let upload = phase.upload {
                    #expect(upload.receivedBytes == upload.sentBytes, "\(phase.name): the reflector read every byte")
                }
                #expect(phase.foreign.answered > 0, "\(phase.name): \(phase)")
                // The self probes travel in the load: an idle phase has none.
                #expect((phase.selfProbes.answered > 0) == (phase.name != .idle), "\(phase.name): \(phase)")
                #expect(
                    phase.foreign.answered <= phase.foreign.sent && phase.selfProbes.answered <= phase.selfProbes.sent
                )
                let rpm = try #require(phase.rpm, "\(phase.name)")
                #expect(phase.rpmBand == ResponsivenessScore.band(rpm))
            }
            // The intervals name their phase, in the phases' order.
            let named = try #require(document.intervals).compactMap(\.phase)
            #expect(named.first == "idle" && named.last == "both", "\(named)")
            var order = ResponsivenessPhase.Name.allCases.map(\.rawValue)[...]
            for name in named {
                while let first = order.first, first != name { order = order.dropFirst() }
                #expect(!order.isEmpty, "intervals out of phase order: \(named)")
            }
            #expect(run.output.contains("both:") && run.output.contains("RPM "), "\(run.output)")
            #expect(document.failures.isEmpty, "\(document.failures)")
        }
    }
}
