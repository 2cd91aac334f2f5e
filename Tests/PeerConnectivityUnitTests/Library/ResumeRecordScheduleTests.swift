import Testing

@testable import PeerConnectivity

/// `ResumeRecordSchedule`, in memory, on instants it is given: when a received file's resume record is
/// written.
@Suite("When a resume record is written")
struct ResumeRecordScheduleTests {
    private let start = ContinuousClock.now

    /// Checks `blocks` blocks, the `n`th at `start + n * spacing`; returns the numbers (from 1) of the
    /// blocks after which the record was due.
    private func dues(blocks: Int, spacing: Duration) -> [Int] {
        var schedule = ResumeRecordSchedule()
        return (1...blocks).filter { schedule.blockChecked(at: start + spacing * $0) }
    }

    @Test("on a slow link, every 32 blocks")
    func slowLink() {
        // A block every 100 ms: 32 blocks take 3.2 s, longer than the interval.
        #expect(dues(blocks: 100, spacing: .milliseconds(100)) == [32, 64, 96])
    }

    @Test("on a fast link, the first after 32 blocks, then once a second at most")
    func fastLink() {
        // A block every millisecond (1 GiB/s): the interval, not the count, spaces the records.
        #expect(dues(blocks: 3_500, spacing: .milliseconds(1)) == [32, 1_032, 2_032, 3_032])
    }

    @Test("nothing before 32 blocks, however long they take")
    func fewBlocks() {
        #expect(dues(blocks: 31, spacing: .seconds(10)).isEmpty)
    }
}
