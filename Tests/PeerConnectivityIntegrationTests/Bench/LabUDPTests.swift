import Foundation
import PeerConnectivityTesting
import Testing

/// `Scripts/lab-udp.sh` from the test suite, in its sanity mode: between two hosts of a lab whose links are shaped
/// to 20 Mbit/s, `test-runner --test bulk -u` at 10 Mbit/s arrives whole at that rate, at 40 Mbit/s fills the
/// link and no more, and a TCP bulk run prints its rates in Mbit/s. The comparison with iperf3 in the same run
/// is the script's strict mode, run by hand (docs/BENCHMARK.md). Runs only as root with the lab's tools
/// (`Scripts/setup.sh --lab`); about 20 seconds. `Scripts/test.sh` runs it alone: the rates it checks are the
/// sender's pacing, which the rest of the suite in parallel would disturb.
@Suite("UDP at a bitrate in the lab", .timeLimit(.minutes(3 * slowdown)))
struct LabUDPTests {
    /// Why the lab cannot run here, or nil when it can.
    static let unavailable = LabAvailability.unavailable(needing: [
        "ip", "nsenter", "unshare", "tc", "dbus-daemon", "avahi-daemon", "python3",
    ])

    @Test(
        "-u -b 10M over 20 Mbit/s: all of it at 10 Mbit/s; -b 40M: the link's rate; TCP bulk prints Mbit/s",
        .enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? ""))
    )
    func halfAndTwiceTheLink() async throws {
        // A prefix and subnet of its own, so that a lab someone has up, or another run of the suite, is left alone.
        let number = Int.random(in: 100...199)
        var environment = ProcessInfo.processInfo.environment
        environment["LAB_BIN"] = DemoProcess.binDirectory.path
        environment["LAB_SKIP_SETUP"] = "1"
        environment["UDP_CHECKS"] = "sanity"
        environment["UDP_TIME_S"] = "5"
        environment["UDP_PREFIX"] = "p2pd\(number)"
        environment["UDP_DIR"] = "/run/p2p-udp-\(number)"
        environment["UDP_SUBNET"] = "10.\(number).2"
        let outcome = try await ChildProcess.run(
            "/bin/bash",
            arguments: [repositoryRoot().appendingPathComponent("Scripts/lab-udp.sh").path],
            environment: environment,
            timeout: .seconds(120 * slowdown)
        )
        let lines = outcome.output.split(separator: "\n").filter { $0.hasPrefix("PASS ") || $0.hasPrefix("FAIL ") }
        #expect(outcome.status == 0, "lab-udp.sh exited \(outcome.status):\n\(outcome.output)")
        #expect(lines.count == 3 && lines.allSatisfy { $0.hasPrefix("PASS") }, "\(outcome.output)")
    }
}
