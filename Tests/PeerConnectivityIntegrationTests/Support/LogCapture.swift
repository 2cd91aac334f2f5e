import Logging

/// Keeps every log record written through its loggers, with the level and metadata, for tests that
/// check what an operator would read.
final class LogCapture: Sendable {
    /// One record.
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]

        /// The line as a text handler would print it: message and metadata.
        var line: String {
            ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        }
    }

    private let storage = Locked<[Record]>([])

    /// Everything logged so far.
    var records: [Record] { storage.withLock { $0 } }

    /// A logger that writes here, at `level` and above.
    func logger(label: String, level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ record: Record) {
        storage.withLock { $0.append(record) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged = metadata
            merged.merge(event.metadata ?? [:]) { $1 }
            capture.append(
                Record(
                    level: event.level,
                    message: "\(event.message)",
                    metadata: merged.mapValues { "\($0)" }
                )
            )
        }
    }
}
