import Foundation
import PeerConnectivity
import PeerConnectivityBench
import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

/// Discovery against an mDNS stack we did not write and that is not Avahi: python-zeroconf, in a child process
/// (``ZeroconfPeer``), speaking multicast DNS on the loopback interface with the real avahi-daemon.
@Suite(
    "Interop with python-zeroconf, an independent mDNS stack",
    // Skipped, saying why, where python-zeroconf is not installed; Scripts/setup.sh installs it.
    .enabled("python-zeroconf is not installed: Scripts/setup.sh installs it into .build/interop-venv") {
        await ZeroconfPeer.isAvailable()
    },
    .avahiTimeLimit,
    .avahi
)
struct InteropTests {
    private static func id() -> String { UUID().uuidString.lowercased() }

    @Test("python-zeroconf sees our advertiser, port and TXT keys as documented, and its goodbye")
    func zeroconfSeesAdvertiser() async throws {
        let service = uniqueServiceType("zcsee")
        let type = "_\(service)._tcp"
        let peer = try PeerID(displayName: "visible peer")
        let advertiser = try Advertiser(peer: peer, discoveryInfo: ["room": "blue", "flag": ""], serviceType: service)
        try await advertiser.start()
        let zeroconf = try await ZeroconfPeer()
        zeroconf.browse(type: type)

        let instance = peer.id.uuidString.lowercased()
        #expect(advertiser.serviceName == instance)
        let added = try #require(try await zeroconf.waitFor(["added"], name: instance))
        #expect(added.port == advertiser.port)
        // Read with a splitter of its own, not the library's decoder: what is on the wire, string by string.
        let strings = try #require(added.txtBytes.flatMap(txtStrings), "TXT \(String(describing: added.txt))")
        #expect(
            Set(strings) == [
                "pc.id=\(instance)", "pc.name=visible peer", "pc.v=\(WireProtocol.version)", "room=blue", "flag=",
            ]
        )
        #expect(strings.count == 5, "each key once: \(strings)")

        await advertiser.stop()
        try await eventually(every: .milliseconds(50), timeout: waitLimit) {
            !zeroconf.present.contains(instance)
        }
        try await zeroconf.close()
    }

    @Test("python-zeroconf sees the reflector tool, its port and TXT keys: the protocol's and the host's")
    func zeroconfSeesReflector() async throws {
        let service = uniqueServiceType("zcrefl")
        let type = "_\(service)._tcp"
        let reflector = try DemoProcess(
            [
                "--service", service, "--name", "interop-reflector", "--port", "0", "--raw-echo-port", "0",
                "--udp-ports", "ephemeral", "--encryption", "none",
            ],
            executable: "reflector"
        )
        let ready = try #require(try await reflector.waitForLine(containing: " ready "))
        func value(_ key: String) -> String? {
            ready.split(separator: " ").first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        let zeroconf = try await ZeroconfPeer()
        zeroconf.browse(type: type)

        try await eventually(every: .milliseconds(50), timeout: waitLimit) {
            zeroconf.events.contains { $0.event == "added" }
        }
        let added = try #require(zeroconf.events.first { $0.event == "added" })
        #expect(added.port.map(String.init) == value("port"))
        let strings = try #require(added.txtBytes.flatMap(txtStrings), "TXT \(String(describing: added.txt))")
        let keys = strings.map { String($0.prefix { $0 != "=" }) }
        #expect(keys.count == Set(keys).count, "each key once: \(keys)")
        #expect(
            Set(keys) == Set(HostInfo.current().discoveryInfo.keys).union(["pc.id", "pc.name", "pc.v", "rawEchoPort"])
        )
        #expect(strings.contains("pc.id=\(try #require(added.name))"))
        #expect(strings.contains("pc.name=interop-reflector"))
        #expect(strings.contains("pc.v=\(WireProtocol.version)"))
        #expect(strings.contains("rawEchoPort=\(try #require(value("raw-echo-port")))"))

        reflector.signal(SIGTERM)
        _ = try await reflector.waitForExit(timeout: waitLimit)
        try await zeroconf.close()
    }

    /// A service python-zeroconf publishes with a TXT record no Advertiser writes; `name` is its instance name.
    private struct HostileService {
        var name: String
        var txt: [UInt8]
        var uncheckedName = false
    }

    private static func hostileServices() -> [HostileService] {
        var generator = SplitMix64(seed: 21)
        let garbage = (0..<600).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let filler = (0..<36).map { "k\($0)=" + String(repeating: "x", count: 240) }
        return [
            HostileService(name: "missing-id", txt: txtRecord(["pc.name=no id", "pc.v=2"])),
            HostileService(name: "missing-name", txt: txtRecord(["pc.id=\(id())", "pc.v=2"])),
            HostileService(name: "invalid-id", txt: txtRecord(["pc.id=not-a-uuid", "pc.name=bad id"])),
            HostileService(name: "binary-garbage", txt: garbage),
            // About 9 KiB: over the 8 KiB a browser reads.
            HostileService(name: "oversized", txt: txtRecord(["pc.id=\(id())", "pc.name=big"] + filler)),
            // The first occurrence of a key counts (RFC 6763 §6.4), in any letter case: these name no valid peer.
            HostileService(
                name: "duplicate-keys",
                txt: txtRecord(["pc.id=not-a-uuid", "pc.id=\(id())", "pc.name=dup"])
            ),
            HostileService(name: "duplicate-case", txt: txtRecord(["PC.ID=bad", "pc.id=\(id())", "pc.name=dup"])),
            // 1,200 keys in 7 KiB, and no pc.name.
            HostileService(name: "many-keys", txt: txtRecord((0..<1200).map { "k\($0)" } + ["pc.id=\(id())"])),
            // The first string says 250 bytes; the record ends long before.
            HostileService(name: "truncated", txt: [250] + txtRecord(["pc.id=\(id())", "pc.name=cut"])),
            HostileService(name: "empty-txt", txt: []),
            HostileService(
                name: "odd\u{1}\u{1B}[31m\u{202E} \"x\\y\u{FF}",
                txt: txtRecord(["pc.name=odd"]),
                uncheckedName: true
            ),
        ]
    }

    @Test("hostile TXT records published by python-zeroconf are ignored with a log line; a well-formed one is found")
    func hostileRecordsIgnored() async throws {
        let service = uniqueServiceType("zchost")
        let type = "_\(service)._tcp"
        let logs = LogCapture()
        var configuration = Browser.Configuration()
        configuration.logger = logs.logger(label: "interop.browser")
        let browser = try Browser(
            peer: try PeerID(displayName: "watcher"),
            serviceType: service,
            configuration: configuration
        )
        try browser.start()
        let events = Locked<[BrowserEvent]>([])
        let failure = Locked<String?>(nil)
        let collector = Task {
            do {
                for try await event in browser.events { events.withLock { $0.append(event) } }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }

        let zeroconf = try await ZeroconfPeer()
        let hostile = Self.hostileServices()
        for service in hostile {
            zeroconf.register(
                type: type,
                name: service.name,
                port: 4999,
                txt: service.txt,
                uncheckedName: service.uncheckedName
            )
        }
        // Written as a peer would, with one reserved key the browser drops.
        let good = try PeerID(displayName: "zeroconf peer")
        let goodName = good.id.uuidString.lowercased()
        zeroconf.register(
            type: type,
            name: goodName,
            port: 4998,
            txt: txtRecord(["pc.id=\(goodName)", "pc.name=zeroconf peer", "pc.v=2", "room=green", "pc.extra=1"])
        )
        for service in hostile + [HostileService(name: goodName, txt: [])] {
            let outcome = try await zeroconf.waitFor(["registered", "error"], name: service.name)
            #expect(outcome?.event == "registered", "\(LogSafe.escaped(service.name)): \(String(describing: outcome))")
        }

        try await eventually(timeout: .seconds(60) * slowdown) { browser.foundPeers[good] == ["room": "green"] }
        // Each hostile service leaves a warning that names it: its TXT names no valid peer, or it cannot be
        // resolved (a record avahi-daemon would not take).
        func warned(_ service: HostileService) -> Bool {
            let name = LogSafe.escaped(service.name)
            return logs.records.contains { $0.level == .warning && $0.message.contains(name) }
        }
        try await eventually(timeout: .seconds(60) * slowdown) { hostile.allSatisfy(warned) }
        for service in hostile where !warned(service) {
            Issue.record("no warning for \(LogSafe.escaped(service.name)): \(logs.records.map(\.line))")
        }
        #expect(browser.foundPeers.keys.map(\.id) == [good.id])
        // No terminal escape or bidirectional override from a hostile name reaches the log.
        #expect(!logs.records.contains { $0.line.contains("\u{1B}") || $0.line.contains("\u{202E}") })

        // Still browsing: a peer published after all that is found too.
        let late = try PeerID(displayName: "late")
        let lateName = late.id.uuidString.lowercased()
        zeroconf.register(
            type: type,
            name: lateName,
            port: 4997,
            txt: txtRecord(["pc.id=\(lateName)", "pc.name=late"])
        )
        try await eventually(timeout: .seconds(30) * slowdown) { browser.foundPeers[late] == [:] }
        let found = events.value.compactMap { event -> PeerID? in
            if case .found(let peer, _) = event { return peer }
            return nil
        }
        #expect(Set(found) == [good, late], "found: \(found)")
        #expect(failure.value == nil, "browsing failed")

        browser.stop()
        collector.cancel()
        try await zeroconf.close()
    }

    /// The instance names avahi-browse lists for `type`, from the daemon's cache.
    private static func avahiBrowse(_ type: String) async throws -> Set<String> {
        let outcome = try await ChildProcess.run(
            "/usr/bin/avahi-browse",
            arguments: ["-tp", type],
            timeout: waitLimit
        )
        // "+;lo;IPv4;<instance>;<type>;local" per interface and IP version.
        return Set(
            outcome.output.split(separator: "\n").compactMap { line -> String? in
                let fields = line.split(separator: ";", omittingEmptySubsequences: false)
                return fields.count >= 6 && fields[0] == "+" ? String(fields[3]) : nil
            }
        )
    }

    @Test("avahi-browse, python-zeroconf and our browser agree on the peers present as they come and go")
    func threeViewsAgree() async throws {
        let service = uniqueServiceType("zcagree")
        let type = "_\(service)._tcp"
        let browser = try Browser(peer: try PeerID(displayName: "watcher"), serviceType: service)
        try browser.start()
        let zeroconf = try await ZeroconfPeer()
        zeroconf.browse(type: type)
        var advertisers: [Advertiser] = []
        for index in 0..<3 {
            let advertiser = try Advertiser(
                peer: try PeerID(displayName: "peer \(index)"),
                discoveryInfo: ["index": "\(index)"],
                serviceType: service
            )
            try await advertiser.start()
            advertisers.append(advertiser)
        }

        func views() async throws -> (ours: Set<String>, avahi: Set<String>, zeroconf: Set<String>) {
            let ours = Set(browser.foundPeers.keys.map { $0.id.uuidString.lowercased() })
            return (ours, try await Self.avahiBrowse(type), zeroconf.present)
        }
        func expectAgreement(on expected: Set<String>, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let agreed = try await eventually(
                every: .milliseconds(200),
                timeout: .seconds(45) * slowdown,
                sourceLocation: sourceLocation
            ) {
                let seen = try await views()
                return seen.ours == expected && seen.avahi == expected && seen.zeroconf == expected
            }
            if !agreed {
                Issue.record("expected \(expected.sorted()), seen \(try await views())", sourceLocation: sourceLocation)
            }
        }

        let names = advertisers.map { $0.peer.id.uuidString.lowercased() }
        try await expectAgreement(on: Set(names))
        await advertisers[1].stop()
        try await expectAgreement(on: [names[0], names[2]])

        // A peer published by python-zeroconf comes and goes too.
        let visitor = try PeerID(displayName: "visitor")
        let visitorName = visitor.id.uuidString.lowercased()
        zeroconf.register(
            type: type,
            name: visitorName,
            port: 4996,
            txt: txtRecord(["pc.id=\(visitorName)", "pc.name=visitor"])
        )
        try #require(try await zeroconf.waitFor(["registered", "error"], name: visitorName)?.event == "registered")
        try await expectAgreement(on: [names[0], names[2], visitorName])
        #expect(browser.foundPeers[visitor] == [:])
        zeroconf.unregister(name: visitorName)
        try await expectAgreement(on: [names[0], names[2]])

        browser.stop()
        for advertiser in advertisers { await advertiser.stop() }
        try await zeroconf.close()
    }
}
