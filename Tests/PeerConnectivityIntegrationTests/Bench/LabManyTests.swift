import Foundation
import PeerConnectivityTesting
import Testing

/// `Scripts/lab-many.sh` from the test suite, in its sanity mode: 3 runners on each of 2 lab hosts, their links
/// shaped alike, run bulk tests against one reflector at once; every one completes, every document names the
/// 5 others the reflector served beside it, and Jain's index of their throughputs is printed. The 64 runners
/// from 8 hosts are the script's strict mode, run by hand (docs/BENCHMARK.md). Runs only as root with the lab's
/// tools (`Scripts/setup.sh --lab`); about 15 seconds. `Scripts/test.sh` runs it alone: the shares it checks
/// are the links', which the rest of the suite in parallel would bend through the CPU.
@Suite("Many runners at once in the lab", .timeLimit(.minutes(3 * slowdown)))
struct LabManyTests {
    /// Why the lab cannot run here, or nil when it can.
    static let unavailable = LabAvailability.unavailable(needing: [
        "ip", "nsenter", "unshare", "tc", "dbus-daemon", "avahi-daemon", "python3",
    ])

    @Test(
        "6 runners from 2 hosts at once: all complete, each names the 5 others, the shares are printed",
        .enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? ""))
    )
    func sixRunners() async throws {
        // A prefix and subnet of its own, so that a lab someone has up, or another run of the suite, is left alone.
        let number = Int.random(in: 100...199)
        var environment = ProcessInfo.processInfo.environment
        environment["LAB_BIN"] = DemoProcess.binDirectory.path
        environment["LAB_SKIP_SETUP"] = "1"
        environment["MANY_CHECKS"] = "sanity"
        environment["MANY_PREFIX"] = "p2pm\(number)"
        environment["MANY_DIR"] = "/run/p2p-many-\(number)"
        environment["MANY_SUBNET"] = "10.\(number).4"
        let outcome = try await ChildProcess.run(
            "/bin/bash",
            arguments: [repositoryRoot().appendingPathComponent("Scripts/lab-many.sh").path],
            environment: environment,
            timeout: .seconds(120 * slowdown)
        )
        let lines = outcome.output.split(separator: "\n").filter { $0.hasPrefix("PASS ") || $0.hasPrefix("FAIL ") }
        #expect(outcome.status == 0, "lab-many.sh exited \(outcome.status):\n\(outcome.output)")
        #expect(lines.count == 3 && lines.allSatisfy { $0.hasPrefix("PASS") }, "\(outcome.output)")
        #expect(lines.contains { $0.contains("Jain's index") }, "\(outcome.output)")
    }
}
