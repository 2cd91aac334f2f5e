import Metrics
import MetricsTestKit

/// The metrics backend of the whole test process: `MetricsSystem.bootstrap` may be called once per
/// process, so every test that reads metrics shares this one, bootstrapped on first use.
///
/// Tests that ran before it recorded into the no-op backend; those that run after it record here
/// too, so a test compares what it reads before and after its own work (at least, never exactly).
enum SharedTestMetrics {
    static let backend: TestMetrics = {
        let metrics = TestMetrics()
        MetricsSystem.bootstrap(metrics)
        return metrics
    }()

    /// The sum of a counter's increments so far; 0 if nothing made it yet.
    static func total(_ label: String, _ dimensions: [(String, String)] = []) -> Int64 {
        (try? backend.expectCounter(label, dimensions))?.totalValue ?? 0
    }

    /// The durations a timer recorded so far, in nanoseconds.
    static func durations(_ label: String, _ dimensions: [(String, String)] = []) -> [Int64] {
        (try? backend.expectTimer(label, dimensions))?.values ?? []
    }
}
