import Foundation
import Synchronization
import Testing

/// A child process of one of the package's executables (`peer-demo` unless told otherwise) whose output
/// lines a test can wait for, and whose standard input it can write to.
final class DemoProcess: Sendable {
    private let process: Process
    private let input = Pipe()
    private let lines = Locked<[String]>([])
    private let errorText = Locked("")

    /// Where `swift build` put the package's executables: beside the test bundle.
    static var binDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["PEER_DEMO_BIN_DIR"] {
            return URL(fileURLWithPath: path)
        }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.pathComponents.count > 1 {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("peer-demo").path) {
                return url
            }
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// Starts `executable`, one of the package's executables, with `arguments`.
    convenience init(
        _ arguments: [String],
        executable: String = "peer-demo",
        environment extra: [String: String] = [:]
    ) throws {
        try self.init(
            arguments,
            executableURL: Self.binDirectory.appendingPathComponent(executable),
            environment: extra
        )
    }

    /// Starts the program at `executableURL` with `arguments`.
    init(_ arguments: [String], executableURL: URL, environment extra: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = executableURL
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["AVAHI_COMPAT_NOWARN"] = "1"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        self.process = process
        // Blocking read loops on their own threads, not `readabilityHandler`: its libdispatch read sources,
        // torn down while others are set up, can crash the process on Linux (swift-corelibs-libdispatch#949).
        let lines = self.lines
        let errorText = self.errorText
        Self.readLines(from: out.fileHandleForReading) { chunk in
            lines.withLock { $0 += chunk }
        }
        Self.readAll(from: err.fileHandleForReading) { text in
            errorText.withLock { $0 += text }
        }
        try process.run()
    }

    /// Reads `handle` until EOF on a new thread, handing each complete line to `deliver`.
    private static func readLines(from handle: FileHandle, deliver: @escaping @Sendable ([String]) -> Void) {
        let thread = Thread {
            var pending = ""
            while let data = readSome(handle) {
                pending += String(decoding: data, as: UTF8.self)
                var parts = pending.components(separatedBy: "\n")
                pending = parts.removeLast()
                if !parts.isEmpty { deliver(parts) }
            }
        }
        thread.start()
    }

    /// Reads `handle` until EOF on a new thread, handing each chunk of text to `deliver`.
    private static func readAll(from handle: FileHandle, deliver: @escaping @Sendable (String) -> Void) {
        let thread = Thread {
            while let data = readSome(handle) {
                deliver(String(decoding: data, as: UTF8.self))
            }
        }
        thread.start()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
    }

    /// Writes `line` and a newline to the process's standard input.
    func type(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Closes the process's standard input: it reads the end of its input.
    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    var pid: Int32 { process.processIdentifier }
    var output: [String] { lines.withLock { $0 } }
    var standardError: String { errorText.withLock { $0 } }

    /// Waits for an output line containing `text`; fails the test and returns nil after `timeout`.
    @discardableResult
    func waitForLine(
        containing text: String,
        timeout: Duration = waitLimit,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        // Looks once more after the deadline: a wait starved of the CPU may wake only after it.
        while true {
            if let line = output.first(where: { $0.contains(text) }) { return line }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record(
            "no line containing \"\(text)\" within \(timeout); output: \(output), stderr: \(standardError)",
            sourceLocation: sourceLocation
        )
        return nil
    }

    /// How many output lines contain `text`.
    func count(_ text: String) -> Int {
        output.filter { $0.contains(text) }.count
    }

    /// Waits for the process to exit, at most `timeout`; returns its status, or nil if it is still running.
    func waitForExit(timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }
}

/// A service type no other test uses: 15 characters at most.
func uniqueServiceType(_ prefix: String) -> String {
    let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    return String("\(prefix)-\(suffix)".prefix(15))
}

/// What one `read(2)` returns (as soon as anything is there, unlike `FileHandle.read(upToCount:)`,
/// which waits for the whole count); nil at EOF or on error.
private func readSome(_ handle: FileHandle) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress!, $0.count) }
        if count > 0 { return Array(buffer[0..<count]) }
        if count < 0 && errno == EINTR { continue }
        return nil
    }
}
