import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whether the lab scripts can run here: they need root, their tools, and new network namespaces (a
/// container may forbid them even to root).
enum LabAvailability {
    /// Why a lab that needs `tools` (names looked up on the PATH and in the system folders) cannot run
    /// here, or nil when it can.
    static func unavailable(needing tools: [String]) -> String? {
        guard getuid() == 0 else { return "the lab needs root (network namespaces)" }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin"
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin"]
        for tool in tools
        where !folders.contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }) {
            return "the lab needs \(tool) (Scripts/setup.sh --lab)"
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["--net", "true"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "cannot run unshare" }
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else { return "this machine does not allow new network namespaces" }
        return nil
    }
}
