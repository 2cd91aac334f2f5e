import Foundation
import PeerConnectivityTesting
import Testing

/// `Scripts/lab-reach.sh` from the test suite: an IPv6-only link, a link-local-only link and hosts without
/// nss-mdns, each a lab of network namespaces with their own avahi-daemon, all ending connected. Runs only as
/// root with the lab's tools installed (`Scripts/setup.sh --lab`); about 40 s.
@Suite("Network reach in the lab", .timeLimit(.minutes(3 * slowdown)))
struct LabReachTests {
    /// Why the lab cannot run here, or nil when it can.
    static let unavailable = LabAvailability.unavailable(needing: [
        "ip", "nsenter", "unshare", "dbus-daemon", "dbus-send", "avahi-daemon", "avahi-resolve", "python3", "getent",
    ])

    /// The package's root folder.
    static let root = repositoryRoot()

    @Test(
        "IPv6-only, link-local-only and no-nss-mdns links: every peer connected, over the right addresses",
        .enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? ""))
    )
    func reach() async throws {
        // A prefix of its own, so that a lab someone has up, or another run of the suite, is left alone.
        let letters = "abcdefghijklmnopqrstuvwxyz"
        let tag = String((0..<3).map { _ in letters.randomElement()! })
        var environment = ProcessInfo.processInfo.environment
        environment["LAB_BIN"] = DemoProcess.binDirectory.path
        environment["LAB_SKIP_SETUP"] = "1"
        environment["REACH_PREFIX"] = "p2pr\(tag)"
        environment["REACH_DIR"] = "/run/p2p-reach-\(tag)"
        // The suite runs in parallel on the machine's cores; the script alone holds to 5 s (docs/LAB.md).
        environment["REACH_LIMIT_S"] = "10"
        let outcome = try await ChildProcess.run(
            "/bin/bash",
            arguments: [Self.root.appendingPathComponent("Scripts/lab-reach.sh").path],
            environment: environment,
            timeout: .seconds(150)
        )
        let lines = outcome.output.split(separator: "\n").filter { $0.hasPrefix("PASS ") || $0.hasPrefix("FAIL ") }
        #expect(outcome.status == 0, "lab-reach.sh exited \(outcome.status):\n\(outcome.output)")
        #expect(!lines.contains { $0.hasPrefix("FAIL") }, "\(outcome.output)")
        for scenario in ["ipv6-only", "link-local", "no-nss-mdns", "ipv4-no-nss"] {
            #expect(
                lines.contains { $0.hasPrefix("PASS") && $0.contains(scenario) && $0.contains("connected within") },
                "no PASS for \(scenario):\n\(outcome.output)"
            )
        }
    }
}
