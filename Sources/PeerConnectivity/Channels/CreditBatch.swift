/// Bytes a receiver has taken and not yet given back to the writer as credit: CREDIT goes out once
/// a batch has gathered, not per chunk. The batch must be at most the window, or the writer would
/// wait for credit that never comes.
struct CreditBatch {
    /// How many bytes make a batch.
    let size: Int
    private var gathered = 0

    init(size: Int) {
        self.size = max(1, size)
    }

    /// Counts `count` bytes taken.
    ///
    /// - Returns: the credit to grant now (a whole batch or more), or 0.
    mutating func took(_ count: Int) -> Int {
        gathered += count
        guard gathered >= size else { return 0 }
        defer { gathered = 0 }
        return gathered
    }
}
