import Foundation

/// One run as a report shows it: a label and, per size, the figures compared.
public struct ReportSeries: Hashable, Sendable {
    /// One size's figures.
    public struct Point: Hashable, Sendable {
        /// The message size in bytes.
        public var size: Int
        /// The size's result.
        public var result: SizeResult
    }

    /// The test.
    public var test: TestKind
    /// "data loopback 2026-11-22T10:15:00Z", "data unreliable loopback 2026-11-22T10:15:00Z".
    public var label: String
    /// When the run started.
    public var startedAt: Date
    /// One point per size, by size.
    public var points: [Point]
    /// The runner's and the reflector's host names ("?" when not known).
    public var hosts: (runner: String, reflector: String)
    /// The plan, for telling whether two runs may be compared.
    public var plan: TestPlan
    /// Whether the run's link was encrypted: its recorded link security says TLS; for a document that
    /// records none, a data run whose preference was not `none`, and never a raw-tcp run (the baseline
    /// was plain TCP before it could be TLS).
    public var isEncrypted: Bool

    public static func == (lhs: ReportSeries, rhs: ReportSeries) -> Bool {
        lhs.label == rhs.label && lhs.startedAt == rhs.startedAt
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(label)
        hasher.combine(startedAt)
    }

    /// The series of a document.
    ///
    /// - Parameter document: a result document.
    public init(_ document: BenchmarkDocument) {
        test = document.test
        startedAt = document.startedAt
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        let mode = document.plan.mode == .unreliable ? " unreliable" : ""
        label = "\(document.test.rawValue)\(mode) \(document.name) \(formatter.string(from: document.startedAt))"
        points = document.results.map { Point(size: $0.size, result: $0) }.sorted { $0.size < $1.size }
        hosts = (document.runner.hostname, document.reflector?.hostname ?? "?")
        plan = document.plan
        if let linkSecurity = document.connection.linkSecurity {
            isEncrypted = linkSecurity.hasPrefix("TLS")
        } else {
            isEncrypted = document.test != .rawTCP && (document.connection.encryption ?? "none") != "none"
        }
    }

    /// The longest time between a run and the baseline it is compared with.
    public static let baselineWithin: TimeInterval = 12 * 3600

    /// Why `raw` is no fair baseline for this run, or nil when it is: the same hosts, the same sizes
    /// window and pacing, within ``baselineWithin``, and both encrypted (TLS) or both plain.
    public func mismatch(withBaseline raw: ReportSeries) -> String? {
        if hosts.runner != raw.hosts.runner || hosts.reflector != raw.hosts.reflector {
            return
                "other hosts (\(hosts.runner) to \(hosts.reflector) against \(raw.hosts.runner) to \(raw.hosts.reflector))"
        }
        if abs(startedAt.timeIntervalSince(raw.startedAt)) > Self.baselineWithin {
            return "more than 12 hours apart"
        }
        if Set(points.map(\.size)).isDisjoint(with: raw.points.map(\.size)) { return "no size in common" }
        if plan.window != raw.plan.window || plan.delayMilliseconds != raw.plan.delayMilliseconds
            || plan.rate != raw.plan.rate
        {
            return "another load (window, delay or rate)"
        }
        if isEncrypted != raw.isEncrypted {
            return isEncrypted
                ? "this run is encrypted and the baseline is plain TCP: run raw-tcp with the same --encryption"
                : "this run is plain and the baseline is TLS: run raw-tcp with the same --encryption"
        }
        return nil
    }

    /// The series of the message tests in report order (data before raw-tcp, then by start), each data
    /// one paired with the raw-tcp series closest in time that is a fair baseline for it
    /// (``mismatch(withBaseline:)``); a data series without one is named in `refusals`, saying why. Stream
    /// and resource runs have no sizes and are left out (``ComparisonTable`` lists them apart).
    ///
    /// - Parameter documents: the documents.
    /// - Returns: the series, the (ours, raw) pairs, and the refused ones in words.
    public static func ordered(
        _ documents: [BenchmarkDocument]
    ) -> (series: [ReportSeries], pairs: [(ours: ReportSeries, raw: ReportSeries)], refusals: [String]) {
        let series = documents.filter(\.test.isMessageTest).map(ReportSeries.init).sorted {
            ($0.test == .rawTCP ? 1 : 0, $0.startedAt) < ($1.test == .rawTCP ? 1 : 0, $1.startedAt)
        }
        let raws = series.filter { $0.test == .rawTCP }
        var pairs: [(ours: ReportSeries, raw: ReportSeries)] = []
        var refusals: [String] = []
        for ours in series where ours.test != .rawTCP {
            let fair = raws.filter { ours.mismatch(withBaseline: $0) == nil }
            if let raw = fair.min(by: {
                abs($0.startedAt.timeIntervalSince(ours.startedAt))
                    < abs($1.startedAt.timeIntervalSince(ours.startedAt))
            }) {
                pairs.append((ours, raw))
            } else if let nearest = (raws.filter { $0.hosts == ours.hosts }.nilIfEmpty ?? raws).min(by: {
                abs($0.startedAt.timeIntervalSince(ours.startedAt))
                    < abs($1.startedAt.timeIntervalSince(ours.startedAt))
            }), let why = ours.mismatch(withBaseline: nearest) {
                refusals.append("\(ours.label): not compared with \(nearest.label): \(why)")
            }
        }
        return (series, pairs, refusals)
    }

    /// "1 B", "64 B", "1 KiB", "1 MiB", or the number of bytes when not a whole KiB or MiB.
    ///
    /// - Parameter size: bytes.
    public static func sizeLabel(_ size: Int) -> String {
        if size >= 1 << 20, size % (1 << 20) == 0 { return "\(size >> 20) MiB" }
        if size >= 1 << 10, size % (1 << 10) == 0 { return "\(size >> 10) KiB" }
        return "\(size) B"
    }
}

extension Array {
    /// The array, or nil when it is empty.
    fileprivate var nilIfEmpty: [Element]? { isEmpty ? nil : self }
}
