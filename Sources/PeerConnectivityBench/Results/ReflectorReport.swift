import Foundation

/// What the reflector says about itself when a runner asks at the end of a test: the CPU time its
/// process spent since the runner connected, and the other runners it served meanwhile. Asked for with
/// ``request``.
public struct ReflectorReport: PrefixedMessage, Hashable, Sendable {
    /// The bytes before the JSON.
    public static let prefix = Data("pc-bench-report\n".utf8)
    /// The message a runner sends to ask for a report (instead of one to be echoed).
    public static let request = Data("pc-bench-report?\n".utf8)

    /// The message's format version.
    public var schemaVersion: Int
    /// The reflector process's CPU time since the runner connected.
    public var cpu: CPUTime
    /// Seconds since the runner connected.
    public var seconds: Double
    /// The other runners the reflector served while it served this one, each as "NAME (ADDRESS)", in the
    /// order they met, at most 1,024 (nil from a reflector that does not say).
    public var sharedWith: [String]?
    /// How many others in all, those past the list's limit counted too.
    public var sharedWithCount: Int?
    /// The runner's connection as the reflector's kernel saw it when it answered (`TCP_INFO`): the sender's
    /// view in a reverse test, its retransmissions and window; nil where its system does not tell.
    public var link: LinkSample?
    /// The reflector process's peak resident memory since it started (`VmHWM`), in bytes; nil where its system
    /// does not tell.
    public var peakResidentBytes: Int?
    /// The runner's connection as the reflector's kernel saw it over the run: a sample every second since the
    /// runner connected (every 2, 4, … s in a run of more than 600 samples, thinned as it grows); nil from a
    /// reflector that does not sample, or a system without `TCP_INFO`.
    public var links: [TimedLinkSample]?

    /// Makes a report.
    ///
    /// - Parameters:
    ///   - cpu: CPU time since the runner connected.
    ///   - seconds: wall-clock time since then.
    public init(cpu: CPUTime, seconds: Double) {
        schemaVersion = 1
        self.cpu = cpu
        self.seconds = seconds
    }
}
