import Foundation

/// Writes a benchmark's result document: pretty JSON, sorted keys, ISO-8601 dates.
public enum ResultFile {
    /// Encodes `result` to `output`, or to `results/runs/<tool>-<UTC date>.json` (git-ignored) by default,
    /// creating the folder.
    ///
    /// - Parameters:
    ///   - result: the document.
    ///   - tool: the tool's name, which begins the default file name.
    ///   - date: the run's date, which ends the default file name.
    ///   - output: the path given on the command line, if any.
    /// - Returns: the path written.
    /// - Throws: when the folder cannot be created or the file written.
    @discardableResult
    public static func write(_ result: some Encodable, tool: String, date: Date, output: String?) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let day = ISO8601DateFormatter.string(
            from: date,
            timeZone: TimeZone(identifier: "UTC")!,
            formatOptions: [.withFullDate]
        )
        let path = output ?? "results/runs/\(tool)-\(day).json"
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try encoder.encode(result).write(to: URL(fileURLWithPath: path))
        return path
    }
}
