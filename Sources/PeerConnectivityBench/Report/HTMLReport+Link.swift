/// The charts of the run's connection as the runner's kernel saw it each interval (`intervals[].link`).
extension HTMLReport {
    /// The congestion window and the kernel's smoothed round trip over time, and the segments retransmitted
    /// in each interval when any were; none when the intervals carry no link samples.
    static func linkPlots(_ intervals: [IntervalResult], id: String) -> [SVGPlot] {
        let sampled = intervals.filter { $0.link != nil }
        guard !sampled.isEmpty else { return [] }
        let colors = SVGPlot.palette
        var plots: [SVGPlot] = []
        let window = sampled.compactMap { interval in
            interval.link.map { (x: interval.endSeconds, y: Double($0.congestionWindowSegments)) }
        }
        plots.append(
            SVGPlot(
                id: "\(id)-congestion-window",
                title: "TCP congestion window",
                xLabel: "seconds from the start of the test",
                yLabel: "segments",
                series: [SVGPlot.Series(name: "congestion window", color: colors[0], points: window)],
                bands: phaseBands(intervals)
            )
        )
        let smoothed = sampled.compactMap { interval in
            interval.link.map { (x: interval.endSeconds, y: Double($0.smoothedRoundTripNanoseconds) / 1e6) }
        }
        plots.append(
            SVGPlot(
                id: "\(id)-kernel-round-trip",
                title: "TCP's smoothed round trip",
                xLabel: "seconds from the start of the test",
                yLabel: "ms",
                series: [SVGPlot.Series(name: "smoothed round trip", color: colors[1], points: smoothed)],
                bands: phaseBands(intervals)
            )
        )
        // The kernel counts retransmissions since the connection opened: each interval's are the difference.
        var previous = 0
        let retransmitted = sampled.compactMap { interval -> (x: Double, y: Double)? in
            guard let link = interval.link else { return nil }
            defer { previous = link.retransmittedSegments }
            return (interval.endSeconds, Double(max(link.retransmittedSegments - previous, 0)))
        }
        // Drawn only when something was retransmitted, as the loss chart.
        if retransmitted.contains(where: { $0.y > 0 }) {
            plots.append(
                SVGPlot(
                    id: "\(id)-retransmissions",
                    title: "TCP segments retransmitted in each interval",
                    xLabel: "seconds from the start of the test",
                    yLabel: "segments",
                    series: [
                        SVGPlot.Series(name: "retransmitted", color: colors[1], points: retransmitted, steps: true)
                    ],
                    yCeiling: 1
                )
            )
        }
        return plots
    }
}
