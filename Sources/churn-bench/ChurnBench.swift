import ArgumentParser
import BenchSupport
import Foundation
import PeerConnectivity

/// Sessions that come and go against a reflector in a process of its own, and how much of each the
/// reflector keeps: its resident memory after a warm-up and after the measured sessions.
@main
struct ChurnBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "churn-bench",
        abstract: "KiB a reflector keeps per ended session: its RSS over many short sessions, plain and encrypted."
    )

    @Option(help: "Sessions before the first sample (allocator and caches settle).")
    var warmup = 100

    @Option(help: "Measured sessions after it.")
    var sessions = 1_000

    @Option(help: "The reflector's and the sessions' encryption; both by default (plain, then required).")
    var encryption: [EncryptionPreference] = []

    @Option(help: "Where to write the JSON result (default: results/churn-bench-<UTC date>.json).")
    var output: String?

    func validate() throws {
        guard (0...100_000).contains(warmup) else { throw ValidationError("--warmup must be 0...100000") }
        guard (10...1_000_000).contains(sessions) else { throw ValidationError("--sessions must be 10...1000000") }
    }

    func run() async throws {
        var runs: [ChurnBenchResult.Run] = []
        for preference in encryption.isEmpty ? [.none, .required] : encryption {
            let reflector = try ReflectorChild(encryption: preference)
            defer { reflector.stop() }
            try await SessionChurn.run(host: "127.0.0.1", port: reflector.port, count: warmup, encryption: preference)
            try await Task.sleep(for: .seconds(1))
            let before = try reflector.sample()
            let started = ContinuousClock.now
            try await SessionChurn.run(host: "127.0.0.1", port: reflector.port, count: sessions, encryption: preference)
            let elapsed = started.duration(to: .now)
            try await Task.sleep(for: .seconds(1))
            let after = try reflector.sample()
            let run = ChurnBenchResult.Run(
                encryption: preference.description,
                warmupSessions: warmup,
                sessions: sessions,
                seconds: elapsed.seconds,
                residentBytesAfterWarmup: before.residentBytes,
                residentBytesAfter: after.residentBytes,
                reflectorCPUSeconds: after.cpuSeconds - before.cpuSeconds
            )
            print(
                "\(preference): \(sessions) sessions in \(String(format: "%.1f", run.seconds)) s; reflector RSS "
                    + "\(before.residentBytes >> 10) -> \(after.residentBytes >> 10) KiB: "
                    + "\(String(format: "%.2f", run.kibibytesPerSession)) KiB per session"
            )
            runs.append(run)
        }
        let path = try ResultFile.write(
            ChurnBenchResult(date: Date(), host: HostInfo.current(), runs: runs),
            tool: "churn-bench",
            date: Date(),
            output: output
        )
        print("wrote \(path)")
    }
}
