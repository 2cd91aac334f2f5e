import Benchmark

/// Holds a benchmark's fixture between its setup and its teardown.
private final class FixtureSlot<Fixture> {
    var fixture: Fixture?
}

/// Registers a benchmark that measures against a fixture made once, before the warm-up iterations, and
/// stopped after the last iteration: connections and listeners are set up outside every measurement.
///
/// - Parameters:
///   - name: the benchmark's name (also its thresholds file's).
///   - configuration: metrics, scaling, limits and tolerances.
///   - make: builds the fixture.
///   - stop: releases it.
///   - body: one iteration; it calls `startMeasurement()` and `stopMeasurement()` around what it measures.
package func fixtureBenchmark<Fixture>(
    _ name: String,
    configuration: Benchmark.Configuration,
    make: @escaping () async throws -> Fixture,
    stop: @escaping (Fixture) async -> Void,
    body: @escaping (Benchmark, Fixture) async throws -> Void
) {
    let slot = FixtureSlot<Fixture>()
    Benchmark(name, configuration: configuration) { benchmark in
        guard let fixture = slot.fixture else {
            benchmark.error("\(name): no fixture")
            return
        }
        do {
            try await body(benchmark, fixture)
        } catch {
            benchmark.error("\(name): \(error)")
        }
    } setup: {
        slot.fixture = try await make()
    } teardown: {
        if let fixture = slot.fixture { await stop(fixture) }
        slot.fixture = nil
    }
}
