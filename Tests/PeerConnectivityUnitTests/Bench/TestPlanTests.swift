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

    @Test("unreliable data: sizes up to one datagram; other tests are reliable only")
    func unreliable() {
        #expect(problem(TestPlan(mode: .unreliable, sizes: [1, 64, 1024, 16384, 65_000])) == nil)
        let tooLarge = problem(TestPlan(mode: .unreliable, sizes: [64, 65_001]))
        #expect(tooLarge?.contains("--size 65001 is too large for --mode unreliable") == true)
        #expect(tooLarge?.contains("65000") == true)
        #expect(problem(TestPlan(test: .rawTCP, mode: .unreliable))?.contains("--test data and bulk only") == true)
    }

    @Test("streams and resources: bytes and streams checked; options of other tests refused")
    func transfers() {
        #expect(problem(TestPlan(test: .stream, sizes: [], count: 1, warmup: 0, streams: 8, bytes: 1 << 20)) == nil)
        #expect(problem(TestPlan(test: .resource, sizes: [], count: 3, warmup: 1, bytes: 1 << 28)) == nil)
        #expect(
            problem(TestPlan(test: .stream, count: 1, warmup: 0, streams: 0, bytes: 1))?.contains("--streams") == true
        )
        #expect(
            problem(TestPlan(test: .stream, count: 1, warmup: 0, streams: 1, bytes: 0))?.contains("--bytes") == true
        )
        #expect(
            problem(TestPlan(test: .stream, count: 5, warmup: 0, streams: 1, bytes: 1))?.contains("--count") == true
        )
        #expect(
            problem(TestPlan(test: .resource, count: 1, warmup: 0, streams: 2, bytes: 1))?.contains("stream only")
                == true
        )
        #expect(problem(TestPlan(test: .resource, count: 0, warmup: 0, bytes: 1))?.contains("--count") == true)
        #expect(problem(TestPlan(bytes: 100))?.contains("--bytes applies") == true)
        #expect(problem(TestPlan(oneWay: true))?.contains("--one-way applies to --test stream only") == true)
        #expect(problem(TestPlan(test: .stream, count: 1, warmup: 0, streams: 1, bytes: 1, oneWay: true)) == nil)
        #expect(problem(TestPlan(test: .stream, mode: .unreliable, count: 1, warmup: 0, streams: 1, bytes: 1)) != nil)
    }

    @Test("folders: --files or --folder, not both; --beside-echo for the resource and folder tests only")
    func folders() {
        #expect(problem(TestPlan(test: .folder, sizes: [], count: 2, warmup: 1, files: 1_000)) == nil)
        #expect(problem(TestPlan(test: .folder, sizes: [], count: 1, warmup: 0, folderPath: "/srv/photos")) == nil)
        let both = problem(TestPlan(test: .folder, sizes: [], count: 1, warmup: 0, files: 10, folderPath: "/srv"))
        #expect(both?.contains("either --files N") == true)
        #expect(problem(TestPlan(test: .folder, sizes: [], count: 1, warmup: 0))?.contains("either --files") == true)
        #expect(problem(TestPlan(test: .folder, sizes: [], count: 1, warmup: 0, files: 0))?.contains("--files") == true)
        #expect(
            problem(TestPlan(test: .folder, sizes: [], count: 1, warmup: 0, bytes: 10, files: 10))?.contains("--bytes")
                == true
        )
        #expect(problem(TestPlan(test: .resource, sizes: [], count: 1, warmup: 0, bytes: 1, files: 10)) != nil)
        #expect(
            problem(TestPlan(test: .resource, sizes: [], count: 1, warmup: 0, bytes: 1, besideEchoRate: 100)) == nil
        )
        #expect(
            problem(TestPlan(test: .folder, sizes: [], count: 1, warmup: 0, files: 5, besideEchoRate: 0))?
                .contains("--beside-echo must be") == true
        )
        #expect(
            problem(TestPlan(test: .bulk, sizes: [], streams: 1, timeSeconds: 1, besideEchoRate: 10))?
                .contains("--beside-echo applies to --test resource and folder only") == true
        )
        #expect(problem(TestPlan(test: .data, besideEchoRate: 10)) != nil)
    }

    @Test("--file: the resource test's own file, instead of --bytes")
    func ownFile() {
        func plan(_ test: TestKind = .resource, bytes: Int? = nil, path: String = "/srv/video.mkv") -> TestPlan {
            TestPlan(test: test, sizes: [], count: 1, warmup: 0, bytes: bytes, filePath: path)
        }
        #expect(problem(plan()) == nil)
        let cutTooLate = TestPlan(
            test: .resource,
            sizes: [],
            count: 1,
            warmup: 0,
            interruptAtPercent: 150,
            filePath: "f"
        )
        #expect(problem(cutTooLate)?.contains("--interrupt-at takes a percentage") == true)
        #expect(problem(plan(bytes: 1 << 20))?.contains("--bytes does not apply") == true)
        #expect(problem(plan(path: ""))?.contains("--file needs a path") == true)
        let none = TestPlan(test: .resource, sizes: [], count: 0, warmup: 0, filePath: "f")
        #expect(problem(none)?.contains("--count") == true)
        for test in [TestKind.stream, .folder, .data] {
            #expect(problem(plan(test))?.contains("--file applies to --test resource only") == true, "\(test)")
        }
    }

    @Test("--interrupt-at: a percentage strictly between 0 and 100, for the resource test only")
    func interruptAt() {
        func plan(_ percent: Double, test: TestKind = .resource) -> TestPlan {
            TestPlan(
                test: test,
                sizes: [],
                count: 1,
                warmup: 0,
                streams: test == .stream ? 1 : nil,
                bytes: 1 << 26,
                interruptAtPercent: percent
            )
        }
        for percent in [0.5, 50, 99.9] { #expect(problem(plan(percent)) == nil, "\(percent)") }
        for percent in [0, 100, -5, 150, .nan, .infinity] {
            #expect(problem(plan(percent))?.contains("strictly between 0 and 100") == true, "\(percent)")
        }
        #expect(problem(plan(50, test: .stream))?.contains("--interrupt-at applies to --test resource only") == true)
        #expect(
            problem(TestPlan(interruptAtPercent: 50))?.contains("--interrupt-at applies to --test resource only")
                == true
        )
    }

    @Test("--omit: 0 or more and less than --time, for the bulk and responsiveness tests only")
    func omit() {
        func plan(_ omit: Double, test: TestKind = .bulk) -> TestPlan {
            TestPlan(test: test, sizes: [], streams: 1, timeSeconds: 10, omitSeconds: omit)
        }
        for seconds in [0, 0.5, 9.9] { #expect(problem(plan(seconds)) == nil, "\(seconds)") }
        for seconds in [10, 11, -1, .nan, .infinity] {
            #expect(problem(plan(seconds))?.contains("less than --time (10.0 s)") == true, "\(seconds)")
        }
        #expect(problem(TestPlan(omitSeconds: 1))?.contains("--omit applies to --test bulk and responsiveness") == true)
        for seconds in [0, 4.9] { #expect(problem(plan(seconds, test: .responsiveness)) == nil, "\(seconds)") }
        #expect(problem(plan(10, test: .responsiveness))?.contains("less than --time (10.0 s)") == true)
    }

    @Test("a direction with its first seconds omitted: the rate over what followed; nothing to omit changes nothing")
    func omittedDirection() {
        let direction = BulkDirection(sentBytes: 1_000, receivedBytes: 1_000, seconds: 4)
        let omitted = direction.omitting(200, over: 2)
        #expect(omitted.bytesPerSecond == 400, "800 bytes over the last 2 s")
        #expect(omitted.omittedBytes == 200 && omitted.omittedSeconds == 2)
        #expect(omitted.receivedBytes == 1_000 && omitted.seconds == 4, "the totals stay whole")
        for (bytes, seconds) in [(200, 4.0), (200, 0), (1_001, 2)] {
            #expect(direction.omitting(bytes, over: seconds) == direction, "\(bytes) bytes over \(seconds) s")
        }
    }

    @Test("bulk -u: one datagram length with its header, a bitrate, one way only")
    func datagrams() {
        func plan(_ length: Int = 1_400, bitrate: Double? = 20e6, reverse: Bool? = nil) -> TestPlan {
            TestPlan(
                test: .bulk,
                mode: .unreliable,
                sizes: [length],
                streams: 1,
                timeSeconds: 10,
                reverse: reverse,
                bitrate: bitrate
            )
        }
        #expect(problem(plan()) == nil)
        #expect(problem(plan(16)) == nil && problem(plan(65_000)) == nil)
        for length in [15, 65_001] { #expect(problem(plan(length))?.contains("-l 16...65000") == true, "\(length)") }
        #expect(problem(plan(bitrate: nil))?.contains("-b RATE") == true)
        #expect(problem(plan(bitrate: 10))?.contains("1K...100G") == true)
        #expect(problem(plan(reverse: true))?.contains("one way") == true)
        #expect(problem(TestPlan(test: .bulk, sizes: [], streams: 1, timeSeconds: 1, bitrate: 1e6)) != nil)
        #expect(problem(TestPlan(test: .stream, mode: .unreliable, streams: 1, bytes: 1)) != nil)
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
