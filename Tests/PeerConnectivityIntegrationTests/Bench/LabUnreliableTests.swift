import Foundation
import PeerConnectivityTesting
import Testing

/// `Scripts/lab-unreliable.sh` from the test suite, with 5 runs per loss: `test-runner --mode unreliable`
/// between two hosts of a lab completes with 10 % and 30 % of the datagrams to the reflector dropped, never
/// saying UDP is blocked, and says it, exit 1, within seconds when all of them are. Runs only as root with
/// the lab's tools and nft installed (`Scripts/setup.sh --lab`); about a minute.
@Suite("Unreliable mode over a lossy link, in the lab", .timeLimit(.minutes(3 * slowdown)))
struct LabUnreliableTests {
    /// Why the lab cannot run here, or nil when it can.
    static let unavailable = LabAvailability.unavailable(needing: [
        "ip", "nsenter", "unshare", "nft", "dbus-daemon", "avahi-daemon", "python3",
    ])

    @Test(
        "10 % and 30 % of the datagrams dropped: every run completes, none says blocked; all dropped: exit 1 in seconds",
        .enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? ""))
    )
    func lossyIsNotBlocked() async throws {
        // A prefix and subnet of its own, so that a lab someone has up, or another run of the suite, is left alone.
        let number = Int.random(in: 100...199)
        var environment = ProcessInfo.processInfo.environment
        environment["LAB_BIN"] = DemoProcess.binDirectory.path
        environment["LAB_SKIP_SETUP"] = "1"
        environment["UNRELIABLE_RUNS"] = "5"
        environment["UNRELIABLE_PREFIX"] = "p2pu\(number)"
        environment["UNRELIABLE_DIR"] = "/run/p2p-unreliable-\(number)"
        environment["UNRELIABLE_SUBNET"] = "10.\(number).0"
        // The script holds a blocked path to 8 s from the runner's start (about 3 s of it the verdict); the
        // suite runs beside it on the machine's cores.
        environment["BLOCKED_LIMIT_S"] = String(15 * slowdown)
        let outcome = try await ChildProcess.run(
            "/bin/bash",
            arguments: [repositoryRoot().appendingPathComponent("Scripts/lab-unreliable.sh").path],
            environment: environment,
            timeout: .seconds(150 * slowdown)
        )
        let lines = outcome.output.split(separator: "\n").filter { $0.hasPrefix("PASS ") || $0.hasPrefix("FAIL ") }
        #expect(outcome.status == 0, "lab-unreliable.sh exited \(outcome.status):\n\(outcome.output)")
        // Each check prints its line as it ends, and again in the summary: 2 per loss, 2 for the blocked path.
        #expect(Set(lines).count == 6 && lines.allSatisfy { $0.hasPrefix("PASS") }, "\(outcome.output)")
    }
}
