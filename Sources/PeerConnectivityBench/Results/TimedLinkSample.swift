/// The reflector's kernel view of a runner's connection at one moment of the run: ``ReflectorReport/links``.
public struct TimedLinkSample: Codable, Hashable, Sendable {
    /// Seconds since the runner connected, on the reflector's clock.
    public var seconds: Double
    /// What `TCP_INFO` said then.
    public var link: LinkSample

    /// Makes a sample.
    ///
    /// - Parameters:
    ///   - seconds: since the runner connected.
    ///   - link: the kernel's figures.
    public init(seconds: Double, link: LinkSample) {
        self.seconds = seconds
        self.link = link
    }
}
