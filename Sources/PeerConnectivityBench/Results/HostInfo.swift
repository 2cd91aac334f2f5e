import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The machine one side of a run ran on, and the tool's build.
///
/// The reflector publishes its own in its DNS-SD discoveryInfo (``discoveryInfo``) and sends it in its
/// hello message (``ReflectorHello``), so each result names both hosts.
public struct HostInfo: Codable, Hashable, Sendable {
    /// The host name.
    public var hostname: String
    /// The distribution or system, e.g. "Debian GNU/Linux 12 (bookworm)".
    public var operatingSystem: String
    /// The kernel and machine, e.g. "Linux 6.1.0-18-amd64 x86_64".
    public var kernel: String
    /// Logical CPUs.
    public var cpuCount: Int
    /// The CPU model, when the system says it.
    public var cpuModel: String?
    /// The Swift compiler the tool was built with (major.minor).
    public var swiftVersion: String
    /// The benchmark tools' version.
    public var toolVersion: String

    /// Makes a host description.
    ///
    /// - Parameters:
    ///   - hostname: the host name.
    ///   - operatingSystem: the system's name.
    ///   - kernel: the kernel and machine.
    ///   - cpuCount: logical CPUs.
    ///   - cpuModel: the CPU model.
    ///   - swiftVersion: the compiler version.
    ///   - toolVersion: the tools' version.
    public init(
        hostname: String,
        operatingSystem: String,
        kernel: String,
        cpuCount: Int,
        cpuModel: String?,
        swiftVersion: String,
        toolVersion: String
    ) {
        self.hostname = hostname
        self.operatingSystem = operatingSystem
        self.kernel = kernel
        self.cpuCount = cpuCount
        self.cpuModel = cpuModel
        self.swiftVersion = swiftVersion
        self.toolVersion = toolVersion
    }

    /// This machine.
    public static func current() -> HostInfo {
        HostInfo(
            hostname: ProcessInfo.processInfo.hostName,
            operatingSystem: osReleaseName() ?? ProcessInfo.processInfo.operatingSystemVersionString,
            kernel: kernelDescription(),
            cpuCount: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: cpuModelName(),
            swiftVersion: compilerVersion,
            toolVersion: ToolInfo.version
        )
    }

    private static let keys = (
        hostname: "host", os: "os", kernel: "kernel", cpus: "cpus", cpu: "cpu", swift: "swift", version: "version"
    )

    /// The entries published in the reflector's discoveryInfo (each value cut to fit a TXT entry).
    public var discoveryInfo: [String: String] {
        var info = [
            Self.keys.hostname: hostname,
            Self.keys.os: operatingSystem,
            Self.keys.kernel: kernel,
            Self.keys.cpus: String(cpuCount),
            Self.keys.swift: swiftVersion,
            Self.keys.version: toolVersion,
        ]
        info[Self.keys.cpu] = cpuModel
        return info.mapValues { String(decoding: $0.utf8.prefix(200), as: UTF8.self) }
    }

    /// Reads a host description from a reflector's discoveryInfo.
    ///
    /// - Parameter discoveryInfo: the entries, as ``discoveryInfo`` wrote them.
    /// - Returns: nil when the entries do not describe a host.
    public init?(discoveryInfo info: [String: String]) {
        guard let hostname = info[Self.keys.hostname], let cpus = info[Self.keys.cpus].flatMap(Int.init) else {
            return nil
        }
        self.init(
            hostname: hostname,
            operatingSystem: info[Self.keys.os] ?? "",
            kernel: info[Self.keys.kernel] ?? "",
            cpuCount: cpus,
            cpuModel: info[Self.keys.cpu],
            swiftVersion: info[Self.keys.swift] ?? "",
            toolVersion: info[Self.keys.version] ?? ""
        )
    }

    private static func osReleaseName() -> String? {
        guard let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
        return line.map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
    }

    private static func kernelDescription() -> String {
        var name = utsname()
        guard uname(&name) == 0 else { return "" }
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(text(name.sysname)) \(text(name.release)) \(text(name.machine))"
    }

    private static func cpuModelName() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line?.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
    }

    private static var compilerVersion: String {
        #if compiler(>=6.5)
            return "6.5 or later"
        #elseif compiler(>=6.4)
            return "6.4"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #elseif compiler(>=6.1)
            return "6.1"
        #else
            return "6.0"
        #endif
    }
}
