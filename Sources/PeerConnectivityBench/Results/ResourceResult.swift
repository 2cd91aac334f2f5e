/// One resource of the resource test: a file of `--bytes` sent with `sendResource`, received and
/// confirmed by the reflector (size and SHA-256 of the file it got). Times are nanoseconds.
public struct ResourceResult: Codable, Hashable, Sendable {
    /// The transfer's number: 0 to `--count` − 1 (warm-up transfers are not kept).
    public var index: Int
    /// The name it was sent with.
    public var name: String
    /// The file's size.
    public var bytes: Int
    /// What became of it.
    public var outcome: TransferOutcome
    /// Why it failed or was judged corrupted.
    public var error: String?
    /// `sendResource` called to `wait()` returning: the library's own end-to-end check (the reflector's
    /// session has checked the SHA-256 and kept the file).
    public var transferNanoseconds: UInt64?
    /// `wait()` returning to the reflector's confirmation arriving (its own hashing of the file included).
    public var confirmationNanoseconds: UInt64?
    /// `bytes` over `transferNanoseconds`.
    public var bytesPerSecond: Double
    /// The size the reflector reported.
    public var confirmedSize: Int?
    /// The SHA-256 the reflector reported.
    public var confirmedSHA256: String?

    /// Makes a result, not yet sent.
    ///
    /// - Parameters:
    ///   - index: its number.
    ///   - name: its name.
    ///   - bytes: its size.
    public init(index: Int, name: String, bytes: Int) {
        self.index = index
        self.name = name
        self.bytes = bytes
        outcome = .failed
        bytesPerSecond = 0
    }
}
