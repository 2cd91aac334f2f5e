/// What became of one stream or resource of the stream and resource tests: each has exactly one.
public enum TransferOutcome: String, Codable, CaseIterable, Sendable {
    /// Every byte came back (stream) or was confirmed by the reflector's SHA-256 (resource).
    case completed
    /// Bytes came back different, or the reflector's size or SHA-256 differs from the runner's.
    case corrupted
    /// The transfer failed: cancelled, refused, or its connection closed (`error` says why).
    case failed
    /// It had not completed when `--duration` ran out, and was cancelled.
    case timedOut = "timed-out"
}
