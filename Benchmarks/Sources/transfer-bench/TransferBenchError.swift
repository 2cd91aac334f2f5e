/// A benchmark that could not be carried out, with a message for the person running it.
public struct TransferBenchError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// Makes an error.
    ///
    /// - Parameter description: what went wrong.
    public init(_ description: String) { self.description = description }
}
