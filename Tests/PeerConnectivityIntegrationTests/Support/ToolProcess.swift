import Foundation
import Testing

/// One of this package's tools (`reflector`, `test-runner`) run as a child process. Its standard
/// output and error go to files, which the test reads whenever it looks: no pipes, no reader threads.
final class ToolProcess: Sendable {
    private let process: Process
    let outputFile: URL
    let errorFile: URL

    /// The folder `swift build` put the executables in: beside the test bundle, or `BENCH_BIN_DIR`.
    static var binDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["BENCH_BIN_DIR"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// Starts `tool` with `arguments`; with `openFileLimit`, under that limit on open descriptors (soft
    /// and hard, so that the tool cannot raise it).
    init(_ tool: String, _ arguments: [String], openFileLimit: Int? = nil, environment: [String: String] = [:]) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        outputFile = folder.appendingPathComponent("stdout")
        errorFile = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process = Process()
        let executable = Self.binDirectory.appendingPathComponent(tool)
        if let openFileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(["AVAHI_COMPAT_NOWARN": "1"]) { $1 }
            .merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
    }

    /// Kills the tool if it still runs: a test keeps its ToolProcess for as long as the tool must run (a
    /// reflector bound to `_` is gone at once).
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Its process id.
    var pid: Int32 { process.processIdentifier }

    /// What it has written to standard output so far.
    var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }
    /// What it has written to standard error so far.
    var errors: String { (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "" }

    /// The first output line containing `text`, waiting up to `timeout`; records an issue when none comes.
    ///
    /// The default is long: a tool starting while the machine is busy (the suite in parallel on two CPUs, other
    /// builds beside it) was seen to print its ready line after 10 s.
    func line(
        containing text: String,
        timeout: Duration = .seconds(30) * slowdown,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        // Looks once more after the deadline: a wait starved of the CPU (the suite in parallel on a loaded machine)
        // woke only after it, with the line long written.
        while true {
            if let line = output.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            guard clock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no line with \"\(text)\" in \(timeout): \(output) \(errors)", sourceLocation: sourceLocation)
        return nil
    }

    /// How long a test waits for a tool to exit: seconds alone, but a tool starting while the machine is busy (the
    /// suite in parallel on two CPUs, builds beside it) was seen to take 10 s before its first line. The wait ends
    /// when the tool exits: only a test that fails waits for all of it.
    static let exitWait: Duration = .seconds(120) * slowdown

    /// Its exit status, waiting up to `timeout`; nil while it still runs.
    func exitStatus(within timeout: Duration = exitWait) async throws -> Int32? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while process.isRunning, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// How it ended, for a failure's message: "running", "exit N" or "signal N".
    var ending: String {
        guard !process.isRunning else { return "running" }
        let how = process.terminationReason == .uncaughtSignal ? "signal" : "exit"
        return "\(how) \(process.terminationStatus)"
    }

    /// Sends it a signal.
    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// The number after `key=` in an output line, e.g. the port in "ready ... port=4242".
    static func value(_ key: String, in line: String) -> Int? {
        line.split(separator: " ").first { $0.hasPrefix("\(key)=") }.flatMap { Int($0.dropFirst(key.count + 1)) }
    }
}

/// A DNS-SD service type no other test uses (at most 15 characters).
func uniqueService(_ prefix: String) -> String {
    String("\(prefix)-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))".prefix(15))
}
