import Foundation
import Synchronization

/// Runs a command with a time limit and collects its standard output and error.
enum ChildProcess {
    /// How a command ended.
    struct Outcome {
        /// The exit status, or the signal number if the command was killed.
        var status: Int32
        /// Standard output and standard error together.
        var output: String
    }

    /// Runs `executable` and waits for it, killing it after `timeout`.
    static func run(
        _ executable: String,
        arguments: [String],
        environment: [String: String]? = nil,
        timeout: Duration
    ) async throws -> Outcome {
        let outputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("pc-child-\(UInt64.random(in: 0...UInt64.max)).out")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = environment
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        let exited = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let hasExited = Atomic<Bool>(false)
        process.terminationHandler = { _ in
            hasExited.store(true, ordering: .releasing)
            exited.withLock { $0.take() }?.resume()
        }
        try process.run()
        let killer = Task {
            try await Task.sleep(for: timeout)
            process.terminate()
        }
        await withCheckedContinuation { continuation in
            exited.withLock { $0 = continuation }
            if hasExited.load(ordering: .acquiring) {
                exited.withLock { $0.take() }?.resume()
            }
        }
        killer.cancel()
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return Outcome(status: process.terminationStatus, output: text)
    }
}
