import BenchSupport
import Foundation
import PeerConnectivity

/// The `reflector` built beside this tool, started on 127.0.0.1 without DNS-SD, for sessions to churn
/// against; its output goes to a temporary file.
struct ReflectorChild {
    let process: Process
    let port: Int
    private let log: URL

    init(encryption: EncryptionPreference) throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("reflector")
        log = FileManager.default.temporaryDirectory.appendingPathComponent("churn-reflector-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process = Process()
        process.executableURL = binary
        process.arguments = [
            "--no-dnssd", "--bind", "127.0.0.1", "--port", "0", "--no-raw-echo", "--encryption", encryption.description,
            "--name", "churn-reflector", "--invitation-rate", "100000", "--idle-timeout", "0",
        ]
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = process.standardOutput
        try process.run()
        var found: Int?
        for _ in 0..<200 where found == nil {
            Thread.sleep(forTimeInterval: 0.05)
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            found = output.split(separator: " ").first { $0.hasPrefix("port=") }.flatMap { Int($0.dropFirst(5)) }
        }
        guard let found else {
            process.terminate()
            throw BenchError("the reflector at \(binary.path) did not start")
        }
        port = found
    }

    /// The reflector's memory and CPU now.
    func sample() throws -> ProcessSample {
        guard let sample = ProcessSample.of(pid: process.processIdentifier) else {
            throw BenchError("the reflector exited")
        }
        return sample
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: log)
    }
}
