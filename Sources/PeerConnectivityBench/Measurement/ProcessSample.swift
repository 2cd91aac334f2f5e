import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// This process's memory and CPU time at one moment: resident set (VmRSS), its peak (VmHWM) from
/// /proc/self/status, and the CPU time from getrusage.
public struct ProcessSample: Codable, Sendable {
    /// Resident set size now, in bytes.
    public var residentBytes: Int
    /// The peak resident set size since the process started, or since ``resetPeak()``, in bytes.
    public var peakResidentBytes: Int
    /// CPU time spent in user space, in seconds.
    public var userCPUSeconds: Double
    /// CPU time spent in the kernel, in seconds.
    public var systemCPUSeconds: Double

    /// Makes a sample from its values.
    public init(residentBytes: Int, peakResidentBytes: Int, userCPUSeconds: Double, systemCPUSeconds: Double) {
        self.residentBytes = residentBytes
        self.peakResidentBytes = peakResidentBytes
        self.userCPUSeconds = userCPUSeconds
        self.systemCPUSeconds = systemCPUSeconds
    }

    /// Samples this process now.
    public static func current() -> ProcessSample {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func kibibytes(_ field: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ProcessSample(
            residentBytes: kibibytes("VmRSS") * 1024,
            peakResidentBytes: kibibytes("VmHWM") * 1024,
            userCPUSeconds: seconds(usage.ru_utime),
            systemCPUSeconds: seconds(usage.ru_stime)
        )
    }

    /// Samples another process of this user now, from /proc/<pid>/status and /proc/<pid>/stat.
    ///
    /// - Parameter pid: the process.
    /// - Returns: its sample, or `nil` when /proc does not have it (it has exited).
    public static func of(pid: Int32) -> ProcessSample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return nil }
        func kibibytes(_ field: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        // After the name: state is field 3; utime and stime are fields 14 and 15, in clock ticks.
        let fields = stat[afterName.upperBound...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]), ticks > 0 else {
            return nil
        }
        return ProcessSample(
            residentBytes: kibibytes("VmRSS") * 1024,
            peakResidentBytes: kibibytes("VmHWM") * 1024,
            userCPUSeconds: user / ticks,
            systemCPUSeconds: system / ticks
        )
    }

    /// CPU time in user space and the kernel together, in seconds.
    public var cpuSeconds: Double { userCPUSeconds + systemCPUSeconds }

    /// Resets the peak (VmHWM) to the current resident set by writing "5" to /proc/self/clear_refs.
    ///
    /// - Returns: whether the kernel accepted it; when not, the peak counts from the process's start.
    @discardableResult
    public static func resetPeak() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }
}
