/// A folder stream (``FolderStream``) that does not parse, or holds more than the receiver takes: the
/// receiver ends the folder with RESET (failed, or too large when ``isOverLimit``) and says why.
package struct FolderStreamError: Error, Hashable, CustomStringConvertible {
    /// Why, for the log and the transfer's error.
    package let description: String
    /// Whether the stream is well formed but holds more entries than the receiver takes: a refusal, not
    /// a fault.
    package let isOverLimit: Bool

    /// An error saying `description`; `isOverLimit` for a stream over the receiver's limit.
    package init(_ description: String, isOverLimit: Bool = false) {
        self.description = description
        self.isOverLimit = isOverLimit
    }
}
