/// When a ``FileWriter`` writes its resume record while a transfer runs: once at least
/// ``blocksPerSave`` blocks have been checked since the last record, and not sooner than ``interval``
/// after it.
///
/// The record lets a process that stops resume the blocks it had, so it follows the blocks; but each
/// record is a new file renamed over the old one, and while much of a large file is dirty in the page
/// cache that costs ext4 far more than its bytes: a 4 GiB resource left to the page cache, a record every
/// 32 blocks (30 a second and more), moved at about 0.8 of the rate it had with none (PERFORMANCE-HISTORY,
/// "Received files and the page cache"). Once a second bounds that cost on any link, and a process that
/// stops loses at most a second's blocks.
///
/// A pure value: the writer says when a block was checked, and writes the record when told to.
struct ResumeRecordSchedule {
    /// Blocks checked between two records at least.
    static let blocksPerSave = 32
    /// The least time between two records.
    static let interval: Duration = .seconds(1)

    /// Blocks checked since the last record.
    private var checkedSinceSave = 0
    /// When the last record was written; `nil` before the first.
    private var lastSave: ContinuousClock.Instant?

    /// A schedule for a transfer that has written no record yet.
    init() {}

    /// A block was checked at `now`: whether to write the record now.
    ///
    /// - Parameter now: the time of the check, on the continuous clock.
    /// - Returns: `true` when the record is due; the schedule counts from `now` then.
    mutating func blockChecked(at now: ContinuousClock.Instant) -> Bool {
        checkedSinceSave += 1
        guard checkedSinceSave >= Self.blocksPerSave else { return false }
        if let lastSave, now - lastSave < Self.interval { return false }
        checkedSinceSave = 0
        lastSave = now
        return true
    }
}
