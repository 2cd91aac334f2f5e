import Foundation

/// This process's resident set size (VmRSS in /proc/self/status), in bytes; 0 where /proc has none.
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kibibytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({
            Int($0)
        })
    else { return 0 }
    return kibibytes * 1024
}
