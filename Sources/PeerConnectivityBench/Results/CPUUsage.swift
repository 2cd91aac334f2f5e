/// The CPU time both ends spent during a test, to tell what a figure cost and which end was the limit.
public struct CPUUsage: Codable, Hashable, Sendable {
    /// The runner's process, from the start of the test to its end.
    public var runner: CPUTime
    /// The reflector's whole process over the runner's session, as it reported it at the end (it may
    /// serve other runners meanwhile); nil when it did not answer.
    public var reflector: CPUTime?
    /// The test's wall-clock time the figures cover, in seconds.
    public var seconds: Double

    /// Makes a usage record.
    ///
    /// - Parameters:
    ///   - runner: the runner's CPU time.
    ///   - reflector: the reflector's.
    ///   - seconds: the wall-clock time.
    public init(runner: CPUTime, reflector: CPUTime?, seconds: Double) {
        self.runner = runner
        self.reflector = reflector
        self.seconds = seconds
    }
}
