/// What became of one message sent: each message sent has exactly one outcome.
public enum MessageOutcome: String, Codable, CaseIterable, Sendable {
    /// Its echo came back in time with every byte as sent.
    case echoed
    /// No echo within the timeout (one arriving later counts as late, not echoed).
    case lost
    /// Its echo came back in time with the wrong size or bytes.
    case corrupted
}
