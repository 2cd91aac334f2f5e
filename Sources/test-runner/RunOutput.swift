import Foundation
import PeerConnectivityBench
import Synchronization

/// Where `run` writes for people: standard output (a progress line in place on a terminal), or
/// `--logfile`; nothing but the JSON with `--json`, nothing but JSON lines with `--json-stream`, nothing
/// but paths and errors with `--quiet`. Errors always go to standard error too.
final class RunOutput: Sendable {
    /// What standard output carries.
    enum Mode: Sendable {
        /// Lines for people.
        case lines
        /// Only the paths written (and errors, on standard error).
        case quiet
        /// Only the JSON document, at the end.
        case json
        /// Only JSON objects, one a line, as events happen.
        case jsonStream
    }

    private let mode: Mode
    private let file: FileHandle?
    private let timestamps: Bool
    private let showsProgress: Bool
    private let progressShown = Mutex(false)

    init(mode: Mode, logfile: String?, timestamps: Bool = false) throws {
        self.mode = mode
        self.timestamps = timestamps
        if let logfile {
            if !FileManager.default.fileExists(atPath: logfile) {
                _ = FileManager.default.createFile(atPath: logfile, contents: nil)
            }
            guard let handle = FileHandle(forWritingAtPath: logfile) else {
                throw RunOutputError(message: "cannot write --logfile \(logfile)")
            }
            handle.seekToEndOfFile()
            file = handle
        } else {
            file = nil
        }
        showsProgress = mode == .lines && logfile == nil && ProgressLine.isTerminal
    }

    /// Whether standard output is for people's lines.
    private var linesOnStandardOutput: Bool { mode == .lines || mode == .quiet }

    /// A line for people: the run's story (first line, intervals, summary).
    func line(_ text: String) {
        guard mode != .quiet else { return }
        write(text, toStandardOutput: linesOnStandardOutput)
    }

    /// A line that even `--quiet` prints ("wrote PATH"); not with `--json` or `--json-stream`.
    func always(_ text: String) {
        write(text, toStandardOutput: linesOnStandardOutput)
    }

    /// With `--json-stream`, an interval on a line of its own: `{"event":"interval","data":INTERVAL}`.
    func jsonEvent(_ interval: IntervalResult) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        jsonEvent("interval") { try encoder.encode(interval) }
    }

    /// With `--json-stream`, the document on the last line: `{"event":"end","data":DOCUMENT}`.
    func jsonEvent(_ document: BenchmarkDocument) {
        jsonEvent("end") { try document.encoded(pretty: false) }
    }

    private func jsonEvent(_ name: String, _ encode: () throws -> Data) {
        guard mode == .jsonStream else { return }
        guard let data = try? encode(), let quoted = try? JSONEncoder().encode(name) else { return }
        // The event's name first, so that a reader can tell the kind before the data.
        let line = Data(#"{"event":"#.utf8) + quoted + Data(#","data":"#.utf8) + data + Data("}\n".utf8)
        try? FileHandle.standardOutput.write(contentsOf: line)
    }

    /// An error: on standard error, and in the log file.
    func error(_ text: String, newline: Bool = true) {
        let text = newline ? text + "\n" : text
        clearProgress()
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
        try? file?.write(contentsOf: Data(text.utf8))
    }

    /// Where the phase under way stands, rewritten in place on a terminal.
    func progress(_ text: String) {
        guard showsProgress else { return }
        progressShown.withLock { shown in
            ProgressLine.show(text)
            shown = true
        }
    }

    /// Takes the progress line away.
    func clearProgress() {
        progressShown.withLock { shown in
            if shown { ProgressLine.clear() }
            shown = false
        }
    }

    private func write(_ text: String, toStandardOutput: Bool) {
        let text = stamped(text) + "\n"
        if let file {
            try? file.write(contentsOf: Data(text.utf8))
            return
        }
        guard toStandardOutput else { return }
        progressShown.withLock { shown in
            if shown { ProgressLine.clear() }
            shown = false
            try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
        }
    }

    /// With `--timestamps`, each line of `text` begins with the time.
    private func stamped(_ text: String) -> String {
        guard timestamps else { return text }
        let now = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date.now)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { "\(now) \($0)" }
            .joined(separator: "\n")
    }
}

/// The log file could not be opened.
struct RunOutputError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
