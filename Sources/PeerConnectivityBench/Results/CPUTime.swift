#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CPU time a process spent, in seconds: in user space and in the kernel.
public struct CPUTime: Codable, Hashable, Sendable {
    /// Seconds in user space.
    public var userSeconds: Double
    /// Seconds in the kernel.
    public var systemSeconds: Double

    /// Makes a CPU time.
    ///
    /// - Parameters:
    ///   - userSeconds: seconds in user space.
    ///   - systemSeconds: seconds in the kernel.
    public init(userSeconds: Double, systemSeconds: Double) {
        self.userSeconds = userSeconds
        self.systemSeconds = systemSeconds
    }

    /// This process's CPU time so far (getrusage).
    public static func ofThisProcess() -> CPUTime {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return CPUTime(userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime))
    }

    /// The time spent since `earlier`.
    public func since(_ earlier: CPUTime) -> CPUTime {
        CPUTime(
            userSeconds: max(0, userSeconds - earlier.userSeconds),
            systemSeconds: max(0, systemSeconds - earlier.systemSeconds)
        )
    }

    /// User and kernel together.
    public var totalSeconds: Double { userSeconds + systemSeconds }
}
