/// What part of a run failed, for the runner's exit code and its last words.
extension BenchmarkDocument {
    /// Every part of the plan that did not complete, in words; empty when everything did. Messages
    /// lost in unreliable mode are not failures (that mode may lose them); corrupted ones are.
    public var failures: [String] {
        var failures: [String] = []
        for result in results {
            let lost = plan.mode == .unreliable ? 0 : result.lost
            if lost > 0 || result.corrupted > 0 {
                failures.append("\(result.size) B: \(lost) lost, \(result.corrupted) corrupted of \(result.sent)")
            }
        }
        if let streams, streams.failed + streams.corrupted + streams.timedOut > 0 {
            failures.append(
                "streams: \(streams.failed) failed, \(streams.corrupted) corrupted, \(streams.timedOut) timed out "
                    + "of \(streams.streamCount)"
            )
        }
        if let resources {
            let broken = resources.transfers.filter { $0.outcome != .completed }
            for transfer in broken {
                failures.append("resource \(transfer.name): \(transfer.outcome.rawValue): \(transfer.error ?? "")")
            }
        }
        for phase in responsiveness?.phases ?? [] {
            for (direction, figures) in [("download", phase.download), ("upload", phase.upload)] {
                guard let figures, figures.failedStreams + figures.corruptedStreams > 0 else { continue }
                failures.append(
                    "\(phase.name.rawValue) phase, \(direction): \(figures.failedStreams) flows failed, "
                        + "\(figures.corruptedStreams) corrupted"
                )
            }
            let kinds =
                [("foreign", phase.foreign), ("self", phase.selfProbes)]
                + (phase.datagramProbes.map { [("udp", $0)] } ?? [])
            for (kind, probes) in kinds where probes.sent > 0 && probes.answered == 0 {
                failures.append("\(phase.name.rawValue) phase: none of \(probes.sent) \(kind) probes came back")
            }
        }
        return failures
    }
}
