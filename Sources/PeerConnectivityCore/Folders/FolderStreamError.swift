/// A folder stream (``FolderStream``) that does not parse: the receiver ends the folder with RESET
/// (failed) and says why.
package struct FolderStreamError: Error, Hashable, CustomStringConvertible {
    /// Why, for the log and the transfer's error.
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
