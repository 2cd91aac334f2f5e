import Foundation

extension BenchmarkDocument {
    /// The JSON of the document: pretty-printed (or on one line), sorted keys, ISO-8601 dates in UTC with
    /// milliseconds (``startedAt`` is the origin of the samples' times).
    ///
    /// - Parameter pretty: whether to indent it over many lines (one line for `--json-stream`).
    /// - Throws: an `EncodingError` (not expected: every field encodes).
    public func encoded(pretty: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Self.dateFormatter(fractionalSeconds: true).string(from: date))
        }
        return try encoder.encode(self)
    }

    /// Reads ISO-8601 dates with or without fractional seconds.
    private static let dateDecoding = JSONDecoder.DateDecodingStrategy.custom { decoder in
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard
            let date = dateFormatter(fractionalSeconds: true).date(from: text)
                ?? dateFormatter(fractionalSeconds: false).date(from: text)
        else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO-8601 date: \(text)")
        }
        return date
    }

    private static func dateFormatter(fractionalSeconds: Bool) -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions =
            fractionalSeconds ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter
    }

    /// Reads a document written by ``encoded()``.
    ///
    /// - Parameter data: the JSON.
    /// - Throws: ``BenchError/invalidDocument(_:_:)`` when it is not a result document of a schema this
    ///   build reads.
    public init(decoding data: Data, path: String = "document") throws(BenchError) {
        struct Header: Decodable {
            var schemaVersion: Int?
            var tool: ToolInfo?
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = Self.dateDecoding
        guard let header = try? decoder.decode(Header.self, from: data), let version = header.schemaVersion,
            header.tool != nil
        else {
            throw .invalidDocument(path, "not a test-runner result (no schemaVersion and tool)")
        }
        guard version <= Self.currentSchemaVersion else {
            throw .invalidDocument(
                path,
                "schemaVersion \(version) is newer than this tool reads (\(Self.currentSchemaVersion))"
            )
        }
        do {
            self = try decoder.decode(Self.self, from: data)
        } catch {
            throw .invalidDocument(path, "\(error)")
        }
    }

    /// The folder runs are written to unless told otherwise: `results/runs`, which git ignores, so that a
    /// user's own runs stay apart from the results the repository commits.
    public static let defaultDirectory = "results/runs"

    /// Where a run is written by default: `results/runs/<UTC start>-<test>-<name>.json`, e.g.
    /// `results/runs/2026-11-22T10-15-00Z-data-loopback.json` (colons would trouble some file systems);
    /// an unreliable data run is `data-unreliable`.
    ///
    /// - Parameter directory: the folder, ``defaultDirectory`` by default.
    /// - Returns: the relative path.
    public func defaultPath(directory: String = BenchmarkDocument.defaultDirectory) -> String {
        let stamp = Self.dateFormatter(fractionalSeconds: false).string(from: startedAt).replacingOccurrences(
            of: ":",
            with: "-"
        )
        let safeName = String(name.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "-" })
        let mode = plan.mode == .unreliable ? "-unreliable" : ""
        return "\(directory)/\(stamp)-\(test.rawValue)\(mode)-\(safeName).json"
    }
}
