import Foundation
import PeerConnectivityTesting
import Testing

/// `Scripts/lab-admission.sh` from the test suite: in a network namespace the script makes, runners from 10
/// addresses of one IPv6 /64 take every place of a reflector, and a runner from another /64 and one from
/// 127.0.0.1 are still served, each taking the place of the /64's longest-held runner. Runs only as root
/// where new network namespaces are allowed; about 20 s.
@Suite("One address range floods a reflector", .timeLimit(.minutes(2 * slowdown)))
struct AdmissionLabTests {
    /// Why the lab cannot run here, or nil when it can.
    static let unavailable = LabAvailability.unavailable(needing: ["unshare", "ip", "python3"])

    @Test(
        "a runner from another /64, and one from 127.0.0.1, are served while one /64 holds every place",
        .enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? ""))
    )
    func newcomersServed() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["LAB_BIN"] = DemoProcess.binDirectory.path
        // The script holds to 15 s per newcomer; the suite runs beside it on the machine's cores.
        environment["ADMISSION_LIMIT_S"] = String(30 * slowdown)
        let outcome = try await ChildProcess.run(
            "/bin/bash",
            arguments: [repositoryRoot().appendingPathComponent("Scripts/lab-admission.sh").path],
            environment: environment,
            timeout: .seconds(100 * slowdown)
        )
        let lines = outcome.output.split(separator: "\n").filter { $0.hasPrefix("PASS ") || $0.hasPrefix("FAIL ") }
        #expect(outcome.status == 0, "lab-admission.sh exited \(outcome.status):\n\(outcome.output)")
        // Each check prints its line as it ends, and again in the summary.
        #expect(Set(lines).count == 5 && lines.allSatisfy { $0.hasPrefix("PASS") }, "\(outcome.output)")
    }
}
