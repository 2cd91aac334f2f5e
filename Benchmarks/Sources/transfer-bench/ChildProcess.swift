import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// This executable started again as `transfer-bench serve`: the receiving peer, in a process of its own.
final class ChildProcess: Sendable {
    private let process: Process
    private let input: Pipe

    /// The port the child listens on.
    let port: Int

    var pid: Int32 { process.processIdentifier }

    /// Starts the child and waits for its `ready port=N` line; its later output and its errors pass through.
    ///
    /// - Parameter arguments: the arguments after the executable's path.
    /// - Throws: when it cannot be started or ends without saying it is ready.
    init(arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        self.process = process
        self.input = input
        let handle = output.fileHandleForReading
        let port = await withCheckedContinuation { continuation in
            Self.readLines(from: handle) { continuation.resume(returning: $0) }
        }
        guard let port else {
            process.waitUntilExit()
            throw TransferBenchError(
                "transfer-bench serve exited (\(process.terminationStatus)) without saying it was ready"
            )
        }
        self.port = port
    }

    /// Reads the child's output on a thread of its own: calls `ready` once, with the port of the
    /// `ready port=N` line or nil at EOF, and prints every other line.
    private static func readLines(from handle: FileHandle, ready: @escaping @Sendable (Int?) -> Void) {
        let thread = Thread {
            var announced = false
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    if !announced, line.hasPrefix("ready port="), let port = Int(line.dropFirst("ready port=".count)) {
                        announced = true
                        ready(port)
                    } else {
                        print("serve: \(line)")
                    }
                }
            }
            if !announced { ready(nil) }
        }
        thread.start()
    }

    /// Closes the child's standard input, which ends it; kills it if it is still there after `timeout`.
    ///
    /// - Returns: its exit status, or nil if it had to be killed.
    @discardableResult
    func stop(timeout: Duration = .seconds(5)) async -> Int32? {
        try? input.fileHandleForWriting.close()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationStatus
    }
}
