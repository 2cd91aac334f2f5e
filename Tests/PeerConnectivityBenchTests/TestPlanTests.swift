import Testing

@testable import PeerConnectivityBench

@Suite("Test plan rules")
struct TestPlanTests {
    func problem(_ plan: TestPlan) -> String? {
        do {
            try plan.validate()
            return nil
        } catch {
            return error.message
        }
    }

    @Test("the defaults and a full sweep are valid")
    func valid() {
        #expect(problem(TestPlan()) == nil)
        #expect(problem(TestPlan(test: .rawTCP, sizes: [1, 64, 1024, 65536, 1_048_576], window: 256)) == nil)
    }

    @Test("tests and modes the library lacks are refused, saying so")
    func notYet() {
        #expect(problem(TestPlan(test: .resource))?.contains("not available yet") == true)
        #expect(problem(TestPlan(test: .stream))?.contains("no streams") == true)
        #expect(problem(TestPlan(mode: .unreliable))?.contains("no unreliable mode") == true)
    }

    @Test("out-of-range values name the option and the range")
    func ranges() {
        #expect(problem(TestPlan(sizes: []))?.contains("--size") == true)
        #expect(problem(TestPlan(sizes: [0]))?.contains("1...1048576") == true)
        #expect(problem(TestPlan(sizes: [2_000_000]))?.contains("--size 2000000") == true)
        #expect(problem(TestPlan(sizes: [64, 64]))?.contains("twice") == true)
        #expect(problem(TestPlan(count: 0))?.contains("--count") == true)
        #expect(problem(TestPlan(window: 0))?.contains("--window") == true)
        #expect(problem(TestPlan(timeoutSeconds: 0))?.contains("--timeout") == true)
        #expect(problem(TestPlan(durationSeconds: 0))?.contains("--duration") == true)
        #expect(problem(TestPlan(delayMilliseconds: -1))?.contains("--delay-ms") == true)
    }

    @Test("a window wider than tiny payloads can name is refused")
    func tinyWindow() {
        #expect(problem(TestPlan(sizes: [1, 64], window: 257))?.contains("--window 256 or less") == true)
        #expect(problem(TestPlan(sizes: [2], window: 65_536)) == nil)
    }
}
