import Foundation
import PeerConnectivity
import Testing

/// Services published with avahi-publish (a child process) through the real avahi-daemon, with TXT
/// records no Advertiser would write: the Browser skips or cleans them and keeps reporting good peers.
@Suite("Hostile discovery through avahi-daemon", .avahiTimeLimit, .avahi)
struct HostileDiscoveryTests {
    /// `avahi-publish -s` run by /bin/sh, so that arguments can hold bytes that are not UTF-8 (`printf`).
    private final class Publication {
        let process = Process()

        init(name: String, type: String, txt: [String]) throws {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let quoted = ([name, type, "4999"] + txt).map { "\"\($0)\"" }.joined(separator: " ")
            process.arguments = ["-c", "exec avahi-publish -s \(quoted)"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        deinit {
            // SIGKILL: the child inherits the test process's blocked signals, SIGTERM among them.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    private static func id() -> String { UUID().uuidString.lowercased() }

    @Test("bad TXT records, oversized discoveryInfo and names that are not UTF-8 are skipped; good peers still found")
    func craftedServices() async throws {
        let service = uniqueServiceType("hostile")
        let type = "_\(service)._tcp"
        let filler = (0..<40).map { "k\($0)=" + String(repeating: "x", count: 240) }
        let craftedID = Self.id()
        let publications = try [
            Publication(name: "no-id", type: type, txt: ["pc.name=no id"]),
            Publication(name: "bad-id", type: type, txt: ["pc.id=12345", "pc.name=bad id"]),
            Publication(name: "not-utf8", type: type, txt: ["pc.id=\(Self.id())", "pc.name=$(printf '\\377\\376')"]),
            Publication(
                name: "long-name",
                type: type,
                txt: ["pc.id=\(Self.id())", "pc.name=" + String(repeating: "n", count: 100)]
            ),
            Publication(name: "oversized", type: type, txt: ["pc.id=\(Self.id())", "pc.name=big"] + filler),
            Publication(name: "broken-key", type: type, txt: ["=nokey", "pc.id=\(Self.id())"]),
            // Sanitised, not skipped: a valid peer whose extra pc.* key is dropped.
            Publication(
                name: craftedID,
                type: type,
                txt: ["pc.id=\(craftedID)", "pc.name=crafted", "pc.admin=1", "room=red"]
            ),
        ]
        let good = try PeerID(displayName: "good")
        let advertiser = try Advertiser(peer: good, discoveryInfo: ["k": "v"], serviceType: service)
        try await advertiser.start()
        let browser = try Browser(peer: try PeerID(displayName: "watcher"), serviceType: service)
        try browser.start()
        let events = Locked<[BrowserEvent]>([])
        let collector = Task {
            for try await event in browser.events { events.withLock { $0.append(event) } }
        }
        // Both good peers (seconds on a loaded machine), then 1 s more for anything that should not come.
        let deadline = ContinuousClock.now + waitLimit
        while ContinuousClock.now < deadline, events.value.count < 2 { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .seconds(1))
        let found = events.value.compactMap { event -> (PeerID, [String: String])? in
            if case .found(let peer, let info) = event { return (peer, info) }
            return nil
        }
        #expect(found.count == 2, "found: \(found)")
        #expect(found.contains { $0.0 == good && $0.1 == ["k": "v"] })
        let crafted = found.first { $0.0.id.uuidString.lowercased() == craftedID }
        #expect(crafted?.0.displayName == "crafted")
        #expect(crafted?.1 == ["room": "red"])
        browser.stop()
        collector.cancel()
        await advertiser.stop()
        withExtendedLifetime(publications) {}
    }
}
