import Foundation
import PeerConnectivity
import PeerConnectivityBench

/// What `run` says: where it is going, what it reached, and what the figures mean.
extension RunCommand {
    /// Before anything is reached: the tool, the test and where it looks.
    static func setOutLine(_ configuration: RunnerConfiguration) -> String {
        let tool = ToolInfo().versionLine
        switch configuration.target {
        case .direct(let host, let port):
            return "\(tool): connecting to \(ConnectionEndpoints.hostPort(host, port))"
        case .discover(let name):
            let which = name.map { "the reflector \"\($0)\"" } ?? "a reflector"
            return "\(tool): looking for \(which) by DNS-SD (_\(configuration.serviceType)._tcp)"
        }
    }

    /// Once connected: which reflector, at which address, how, and how the link is secured.
    static func firstLine(_ report: ConnectionReport, host: HostInfo?, test: TestKind) -> String {
        let name = report.reflectorName.map { "\"\($0)\"" } ?? "a reflector"
        let address = report.remoteAddress ?? report.sessionAddress ?? report.rawAddress ?? "?"
        let via = report.interface.map { " via \($0)" } ?? ""
        let how = report.method == .dnsSD ? "found by DNS-SD" : "connected directly"
        let security = report.linkSecurity.map { ", \($0)" } ?? ""
        let machine = host.map { " (\($0.hostname), \($0.cpuCount) CPUs)" } ?? ""
        return "\(test.rawValue) test against \(name)\(machine) at \(address)\(via), \(how); "
            + "encryption \(report.encryption ?? "?")\(security)"
    }
}

/// The figures, and what they measure.
extension RunOutput {
    func summary(_ document: BenchmarkDocument, units: RateFormat) {
        if let responsiveness = document.responsiveness {
            responsivenessSummary(responsiveness, units: units)
        } else if let datagrams = document.bulk?.datagrams {
            datagramSummary(datagrams, units: units)
        } else if let bulk = document.bulk {
            for (label, direction) in [("sent", bulk.forward), ("received", bulk.reverse)] {
                guard let direction else { continue }
                let rate = units.string(bytesPerSecond: direction.bytesPerSecond)
                let streams = "\(bulk.streamCount) stream\(bulk.streamCount == 1 ? "" : "s")"
                let omission =
                    direction.omittedSeconds.map { seconds in
                        String(format: " (the first %.2f s and their ", seconds)
                            + "\(direction.omittedBytes ?? 0) bytes omitted from the rate)"
                    } ?? ""
                line(
                    "bulk \(label): \(rate), \(direction.receivedBytes) bytes in "
                        + String(format: "%.2f s", direction.seconds)
                        + " over \(streams); \(direction.corruptedStreams) corrupted, \(direction.failedStreams) failed"
                        + omission
                )
                if let seconds = direction.reflectorBytesPerSecond, !seconds.isEmpty {
                    let rates = seconds.map { units.string(bytesPerSecond: Double($0)) }
                    line("  the reflector read, second by second: " + rates.joined(separator: ", "))
                }
            }
            line("(the link's throughput: bytes read and checked at the far end, over the time from the first write)")
        } else if document.test != .bulk, document.test != .responsiveness {
            line(ComparisonTable.render([document]), newline: false)
            if document.test.isMessageTest {
                line(Self.measures(document.plan))
            }
            for transfer in document.resources?.transfers ?? [] {
                line(transfer.line)
            }
            if let besideEcho = document.resources?.besideEcho {
                line(Self.besideEchoLine(besideEcho))
            }
        }
        if let link = document.connection.link {
            // The reflector's own line, when it sent one, names its congestion control.
            let reflectorSide =
                document.connection.reflectorLink == nil
                ? document.connection.reflectorCongestionControl.map { " (the reflector's side: \($0))" } : nil
            line(Self.linkLine(link, seenBy: "this runner's kernel saw the run's connection") + (reflectorSide ?? ""))
        }
        if let link = document.connection.reflectorLink {
            line(Self.linkLine(link, seenBy: "the reflector's kernel saw it"))
        }
        if let timeline = document.connection.reflectorLinks, timeline.count > 1 {
            let windows = timeline.map(\.link.congestionWindowSegments)
            let trips = timeline.map { Double($0.link.smoothedRoundTripNanoseconds) / 1e6 }
            line(
                "  over the run, \(timeline.count) samples (connection.reflectorLinks): window "
                    + "\(windows.min() ?? 0)-\(windows.max() ?? 0) segments, smoothed round trip "
                    + String(format: "%.2f-%.2f ms", trips.min() ?? 0, trips.max() ?? 0)
            )
        }
        if let cpu = document.cpu {
            let reflector = cpu.reflector.map { String(format: ", reflector %.2f s", $0.totalSeconds) } ?? ""
            line(String(format: "CPU over %.1f s: runner %.2f s%@", cpu.seconds, cpu.runner.totalSeconds, reflector))
        }
        if let memory = document.memory {
            let reflector = memory.reflectorPeakResidentBytes.map {
                String(format: ", reflector %.1f MiB", Double($0) / 1_048_576)
            }
            line(
                String(format: "Peak memory: runner %.1f MiB", Double(memory.runnerPeakResidentBytes) / 1_048_576)
                    + (reflector ?? "") + " (whole processes, since they started)"
            )
        }
        if let others = document.connection.sharedWith, let count = document.connection.sharedWithCount, count > 0 {
            // Names other runners chose: their control characters are not written to the terminal.
            let shown = others.prefix(4).map { $0.unicodeScalars.filter { $0.properties.generalCategory != .control } }
            let names = shown.map { String(String.UnicodeScalarView($0)) }.joined(separator: ", ")
            line(
                "The reflector served \(count) other runner\(count == 1 ? "" : "s") meanwhile: \(names)"
                    + (count > shown.count ? ", … (connection.sharedWith)" : "")
            )
        }
    }

    /// "TCP, as WHO: smoothed round trip …, N segments retransmitted, window …, congestion control …".
    /// "Beside the transfers, 100 probes/s of 23 bytes on the same session: round trip p50 0.41 ms, p99
    /// 2.10 ms (812 of 812 answered); idle before: p50 0.08 ms, p99 0.15 ms (100 of 100)".
    static func besideEchoLine(_ result: BesideEchoResult) -> String {
        func milliseconds(_ nanoseconds: UInt64) -> String { String(format: "%.2f ms", Double(nanoseconds) / 1e6) }
        let busy = result.duringTransfers
        let idle = result.idle
        return String(format: "Beside the transfers, %.0f probes/s", result.ratePerSecond)
            + " of \(result.probeBytes) bytes on the same session: round trip p50 "
            + "\(milliseconds(busy.roundTrip.p50Nanoseconds)), p99 \(milliseconds(busy.roundTrip.p99Nanoseconds)) "
            + "(\(busy.answered) of \(busy.sent) answered); idle before: p50 \(milliseconds(idle.roundTrip.p50Nanoseconds)), "
            + "p99 \(milliseconds(idle.roundTrip.p99Nanoseconds)) (\(idle.answered) of \(idle.sent))"
    }

    static func linkLine(_ link: LinkSample, seenBy who: String) -> String {
        "TCP, as \(who): smoothed round trip \(IntervalResult.duration(link.smoothedRoundTripNanoseconds)), "
            + "\(segments(link.retransmittedSegments)) retransmitted, window \(link.congestionWindowSegments) "
            + "segments of \(link.segmentSize) bytes"
            + (link.congestionControl.map { ", congestion control \($0)" } ?? "")
    }

    /// "1 segment", "3 segments".
    static func segments(_ count: Int) -> String { count == 1 ? "1 segment" : "\(count) segments" }

    /// Latency under load: each phase's throughput, its probes' round trips and its RPM.
    private func responsivenessSummary(_ result: ResponsivenessResult, units: RateFormat) {
        func probes(_ name: String, _ probes: ProbeResult) -> String {
            guard probes.answered > 0 else { return "\(name) none of \(probes.sent) back" }
            let summary = probes.roundTrip
            return "\(name) p50 \(IntervalResult.duration(summary.p50Nanoseconds)) "
                + "(p90 \(IntervalResult.duration(summary.p90Nanoseconds)), "
                + "p99 \(IntervalResult.duration(summary.p99Nanoseconds)); \(probes.answered)/\(probes.sent))"
        }
        for phase in result.phases {
            var parts: [String] = []
            if let download = phase.download {
                parts.append("\(units.string(bytesPerSecond: download.bytesPerSecond)) down")
            }
            if let upload = phase.upload { parts.append("\(units.string(bytesPerSecond: upload.bytesPerSecond)) up") }
            let kinds =
                [("foreign", phase.foreign), ("self", phase.selfProbes)]
                + (phase.datagramProbes.map { [("udp", $0)] } ?? [])
            let sent = kinds.filter { $0.1.sent + $0.1.omitted > 0 }
            parts.append("probes " + sent.map { probes($0.0, $0.1) }.joined(separator: ", "))
            let rpm = phase.rpm.map { String(format: "RPM %.0f (%@)", $0, phase.rpmBand ?? "") } ?? "no RPM"
            let name = phase.name.rawValue + ":"
            line(name.padding(toLength: 10, withPad: " ", startingAt: 0) + parts.joined(separator: "; ") + "; " + rpm)
            if let links = phase.loadLinks, let fastest = links.map(\.smoothedRoundTripNanoseconds).min(),
                let slowest = links.map(\.smoothedRoundTripNanoseconds).max()
            {
                let retransmitted = links.map(\.retransmittedSegments).reduce(0, +)
                line(
                    "          load flows (kernel): smoothed round trips \(IntervalResult.duration(fastest)) to "
                        + "\(IntervalResult.duration(slowest)), \(Self.segments(retransmitted)) retransmitted"
                )
            }
        }
        func lowat(_ bytes: Int?) -> String { bytes.map { "\($0) bytes" } ?? "not set" }
        let omitted = result.omitSeconds.map { String(format: "; each loaded phase's first %g s left out", $0) } ?? ""
        line(
            "(\(result.loadFlows) load flows each loaded way, a connection each; foreign probes on a connection "
                + "of their own, self probes inside the first load flow (its bytes held at the low watermark, as "
                + "an app's with one), udp probes as datagrams beside the foreign "
                + "ones (a lost one counted lost, as ping's)\(omitted); RPM: \(result.rpmStatistic); the loaded connection's "
                + "TCP_NOTSENT_LOWAT: runner \(lowat(result.runnerNotSentLowWatermark)), reflector "
                + "\(lowat(result.reflectorNotSentLowWatermark)))"
        )
    }

    /// Datagrams at a bitrate: each end's rate, loss, order and jitter, as iperf3's UDP summary.
    private func datagramSummary(_ result: DatagramBulkResult, units: RateFormat) {
        line(
            "udp sent: \(units.string(bytesPerSecond: result.sentBitsPerSecond / 8)) "
                + "(\(RateFormat.automatic.string(bytesPerSecond: result.targetBitsPerSecond / 8)) asked), "
                + "\(result.sentDatagrams) datagrams of \(result.length) bytes in "
                + String(format: "%.2f s", result.seconds)
        )
        if let notSent = result.notSentDatagrams, notSent > 0 {
            line(
                "udp not sent: \(notSent) datagrams of the schedule, dropped on this host with its UDP socket's buffer "
                    + "full: it cannot send that fast (a blocking sender would have waited), not counted as lost"
            )
        }
        line(
            "udp received: \(units.string(bytesPerSecond: result.receivedBitsPerSecond / 8)), "
                + "\(result.lostDatagrams)/\(result.sentDatagrams) lost ("
                + String(format: "%.2g%%", result.lostPercent) + "), \(result.outOfOrder) out of order, "
                + "\(result.duplicates) duplicated, jitter " + String(format: "%.3f ms", result.jitterNanoseconds / 1e6)
        )
        line("(received: datagrams the reflector counted once each; jitter: RFC 3550's, at the reflector)")
    }

    /// What a message test's figures are.
    static func measures(_ plan: TestPlan) -> String {
        if let rate = plan.rate {
            return "(round trips under an open-loop load of \(Int(rate)) messages/s, each timed from when it was "
                + "due: latency under that load; MB/s is that load, not the link's capacity)"
        }
        if plan.window == 1 {
            return "(round trips with one message in flight: latency; MB/s is what one message at a time moves, "
                + "not the link's capacity: for that, --test bulk)"
        }
        return "(round trips with up to \(plan.window) messages in flight; for the link's capacity, --test bulk)"
    }

    fileprivate func line(_ text: String, newline: Bool) {
        line(newline ? text : String(text.dropLast(text.hasSuffix("\n") ? 1 : 0)))
    }
}
