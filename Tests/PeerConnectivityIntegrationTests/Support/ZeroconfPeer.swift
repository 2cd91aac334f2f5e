import Foundation
import PeerConnectivityTesting
import Testing

/// An mDNS peer of another stack than Avahi: python-zeroconf, driven through `Tests/Interop/zeroconf-peer.py` in a
/// child process. It publishes services with whatever TXT bytes a test gives it and browses for services, on the
/// loopback interface only.
///
/// Tests that use it are enabled by ``isAvailable()``: `Scripts/setup.sh` installs python-zeroconf (PyPI package
/// `zeroconf`) into `.build/interop-venv`; a `python3` on the `PATH` that imports `zeroconf` does too.
final class ZeroconfPeer: Sendable {
    /// One line the helper wrote.
    struct Event: Decodable, Sendable {
        /// "ready", "registered", "unregistered", "added", "removed" or "error".
        var event: String
        /// The service instance name the event is about.
        var name: String?
        /// An added service's port, when it was resolved.
        var port: Int?
        /// An added service's TXT record, hex, when it was resolved.
        var txt: String?
        /// What failed, for "error".
        var message: String?

        /// The TXT record's bytes.
        var txtBytes: [UInt8]? {
            guard let txt else { return nil }
            var bytes: [UInt8] = []
            var index = txt.startIndex
            while index < txt.endIndex {
                let next = txt.index(index, offsetBy: 2)
                guard let byte = UInt8(txt[index..<next], radix: 16) else { return nil }
                bytes.append(byte)
                index = next
            }
            return bytes
        }
    }

    private let process: DemoProcess

    /// The package's root folder, where `.build` and `Tests/Interop` are.
    private static let packageRoot = repositoryRoot()

    /// The helper script.
    private static let script = packageRoot.appendingPathComponent("Tests/Interop/zeroconf-peer.py")

    /// The Python interpreter that imports `zeroconf`, once looked for: `nil` inside when there is none.
    private static let interpreterFound = Locked<URL??>(nil)

    /// Whether python-zeroconf can be run here.
    static func isAvailable() async -> Bool {
        await interpreter() != nil
    }

    /// The Python interpreter that imports `zeroconf`: the one `Scripts/setup.sh` installs it for, else the first
    /// `python3` on the `PATH`.
    static func interpreter() async -> URL? {
        if let found = interpreterFound.value { return found }
        let found = await onOwnThread { () -> URL? in
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            let candidates =
                [packageRoot.appendingPathComponent(".build/interop-venv/bin/python3")]
                + path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("python3") }
            return candidates.first { candidate in
                guard FileManager.default.isExecutableFile(atPath: candidate.path) else { return false }
                let check = Process()
                check.executableURL = candidate
                check.arguments = ["-c", "import zeroconf"]
                check.standardInput = FileHandle.nullDevice
                check.standardOutput = FileHandle.nullDevice
                check.standardError = FileHandle.nullDevice
                guard (try? check.run()) != nil else { return false }
                check.waitUntilExit()
                return check.terminationStatus == 0
            }
        }
        interpreterFound.withLock { $0 = found }
        return found
    }

    /// Starts the helper and waits until it is ready.
    init(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let python = try #require(await Self.interpreter(), "python-zeroconf is not installed")
        process = try DemoProcess(["-u", Self.script.path], executableURL: python)
        try #require(
            try await process.waitForLine(containing: "\"ready\"", timeout: waitLimit) != nil,
            sourceLocation: sourceLocation
        )
    }

    /// Everything the helper has reported so far, in order.
    var events: [Event] {
        process.output.compactMap { try? JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
    }

    /// What the helper wrote on standard error (Python's tracebacks).
    var standardError: String { process.standardError }

    /// Publishes a service of `type` ("_name._tcp") whose TXT record is exactly `txt`.
    ///
    /// - Parameter uncheckedName: publish `name` even though python-zeroconf would refuse it (control characters).
    func register(type: String, name: String, port: Int, txt: [UInt8], uncheckedName: Bool = false) {
        send([
            "op": "register", "type": type, "name": name, "port": port,
            "txt": txt.map { String(format: "%02x", $0) }.joined(), "unchecked_name": uncheckedName,
        ])
    }

    /// Withdraws a service it published.
    func unregister(name: String) {
        send(["op": "unregister", "name": name])
    }

    /// Starts browsing for services of `type`: they are reported as "added" (resolved) and "removed" events.
    func browse(type: String) {
        send(["op": "browse", "type": type])
    }

    /// The instance names browsing has seen added and not removed since.
    var present: Set<String> {
        var names = Set<String>()
        for event in events {
            guard let name = event.name else { continue }
            if event.event == "added" { names.insert(name) }
            if event.event == "removed" { names.remove(name) }
        }
        return names
    }

    /// The last event of kind `kind` about `name`.
    func last(_ kind: String, name: String) -> Event? {
        events.last { $0.event == kind && $0.name == name }
    }

    /// Waits for an event of kind `kind` about `name`: "registered" or "error" after ``register(type:name:port:txt:uncheckedName:)``,
    /// "added" when browsing found it.
    func waitFor(
        _ kinds: Set<String>,
        name: String,
        timeout: Duration = waitLimit,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Event? {
        let deadline = ContinuousClock.now + timeout
        // Looks once more after the deadline: a wait starved of the CPU may wake only after it.
        while true {
            if let event = events.last(where: { kinds.contains($0.event) && $0.name == name }) { return event }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record(
            "python-zeroconf reported none of \(kinds.sorted()) for \(name) within \(timeout): \(process.output), stderr: \(standardError)",
            sourceLocation: sourceLocation
        )
        return nil
    }

    /// Ends the helper: its services are withdrawn (goodbye packets) before it exits.
    func close() async throws {
        process.closeInput()
        if try await process.waitForExit(timeout: waitLimit) == nil {
            process.signal(SIGKILL)
        }
    }

    private func send(_ command: [String: Any]) {
        // Sorted keys, one line: the helper reads one JSON object per line.
        let data = try! JSONSerialization.data(withJSONObject: command, options: [.sortedKeys])
        process.type(String(decoding: data, as: UTF8.self))
    }
}

/// A TXT record of the given strings, each after its length byte: what a stack would send, well-formed or not.
func txtRecord(_ strings: [String]) -> [UInt8] {
    strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
}

/// The strings of a TXT record (each after its length byte), read without the library's decoder; `nil` when a
/// length runs past the end.
func txtStrings(_ record: [UInt8]) -> [String]? {
    var strings: [String] = []
    var index = 0
    while index < record.count {
        let end = index + 1 + Int(record[index])
        guard end <= record.count else { return nil }
        strings.append(String(decoding: record[(index + 1)..<end], as: UTF8.self))
        index = end
    }
    return strings
}
