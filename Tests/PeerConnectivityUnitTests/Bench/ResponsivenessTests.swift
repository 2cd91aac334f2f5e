import Foundation
import Testing

@testable import PeerConnectivityBench

/// The responsiveness test's arithmetic, without a network: which probe belongs to which phase, the
/// trimmed means and the RPM they give, the bands, the probes' encoding and the plan's rules.
@Suite("Responsiveness: probes, RPM, plan")
struct ResponsivenessTests {
    @Test("a probe counts in the phase it was sent in, wherever its echo arrives; an echo counts once")
    func phases() {
        var ledger = ProbeLedger(phases: 2)
        let early = ledger.send(.foreign, at: 1_000)
        let own = ledger.send(.selfFlow, at: 1_500)
        ledger.begin(phase: 1)
        let late = ledger.send(.foreign, at: 5_000)
        #expect(ledger.answered(early, at: 6_000) == 5_000)
        #expect(ledger.answered(early, at: 7_000) == nil, "a second echo of the same probe is not a round trip")
        #expect(ledger.answered(999, at: 7_000) == nil, "an echo of a probe never sent is ignored")
        #expect(ledger.answered(late, at: 5_400) == 400)
        #expect(ledger.roundTrips(.foreign, phase: 0) == [5_000])
        #expect(ledger.roundTrips(.foreign, phase: 1) == [400])
        #expect(ledger.sentCount(.selfFlow, phase: 0) == 1 && ledger.roundTrips(.selfFlow, phase: 0).isEmpty)
        #expect(ledger.outstandingCount == 1 && own > 0)
        #expect(ledger.takeInterval() == [.foreign: [5_000, 400]])
        #expect(ledger.takeInterval().isEmpty, "an interval's round trips are taken once")
    }

    @Test("a datagram probe may be lost: the wait at a phase's end is for the probes on connections only")
    func datagramProbes() throws {
        var ledger = ProbeLedger(phases: 1)
        let datagram = ledger.send(.datagram, at: 0)
        let foreign = ledger.send(.foreign, at: 0)
        #expect(ledger.outstandingCount == 2 && ledger.outstandingOnConnections == 1)
        #expect(ledger.answered(foreign, at: 10) == 10)
        #expect(ledger.outstandingCount == 1 && ledger.outstandingOnConnections == 0)
        #expect(ledger.answered(datagram, at: 30) == 30)
        #expect(ledger.roundTrips(.datagram, phase: 0) == [30] && ledger.roundTrips(.foreign, phase: 0) == [10])
        // In the document as "udp", beside "foreign" and "self"; a document without them still reads.
        let phase = ResponsivenessPhase(
            name: .idle,
            seconds: 1,
            download: nil,
            upload: nil,
            foreign: ProbeResult(sent: 1, roundTrips: [10]),
            selfProbes: ProbeResult(sent: 0, roundTrips: []),
            datagramProbes: ProbeResult(sent: 2, roundTrips: [30])
        )
        let json = try #require(String(data: try JSONEncoder().encode(phase), encoding: .utf8))
        #expect(json.contains("\"udp\":{"), "\(json)")
        #expect(try JSONDecoder().decode(ResponsivenessPhase.self, from: Data(json.utf8)) == phase)
        var older = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        older["udp"] = nil
        let read = try JSONDecoder().decode(
            ResponsivenessPhase.self,
            from: try JSONSerialization.data(withJSONObject: older)
        )
        #expect(read.datagramProbes == nil && read.foreign == phase.foreign)
    }

    @Test("probes sent while a phase omits its ramp-up come back, are counted apart and left out of its figures")
    func omitted() {
        var ledger = ProbeLedger(phases: 2)
        ledger.begin(phase: 1, omitting: true)
        let early = ledger.send(.foreign, at: 0)
        ledger.settle()
        let late = ledger.send(.foreign, at: 100)
        #expect(ledger.answered(early, at: 900) == 900 && ledger.answered(late, at: 150) == 50)
        #expect(ledger.roundTrips(.foreign, phase: 1) == [50])
        #expect(ledger.sentCount(.foreign, phase: 1) == 1 && ledger.omittedCount(.foreign, phase: 1) == 1)
        #expect(ledger.takeInterval() == [.foreign: [900, 50]], "the intervals show every round trip")
    }

    @Test("the trimmed mean leaves out the slowest 5%; the RPM weighs foreign and self half each")
    func score() throws {
        // 95 round trips of 10 ms and 5 of 10 s: the mean without the slowest 5% is 10 ms.
        let samples =
            Array(repeating: UInt64(10_000_000), count: 95) + Array(repeating: UInt64(10_000_000_000), count: 5)
        #expect(ResponsivenessScore.trimmedMean(samples.shuffled()) == 10_000_000)
        #expect(ResponsivenessScore.trimmedMean([]) == nil)
        #expect(ResponsivenessScore.trimmedMean([7]) == 7, "one sample is its own mean")
        // Foreign 10 ms and self 30 ms: a 20 ms round trip, 3,000 a minute.
        let rpm = try #require(ResponsivenessScore.rpm(foreign: 10e6, selfFlow: 30e6))
        #expect(abs(rpm - 3_000) < 1e-6)
        #expect(ResponsivenessScore.rpm(foreign: 200e6, selfFlow: nil) == 300, "one kind alone counts alone")
        #expect(ResponsivenessScore.rpm(foreign: nil, selfFlow: nil) == nil)
        #expect(ResponsivenessScore.band(299) == "low")
        #expect(ResponsivenessScore.band(300) == "medium")
        #expect(ResponsivenessScore.band(999) == "medium")
        #expect(ResponsivenessScore.band(1_000) == "high")
    }

    @Test("a phase derives its RPM and band from its probes; none back: no RPM")
    func phase() {
        let loaded = ResponsivenessPhase(
            name: .download,
            seconds: 5,
            download: BulkDirection(sentBytes: 0, receivedBytes: 12_500_000, seconds: 5),
            upload: nil,
            foreign: ProbeResult(sent: 3, roundTrips: [150_000_000, 150_000_000]),
            selfProbes: ProbeResult(sent: 2, roundTrips: [250_000_000])
        )
        #expect(loaded.rpm == 300 && loaded.rpmBand == "medium")
        #expect(loaded.foreign.answered == 2 && loaded.foreign.sent == 3)
        let silent = ResponsivenessPhase(
            name: .idle,
            seconds: 5,
            download: nil,
            upload: nil,
            foreign: ProbeResult(sent: 4, roundTrips: []),
            selfProbes: ProbeResult(sent: 4, roundTrips: [])
        )
        #expect(silent.rpm == nil && silent.rpmBand == nil)
    }

    @Test("the document names the self probes \"self\" and every phase has an rpm; a silent kind is a failure")
    func document() throws {
        let phase = ResponsivenessPhase(
            name: .both,
            seconds: 5,
            download: nil,
            upload: nil,
            foreign: ProbeResult(sent: 10, roundTrips: [1_000_000]),
            selfProbes: ProbeResult(sent: 10, roundTrips: [])
        )
        let result = ResponsivenessResult(
            loadFlows: 8,
            phaseSeconds: 5,
            probeIntervalMilliseconds: 20,
            runnerNotSentLowWatermark: 131_072,
            phases: [phase]
        )
        let json = try #require(String(data: try JSONEncoder().encode(result), encoding: .utf8))
        #expect(json.contains("\"self\":{") && json.contains("\"rpm\":") && json.contains("\"name\":\"both\""))
        #expect(try JSONDecoder().decode(ResponsivenessResult.self, from: Data(json.utf8)) == result)
        var document = BenchmarkDocument(
            name: "n",
            startedAt: Date(),
            finishedAt: Date(),
            runner: HostInfo.current(),
            reflector: nil,
            connection: ConnectionReport(method: .direct),
            plan: TestPlan(test: .responsiveness, sizes: [], streams: 8, timeSeconds: 5),
            results: []
        )
        document.responsiveness = result
        #expect(document.failures == ["both phase: none of 10 self probes came back"])
    }

    @Test("probes: the prefix and a big-endian sequence; anything else is not one")
    func probes() {
        let probe = LatencyProbe.encoded(0x0102_0304_0506_0708)
        #expect(probe.count == LatencyProbe.size)
        #expect(LatencyProbe.sequence(of: probe) == 0x0102_0304_0506_0708)
        #expect(LatencyProbe.sequence(of: probe.dropLast()) == nil)
        #expect(LatencyProbe.sequence(of: Data(repeating: 0, count: LatencyProbe.size)) == nil)
    }

    @Test("the plan: 1...16 load flows, phases of 1 s or more, no sizes or bytes")
    func plan() {
        func plan(streams: Int? = 8, time: Double? = 5, sizes: [Int] = [], bytes: Int? = nil) -> TestPlan {
            TestPlan(test: .responsiveness, sizes: sizes, streams: streams, bytes: bytes, timeSeconds: time)
        }
        #expect(throws: Never.self) { try plan().validate() }
        #expect(throws: Never.self) { try plan(streams: 16, time: 1).validate() }
        #expect(throws: BenchError.self) { try plan(streams: 17).validate() }
        #expect(throws: BenchError.self) { try plan(streams: 0).validate() }
        #expect(throws: BenchError.self) { try plan(time: 0.5).validate() }
        #expect(throws: BenchError.self) { try plan(sizes: [64]).validate() }
        #expect(throws: BenchError.self) { try plan(bytes: 1).validate() }
    }

    @Test("an interval of the responsiveness test prints its phase and both probes' medians")
    func intervalLine() {
        var interval = IntervalResult(startSeconds: 5, endSeconds: 6)
        interval.phase = "download"
        interval.receivedBytes = 2_500_000
        interval.sentBytes = 0
        interval.roundTripP50Nanoseconds = 142_300_000
        interval.selfRoundTripP50Nanoseconds = 81_200
        #expect(
            interval.line(format: .automatic)
                == "[   5.0-   6.0 s] download: 0 bit/s sent, 20.0 Mbit/s received, probes p50 142.3 ms foreign, 81.2 us self"
        )
    }
}

/// How a runner asks the reflector to bound its unsent bytes: a word in its invitation's context.
@Suite("The invitation's asks of the reflector: low watermark, its gate, congestion control")
struct RunnerInvitationLowWatermarkTests {
    @Test("the word is read back, clamped to 4 KiB...64 MiB, beside the reconnection word, whatever the name")
    func word() {
        func read(_ context: Data) -> Int? { RunnerInvitation.notSentLowWatermark(in: context) }
        let asked = RunnerInvitation.context(
            runName: "a b",
            test: .responsiveness,
            reconnects: false,
            notSentLowWatermark: 131_072
        )
        #expect(String(decoding: asked, as: UTF8.self) == "test-runner a b responsiveness not-sent-lowat=131072")
        #expect(read(asked) == 131_072)
        let both = RunnerInvitation.context(
            runName: "x",
            test: .responsiveness,
            reconnects: true,
            notSentLowWatermark: 1
        )
        #expect(read(both) == 4 << 10 && RunnerInvitation.asksForReconnection(both))
        #expect(read(RunnerInvitation.context(runName: "not-sent-lowat=5 y", test: .bulk, reconnects: false)) == nil)
        #expect(read(Data("someone not-sent-lowat=99999".utf8)) == nil, "only a test-runner's context")
        #expect(read(Data("test-runner n responsiveness not-sent-lowat=999999999999".utf8)) == 64 << 20)
    }

    @Test("the congestion control is read back beside the other words; a name that is none, or the run's, is not")
    func congestionWord() {
        func read(_ context: Data) -> String? { RunnerInvitation.congestionControl(in: context) }
        let all = RunnerInvitation.context(
            runName: "lab one",
            test: .responsiveness,
            reconnects: true,
            notSentLowWatermark: 16_384,
            congestionControl: "cubic"
        )
        #expect(
            String(decoding: all, as: UTF8.self)
                == "test-runner lab one responsiveness not-sent-lowat=16384 congestion=cubic reconnection"
        )
        #expect(read(all) == "cubic" && RunnerInvitation.notSentLowWatermark(in: all) == 16_384)
        #expect(RunnerInvitation.asksForReconnection(all))
        let alone = RunnerInvitation.context(
            runName: "x",
            test: .bulk,
            reconnects: false,
            notSentLowWatermark: nil,
            congestionControl: "bbr"
        )
        #expect(read(alone) == "bbr" && RunnerInvitation.notSentLowWatermark(in: alone) == nil)
        #expect(read(RunnerInvitation.context(runName: "congestion=reno", test: .bulk, reconnects: false)) == nil)
        #expect(read(RunnerInvitation.context(runName: "n congestion=reno", test: .data, reconnects: true)) == nil)
        #expect(read(Data("test-runner n bulk congestion=Cubic!".utf8)) == nil, "not a kernel's name")
        #expect(read(Data("test-runner n bulk congestion=sixteen-letters-x".utf8)) == nil, "over 15 bytes")
        #expect(read(Data("test-runner n nosuchtest congestion=reno".utf8)) == nil, "no test before it")
    }

    @Test("the gate is asked off after the low watermark, read back beside the other words; on otherwise")
    func gateWord() {
        let off = RunnerInvitation.context(
            runName: "lab",
            test: .responsiveness,
            reconnects: true,
            notSentLowWatermark: 4_096,
            congestionControl: "cubic",
            gatesUnsentBytes: false
        )
        #expect(
            String(decoding: off, as: UTF8.self)
                == "test-runner lab responsiveness not-sent-lowat=4096 unsent-gate=off congestion=cubic reconnection"
        )
        #expect(!RunnerInvitation.gatesUnsentBytes(in: off))
        #expect(RunnerInvitation.notSentLowWatermark(in: off) == 4_096)
        #expect(RunnerInvitation.congestionControl(in: off) == "cubic" && RunnerInvitation.asksForReconnection(off))
        let on = RunnerInvitation.context(
            runName: "lab",
            test: .responsiveness,
            reconnects: false,
            notSentLowWatermark: 4_096
        )
        #expect(RunnerInvitation.gatesUnsentBytes(in: on))
        // Without a low watermark there is nothing to gate: the word is not written.
        let none = RunnerInvitation.context(
            runName: "lab",
            test: .bulk,
            reconnects: false,
            notSentLowWatermark: nil,
            gatesUnsentBytes: false
        )
        #expect(String(decoding: none, as: UTF8.self) == "test-runner lab bulk")
        let named = RunnerInvitation.context(runName: "unsent-gate=off", test: .bulk, reconnects: false)
        #expect(RunnerInvitation.gatesUnsentBytes(in: named), "a run's name cannot ask")
    }
}
