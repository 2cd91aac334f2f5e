import Foundation
import PeerConnectivityBench

extension TransferBenchResult {
    /// Prints the result as a table, then each target met or missed.
    func report() {
        let table = ReportTable(widths: [34, 12, 18])
        let ours = peerConnectivity
        func rate(_ bytesPerSecond: Double) -> String { String(format: "%.0f", bytesPerSecond / 1e6) }
        func percent(_ ratio: Double) -> String { String(format: "%.0f%%", ratio * 100) }
        func mebibytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / Double(1 << 20)) }
        func milliseconds(_ latency: LatencySummary) -> String {
            String(
                format: "%.3f / %.3f / %.3f (n=%d)",
                (Double(latency.p50Nanoseconds) / 1e3) / 1e3,
                (Double(latency.p99Nanoseconds) / 1e3) / 1e3,
                (Double(latency.maxNanoseconds) / 1e3) / 1e3,
                latency.count
            )
        }
        let resourceSize = "\(plan.resourceBytes >> 20) MiB"
        table.row("", "raw TCP", "PeerConnectivity", "ratio")
        table.row(
            "resource \(resourceSize) (MB/s)",
            rate(rawTCP.resource.bytesPerSecond),
            rate(ours.resource.bytesPerSecond),
            percent(ratios.resource)
        )
        table.row(
            "resource, with echoes (MB/s)",
            rate(rawTCP.resource.bytesPerSecond),
            rate(ours.resourceWithEchoes.bytesPerSecond),
            percent(ratios.resourceWithEchoes)
        )
        table.row(
            "\(plan.streams) streams, \(plan.streamBytes >> 20) MiB (MB/s)",
            rate(rawTCP.streams.bytesPerSecond),
            rate(ours.streams.bytesPerSecond),
            percent(ratios.streams)
        )
        if let defaultRun = ours.streamsDefaultExecutor, let ratio = ratios.streamsDefaultExecutor {
            table.row("  ... on the default executor", "", rate(defaultRun.bytesPerSecond), percent(ratio))
        }
        print("64 B echo p50 / p99 / max (ms):")
        print("  idle:                ", milliseconds(ours.echoIdle))
        print("  during the resource: ", milliseconds(ours.echoDuringResource))
        let phases =
            [
                ("resource", ours.resource), ("resource+echo", ours.resourceWithEchoes), ("streams", ours.streams),
            ] + (ours.streamsDefaultExecutor.map { [("streams, default", $0)] } ?? [])
        print("peak RSS rise (MiB) and CPU user+sys (s), sender | receiver:")
        for (name, phase) in phases {
            print(
                "  \(name.padding(toLength: 16, withPad: " ", startingAt: 0))",
                mebibytes(phase.sender.peakResidentDeltaBytes),
                String(format: "%.2f+%.2f", phase.sender.userCPUSeconds, phase.sender.systemCPUSeconds),
                "|",
                mebibytes(phase.receiver.peakResidentDeltaBytes),
                String(format: "%.2f+%.2f", phase.receiver.userCPUSeconds, phase.receiver.systemCPUSeconds),
                String(format: "(%.2f s)", phase.seconds)
            )
        }
        let rawCPU = rawTCP.resource.cpuSeconds.sorted()[rawTCP.resource.cpuSeconds.count / 2]
        print(String(format: "  raw TCP, both ends: %.2f CPU s for the resource's bytes", rawCPU))
        for (target, met) in targetsMet.sorted(by: { $0.key < $1.key }) {
            print(met ? "MET    " : "MISSED ", target)
        }
    }
}
