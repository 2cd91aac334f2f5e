import Foundation
import PeerConnectivity
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

/// Advertiser and Browser through the real avahi-daemon.
@Suite("Discovery", .avahiTimeLimit)
struct DiscoveryTests {
    @Test(
        "service types and discoveryInfo follow MPC's rules",
        arguments: [
            ("chat", true), ("a", true), ("p2p-bench", true), ("a1-b2-c3", true), ("abcdefghijklmno", true),
            ("", false), ("abcdefghijklmnop", false), ("Chat", false), ("123", false), ("-chat", false),
            ("chat-", false), ("ch--at", false), ("ch_at", false), ("chät", false),
        ]
    )
    func serviceTypes(type: String, valid: Bool) throws {
        let peer = try PeerID(displayName: "rules")
        if valid {
            _ = try Advertiser(peer: peer, serviceType: type)
            _ = try Browser(peer: peer, serviceType: type)
        } else {
            #expect(throws: DiscoveryError.invalidServiceType("")) { try Advertiser(peer: peer, serviceType: type) }
            #expect(throws: DiscoveryError.invalidServiceType("")) { try Browser(peer: peer, serviceType: type) }
        }
    }

    @Test("discoveryInfo: keys with '=', reserved keys and entries over 255 bytes are refused")
    func discoveryInfoRules() throws {
        let peer = try PeerID(displayName: "rules")
        let refused: [[String: String]] = [
            ["a=b": "c"], ["": "x"], ["pc.id": "x"], ["k": String(repeating: "v", count: 254)],
            ["clé": "x"], ["Room": "a", "room": "b"], ["PC.ID": "x"],
        ]
        for info in refused {
            #expect(throws: DiscoveryError.invalidDiscoveryInfo("")) {
                try Advertiser(peer: peer, discoveryInfo: info, serviceType: "chat")
            }
        }
        _ = try Advertiser(peer: peer, discoveryInfo: ["k": String(repeating: "v", count: 253)], serviceType: "chat")
    }

    @Test("avahi-browse, a DNS-SD client we did not write, sees the advertiser with its TXT record", .avahi)
    func avahiBrowseSeesAdvertiser() async throws {
        let service = uniqueServiceType("avb")
        let peer = try PeerID(displayName: "visible peer")
        let advertiser = try Advertiser(peer: peer, discoveryInfo: ["room": "blue"], serviceType: service)
        try await advertiser.start()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/avahi-browse")
        process.arguments = ["-rtp", "_\(service)._tcp"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = await onOwnThread {
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return output
        }
        let resolved = output.split(separator: "\n").filter { $0.hasPrefix("=") }
        let line = try #require(
            resolved.first { $0.contains(peer.id.uuidString.lowercased()) },
            "avahi-browse printed: \(output)"
        )
        #expect(line.contains("\"pc.name=visible peer\""))
        #expect(line.contains("\"pc.id=\(peer.id.uuidString.lowercased())\""))
        #expect(line.contains("\"pc.v=\(WireProtocol.version)\""))
        #expect(line.contains("\"room=blue\""))
        #expect(line.contains(";\(advertiser.port!);"))
        await advertiser.stop()
    }

    @Test("the browser reports each peer once, never itself, and reports it lost when it stops", .avahi)
    func foundOnceNeverSelf() async throws {
        let service = uniqueServiceType("once")
        let me = try PeerID(displayName: "self")
        let other = try PeerID(displayName: "other")
        let mine = try Advertiser(peer: me, serviceType: service)
        let theirs = try Advertiser(peer: other, discoveryInfo: ["k": "v"], serviceType: service)
        try await mine.start()
        try await theirs.start()
        let browser = try Browser(peer: me, serviceType: service)
        try browser.start()
        let events = Locked<[BrowserEvent]>([])
        let collector = Task {
            for try await event in browser.events { events.withLock { $0.append(event) } }
        }
        // The other is found (it can take seconds on a loaded machine); in 1.5 s more nothing else comes: not
        // itself, not the other twice.
        try await eventually { !events.value.isEmpty }
        try await Task.sleep(for: .seconds(1.5))
        #expect(events.value == [.found(other, discoveryInfo: ["k": "v"])])
        await theirs.stop()
        let deadline = ContinuousClock.now + waitLimit
        while ContinuousClock.now < deadline, events.value.count < 2 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(events.value == [.found(other, discoveryInfo: ["k": "v"]), .lost(other)])
        browser.stop()
        _ = await collector.result
        await mine.stop()
    }

    @Test("a stopped advertiser ends its invitations and cannot be restarted")
    func stopIsFinal() async throws {
        var configuration = Advertiser.Configuration.default
        configuration.publishesService = false
        let advertiser = try Advertiser(
            peer: try PeerID(displayName: "once"),
            serviceType: "chat",
            configuration: configuration
        )
        try await advertiser.start()
        await advertiser.stop()
        var iterator = advertiser.invitations.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        await #expect(throws: DiscoveryError.notRestartable) { try await advertiser.start() }
    }
}
