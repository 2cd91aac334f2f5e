/// Why a benchmark could not measure: the peer left, or answered something else.
package struct BenchmarkFailure: Error, CustomStringConvertible {
    package let description: String

    /// Makes a failure.
    ///
    /// - Parameter description: what went wrong.
    package init(_ description: String) {
        self.description = description
    }
}
