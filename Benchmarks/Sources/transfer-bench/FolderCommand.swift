import ArgumentParser
import Foundation
import PeerConnectivity
import PeerConnectivityBench

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends one folder to a `serve` child process that keeps what it receives, and measures files and
/// bytes a second (Scripts/bench-folders.sh runs it beside an rsync daemon).
struct FolderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folder",
        abstract: "Send a folder (sendResource of a directory) to a child peer on loopback; files and bytes a second.",
        discussion: """
            The child receives into --receive-directory and keeps the files, so that the tree can be \
            compared with the source afterwards. The time runs from sendResource to the end of wait(): \
            the folder listed, every file received, checked and placed by the peer.
            """
    )

    @Option(help: "The folder to send.")
    var source: String

    @Option(help: "The name it is sent with: the child puts it at <receive-directory>/<name>.")
    var name = "tree"

    @Option(help: "Where the child receives (made if missing).")
    var receiveDirectory: String

    @Option(
        name: .customLong("encryption"),
        help: "Encryption of both sessions: none (the default here, as rsync:// is plain), optional or required."
    )
    var encryptionOption: EncryptionPreference?
    /// The preference in force: none unless asked.
    var encryption: EncryptionPreference { encryptionOption ?? .none }

    @Option(help: "Seconds after which the run stops, whatever it is doing.")
    var timeLimit = 600

    @Option(help: "Where to write the JSON result (default: results/runs/transfer-bench-folder-<UTC date>.json).")
    var output: String?

    func validate() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("--source must be an existing folder")
        }
        guard !name.isEmpty, !name.contains("/") else { throw ValidationError("--name must be one non-empty name") }
        guard !receiveDirectory.isEmpty else { throw ValidationError("--receive-directory must not be empty") }
        guard (10...3600).contains(timeLimit) else { throw ValidationError("--time-limit must be 10...3600 seconds") }
    }

    func run() async throws {
        let (files, bytes) = try Self.count(source)
        let child = try await ChildProcess(arguments: [
            "serve", "--resource-directory", receiveDirectory, "--time-limit", "\(timeLimit)",
            "--encryption", encryption.description, "--keep-resources",
        ])
        let limit = timeLimit
        let watchdog = Task {
            try await Task.sleep(for: .seconds(limit))
            print("time limit of \(limit) s reached")
            kill(child.pid, SIGKILL)
            Foundation.exit(3)
        }
        defer { watchdog.cancel() }
        let session = Session(peer: try PeerID(displayName: "transfer-bench-sender"), encryptionPreference: encryption)
        let peer = try await session.connectPeer(host: "127.0.0.1", port: child.port, timeout: .seconds(10))
        print("sending \(files) files, \(bytes) bytes ...")
        let before = ProcessSample.current()
        let start = ContinuousClock.now
        var failure: String?
        do {
            let transfer = try session.sendResource(
                at: URL(fileURLWithPath: source, isDirectory: true),
                withName: name,
                toPeer: peer
            )
            try await transfer.wait()
        } catch {
            failure = "\(error)"
        }
        let elapsed = ContinuousClock.now - start
        let after = ProcessSample.current()
        await session.disconnect()
        await child.stop()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let result = FolderBenchResult(
            date: Date(),
            host: HostInfo.current(),
            encryption: encryption.description,
            files: files,
            bytes: bytes,
            seconds: seconds,
            filesPerSecond: Double(files) / seconds,
            bytesPerSecond: Double(bytes) / seconds,
            sender: PhaseUsage(from: before, to: after),
            error: failure
        )
        print(
            String(
                format: "%d files, %.1f MB in %.3f s: %.0f files/s, %.0f MB/s",
                files,
                Double(bytes) / 1e6,
                seconds,
                result.filesPerSecond,
                result.bytesPerSecond / 1e6
            )
        )
        let path = try ResultFile.write(result, tool: "transfer-bench-folder", date: result.date, output: output)
        print("wrote \(path)")
        if let failure { throw TransferBenchError("the folder did not cross: \(failure)") }
    }

    /// The regular files below `folder` (links not followed) and their bytes, by `readdir` and `lstat`:
    /// this process's CPU time is reported with the transfer's, and Foundation's file attributes cost a
    /// quarter of it for 10,000 files.
    private static func count(_ folder: String) throws -> (files: Int, bytes: Int) {
        guard let directory = opendir(folder) else { throw TransferBenchError("cannot list \(folder)") }
        defer { closedir(directory) }
        var files = 0
        var bytes = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let path = folder + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0 else { throw TransferBenchError("cannot read \(path)") }
            switch status.st_mode & S_IFMT {
            case S_IFREG:
                files += 1
                bytes += Int(status.st_size)
            case S_IFDIR:
                let inner = try count(path)
                files += inner.files
                bytes += inner.bytes
            default:
                continue
            }
        }
        return (files, bytes)
    }
}
