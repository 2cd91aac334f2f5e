import Foundation
import PeerConnectivityBench
import Synchronization

/// Where `run` writes for people: standard output (a progress line in place on a terminal), or
/// `--logfile`; nothing but the JSON with `--json`, nothing but paths and errors with `--quiet`.
/// Errors always go to standard error too.
final class RunOutput: Sendable {
    private let json: Bool
    private let quiet: Bool
    private let file: FileHandle?
    private let showsProgress: Bool
    private let progressShown = Mutex(false)

    init(json: Bool, quiet: Bool, logfile: String?) throws {
        self.json = json
        self.quiet = quiet
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
        showsProgress = !json && !quiet && logfile == nil && ProgressLine.isTerminal
    }

    /// A line for people: the run's story (first line, intervals, summary).
    func line(_ text: String) {
        guard !quiet else { return }
        write(text + "\n", toStandardOutput: !json)
    }

    /// A line that even `--quiet` prints ("wrote PATH"); not with `--json`.
    func always(_ text: String) {
        write(text + "\n", toStandardOutput: !json)
    }

    /// An error: on standard error, and in the log file.
    func error(_ text: String, newline: Bool = true) {
        let text = newline ? text + "\n" : text
        clearProgress()
        FileHandle.standardError.write(Data(text.utf8))
        file?.write(Data(text.utf8))
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
        if let file {
            file.write(Data(text.utf8))
            return
        }
        guard toStandardOutput else { return }
        progressShown.withLock { shown in
            if shown { ProgressLine.clear() }
            shown = false
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}

/// The log file could not be opened.
struct RunOutputError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
