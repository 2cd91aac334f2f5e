/// A test fixture that could not do its part, and why.
struct FixtureError: Error, CustomStringConvertible {
    /// What went wrong.
    var description: String

    init(_ description: String) { self.description = description }
}
