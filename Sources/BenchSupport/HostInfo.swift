import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The machine a benchmark ran on.
public struct HostInfo: Codable, Sendable {
    /// The host name.
    public var hostname: String
    /// Active processor count.
    public var cpus: Int
    /// The processor model, from /proc/cpuinfo (empty when unknown).
    public var cpuModel: String
    /// The kernel's name and release.
    public var kernel: String
    /// Physical memory, in bytes.
    public var physicalMemoryBytes: UInt64

    /// Describes this machine.
    public static func current() -> HostInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n")
            .first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?
            .trimmingCharacters(in: .whitespaces) ?? ""
        var names = utsname()
        uname(&names)
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return HostInfo(
            hostname: ProcessInfo.processInfo.hostName,
            cpus: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: model,
            kernel: "\(text(names.sysname)) \(text(names.release))",
            physicalMemoryBytes: ProcessInfo.processInfo.physicalMemory
        )
    }
}
