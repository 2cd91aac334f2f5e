import PeerConnectivity
import Synchronization

/// Samples one runner's connection as the reflector's kernel sees it (`TCP_INFO`), from the runner's hello
/// until it leaves, into a ``LinkTimeline``; the report at the run's end carries the samples.
final class LinkSampler: Sendable {
    private let timeline = Mutex(LinkTimeline())
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// When sampling started (the runner's hello): the samples' seconds count from it.
    private let started = Mutex<ContinuousClock.Instant?>(nil)

    /// Starts sampling `peer`'s connection at the timeline's period; a second call does nothing.
    func start(_ session: Session, peer: PeerID) {
        task.withLock { task in
            guard task == nil else { return }
            let start = ContinuousClock.now
            started.withLock { $0 = start }
            task = Task { [self] in await run(session, peer: peer, start: start) }
        }
    }

    /// Stops sampling.
    func stop() {
        task.withLock { $0?.cancel() }
    }

    /// The samples so far, oldest first, ending with `link` as taken now (see
    /// ``LinkTimeline/samples(endingWith:)``).
    ///
    /// - Parameter link: the connection as the kernel sees it now, if it could be read.
    func samples(endingWith link: LinkSample?) -> [TimedLinkSample] {
        let now = started.withLock { start in
            link.flatMap { link in start.map { TimedLinkSample(seconds: $0.duration(to: .now).seconds, link: link) } }
        }
        return timeline.withLock { $0.samples(endingWith: now) }
    }

    private func run(_ session: Session, peer: PeerID, start: ContinuousClock.Instant) async {
        while !Task.isCancelled {
            // A sample the system cannot give (no link at the moment, or no TCP_INFO) is skipped.
            if let report = await session.linkReport(for: peer) {
                let sample = TimedLinkSample(seconds: start.duration(to: .now).seconds, link: LinkSample(report))
                timeline.withLock { $0.record(sample) }
            }
            let period = timeline.withLock { $0.period }
            try? await Task.sleep(for: .milliseconds(Int(period * 1_000)))
        }
    }
}
