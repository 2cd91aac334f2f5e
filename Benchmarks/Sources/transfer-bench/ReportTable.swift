import Foundation

/// Prints a plain-text table in columns of fixed widths, the last column unpadded.
public struct ReportTable: Sendable {
    /// The widths of every column but the last.
    public let widths: [Int]

    /// Makes a table.
    ///
    /// - Parameter widths: the widths of every column but the last.
    public init(widths: [Int]) {
        self.widths = widths
    }

    /// Prints one row.
    ///
    /// - Parameter cells: the cells, left to right.
    public func row(_ cells: String...) {
        let padded = cells.enumerated().map { index, cell in
            index < widths.count ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0) : cell
        }
        print(padded.joined(separator: " "))
    }
}
