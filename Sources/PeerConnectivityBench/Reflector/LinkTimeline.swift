/// The reflector's samples of one runner's connection over the run, bounded: one every ``period`` seconds,
/// at most ``capacity``; when full, every other sample goes and the period doubles, so that a run of any
/// length keeps samples from its start to its end in bounded memory.
struct LinkTimeline {
    /// The most samples kept.
    let capacity: Int
    /// Seconds between two samples: 1 at first, doubled each time the timeline fills.
    private(set) var period: Double = 1
    /// The samples, oldest first.
    private(set) var samples: [TimedLinkSample] = []

    /// An empty timeline.
    ///
    /// - Parameter capacity: the most samples kept (at least 2).
    init(capacity: Int = 600) {
        self.capacity = max(2, capacity)
    }

    /// The samples, then `last`, taken at the run's end (the report's own view), when it is later than the
    /// latest sample: the timeline then reaches the report however late the last periodic sample came.
    ///
    /// - Parameter last: the sample taken when the report was asked for, if there is one.
    /// - Returns: the samples, oldest first.
    func samples(endingWith last: TimedLinkSample?) -> [TimedLinkSample] {
        guard let last, last.seconds > (samples.last?.seconds ?? -1) else { return samples }
        return samples + [last]
    }

    /// Keeps a sample taken `seconds` after the runner connected.
    mutating func record(_ sample: TimedLinkSample) {
        samples.append(sample)
        guard samples.count >= capacity else { return }
        // The first, the third, …: the start of the run stays, the spacing doubles.
        samples = samples.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element)
        period *= 2
    }
}
