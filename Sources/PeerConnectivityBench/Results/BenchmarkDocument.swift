import Foundation

/// One run of `test-runner`, as written to `results/runs/<UTC start>-<test>-<name>.json` by default.
///
/// Encoded with sorted keys and ISO-8601 dates (``encoded()``); times are nanoseconds of the monotonic
/// clock, sizes bytes, throughput bytes per second. ``schemaVersion`` changes when a field changes
/// meaning or goes away; new fields may appear without it.
public struct BenchmarkDocument: Codable, Hashable, Sendable {
    /// The schema this build writes. 2 added `error`, the tool's library version and commit, and the
    /// connection's encryption, addresses and interface; documents of schema 1 still decode.
    public static let currentSchemaVersion = 2

    /// The schema of this document.
    public var schemaVersion: Int
    /// The tool and its version.
    public var tool: ToolInfo
    /// The run's name (`--name`, by default the host name).
    public var name: String
    /// The test.
    public var test: TestKind
    /// When the run started (wall clock); samples count from here.
    public var startedAt: Date
    /// When the run ended (wall clock).
    public var finishedAt: Date
    /// The runner's host.
    public var runner: HostInfo
    /// The reflector's host, as it described itself; nil when it could not say.
    public var reflector: HostInfo?
    /// How the reflector was reached, and how long that took.
    public var connection: ConnectionReport
    /// The plan that ran.
    public var plan: TestPlan
    /// One result per size, in the plan's order (data and raw-tcp tests; empty for the others).
    public var results: [SizeResult]
    /// The stream test's streams and totals; nil for the other tests.
    public var streams: StreamTestResult?
    /// The resource test's transfers and totals; nil for the other tests.
    public var resources: ResourceTestResult?
    /// The bulk test's figures; nil for the other tests.
    public var bulk: BulkTestResult?
    /// The responsiveness test's phases; nil for the other tests.
    public var responsiveness: ResponsivenessResult?
    /// The interval reports (`--interval`), in order; nil without intervals.
    public var intervals: [IntervalResult]?
    /// The CPU time both ends spent during the test.
    public var cpu: CPUUsage?
    /// The peak memory of both ends' processes, read at the test's end; nil where the system does not tell.
    public var memory: MemoryUsage?
    /// Why the run stopped before its plan was done (the reflector went away, it was interrupted, it
    /// could not be reached): what completed is still in the document. Nil when the plan ran to its end.
    public var error: String?

    /// Makes a document.
    ///
    /// - Parameters:
    ///   - name: the run's name.
    ///   - startedAt: when the run started.
    ///   - finishedAt: when it ended.
    ///   - runner: the runner's host.
    ///   - reflector: the reflector's host.
    ///   - connection: how the reflector was reached.
    ///   - plan: the plan.
    ///   - results: one result per size.
    ///   - streams: the stream test's section.
    ///   - resources: the resource test's section.
    ///   - error: why the run stopped early, if it did.
    public init(
        name: String,
        startedAt: Date,
        finishedAt: Date,
        runner: HostInfo,
        reflector: HostInfo?,
        connection: ConnectionReport,
        plan: TestPlan,
        results: [SizeResult],
        streams: StreamTestResult? = nil,
        resources: ResourceTestResult? = nil,
        error: String? = nil
    ) {
        schemaVersion = Self.currentSchemaVersion
        tool = ToolInfo()
        self.name = name
        test = plan.test
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.runner = runner
        self.reflector = reflector
        self.connection = connection
        self.plan = plan
        self.results = results
        self.streams = streams
        self.resources = resources
        self.error = error
    }
}
