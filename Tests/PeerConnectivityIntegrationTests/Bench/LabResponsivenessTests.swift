import Foundation
import PeerConnectivityTesting
import Testing

/// `Scripts/lab-responsiveness.sh` from the test suite, in its sanity mode: between two hosts of a lab whose
/// links are shaped to 20 Mbit/s, `test-runner --test responsiveness` sees a bloated buffer (300 ms) fill under
/// its load and a shallow one (10 ms) stay short, the self probes' too (their flow holds its unsent bytes at the
/// low watermark), with probes of every kind back and an RPM in every phase.
/// The comparison with ping under iperf3's load is the script's strict mode, run by hand (docs/BENCHMARK.md).
/// Runs only as root with the lab's tools (`Scripts/setup.sh --lab`); about a minute and a half.
@Suite("Latency under load in the lab", .timeLimit(.minutes(4 * slowdown)))
struct LabResponsivenessTests {
    /// Why the lab cannot run here, or nil when it can.
    static let unavailable = LabAvailability.unavailable(needing: [
        "ip", "nsenter", "unshare", "tc", "dbus-daemon", "avahi-daemon", "python3",
    ])

    @Test(
        "300 ms of buffer: the loaded round trip at least 50 ms and 3x the idle one; 10 ms: under 100 ms, self too",
        .enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? ""))
    )
    func bloatedAndShallow() async throws {
        // A prefix and subnet of its own, so that a lab someone has up, or another run of the suite, is left alone.
        let number = Int.random(in: 100...199)
        var environment = ProcessInfo.processInfo.environment
        environment["LAB_BIN"] = DemoProcess.binDirectory.path
        environment["LAB_SKIP_SETUP"] = "1"
        environment["RESPONSIVENESS_CHECKS"] = "sanity"
        environment["RESPONSIVENESS_PHASE_S"] = "5"
        environment["RESPONSIVENESS_PREFIX"] = "p2pq\(number)"
        environment["RESPONSIVENESS_DIR"] = "/run/p2p-responsiveness-\(number)"
        environment["RESPONSIVENESS_SUBNET"] = "10.\(number).1"
        let outcome = try await ChildProcess.run(
            "/bin/bash",
            arguments: [repositoryRoot().appendingPathComponent("Scripts/lab-responsiveness.sh").path],
            environment: environment,
            timeout: .seconds(200 * slowdown)
        )
        let lines = outcome.output.split(separator: "\n").filter { $0.hasPrefix("PASS ") || $0.hasPrefix("FAIL ") }
        #expect(outcome.status == 0, "lab-responsiveness.sh exited \(outcome.status):\n\(outcome.output)")
        // Two checks per direction with the bloated buffer, three with the shallow one.
        #expect(lines.count == 10 && lines.allSatisfy { $0.hasPrefix("PASS") }, "\(outcome.output)")
    }
}
