#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Limits the tools set for themselves when they start.
public enum ProcessLimits {
    /// Raises the soft limit on open file descriptors to the hard limit: a reflector serving many
    /// runners, each with a socket and files open, would reach the usual soft limit of 1,024 long before
    /// the hard one.
    ///
    /// - Returns: the soft limit in force afterwards, or `nil` when it could not be read.
    @discardableResult
    public static func raiseOpenFileLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
}
