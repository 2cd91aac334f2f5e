import Dispatch

/// The one clock every measurement uses: monotonic nanoseconds (`CLOCK_MONOTONIC` on Linux), never the
/// wall clock, which NTP may step.
enum MonotonicClock {
    /// Now, in nanoseconds since an arbitrary start.
    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}
