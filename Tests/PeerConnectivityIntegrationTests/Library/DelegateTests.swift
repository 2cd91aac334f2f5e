import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// Records what a session reports through the MPC-style delegate, and on which thread.
@MainActor
final class RecordingSessionDelegate: SessionDelegate {
    var calls: [String] = []
    var streams: [IncomingStream] = []
    var files: [URL] = []

    private func record(_ call: String) {
        // Called on the main actor's executor (on Linux, once the main queue is drained by dispatchMain,
        // that is not always the process's first thread): checked at run time too.
        MainActor.preconditionIsolated()
        calls.append(call)
    }

    func session(_ session: Session, peer peerID: PeerID, didChange state: PeerState) {
        record("state \(peerID.displayName) \(state)")
    }

    func session(_ session: Session, didReceive data: Data, fromPeer peerID: PeerID) {
        record("data \(String(decoding: data, as: UTF8.self)) from \(peerID.displayName)")
    }

    func session(
        _ session: Session,
        didReceive stream: IncomingStream,
        withName streamName: String,
        fromPeer peerID: PeerID
    ) {
        streams.append(stream)
        record("stream \(streamName) from \(peerID.displayName)")
    }

    func session(
        _ session: Session,
        didStartReceivingResourceWithName resourceName: String,
        fromPeer peerID: PeerID,
        with progress: Progress
    ) {
        record("started \(resourceName) from \(peerID.displayName)")
    }

    func session(
        _ session: Session,
        didFinishReceivingResourceWithName resourceName: String,
        fromPeer peerID: PeerID,
        at localURL: URL?,
        withError error: TransferError?
    ) {
        if let localURL { files.append(localURL) }
        record("finished \(resourceName) from \(peerID.displayName) \(error == nil ? "ok" : "failed")")
    }
}

/// Records reasons too, by implementing the variant with the reason.
@MainActor
final class ReasonRecordingDelegate: SessionDelegate {
    var reasons: [DisconnectReason?] = []

    func session(_ session: Session, peer peerID: PeerID, didChange state: PeerState) {}
    func session(_ session: Session, peer peerID: PeerID, didChange state: PeerState, reason: DisconnectReason?) {
        reasons.append(reason)
    }
    func session(_ session: Session, didReceive data: Data, fromPeer peerID: PeerID) {}
    func session(
        _ session: Session,
        didReceive stream: IncomingStream,
        withName streamName: String,
        fromPeer peerID: PeerID
    ) {}
    func session(
        _ session: Session,
        didStartReceivingResourceWithName resourceName: String,
        fromPeer peerID: PeerID,
        with progress: Progress
    ) {}
    func session(
        _ session: Session,
        didFinishReceivingResourceWithName resourceName: String,
        fromPeer peerID: PeerID,
        at localURL: URL?,
        withError error: TransferError?
    ) {}
}

/// Answers invitations by their context: "yes" accepts into `session`, anything else declines.
@MainActor
final class RecordingAdvertiserDelegate: AdvertiserDelegate {
    let session: Session
    var invitations: [String] = []
    var notStarted: [any Error] = []
    var notAccepted: [PeerID] = []

    init(session: Session) {
        self.session = session
    }

    func advertiser(
        _ advertiser: Advertiser,
        didReceiveInvitationFromPeer peerID: PeerID,
        withContext context: Data?,
        invitationHandler: @escaping @Sendable (Bool, Session?) -> Void
    ) {
        let text = context.map { String(decoding: $0, as: UTF8.self) }
        invitations.append("\(peerID.displayName) \(text ?? "nil")")
        invitationHandler(text == "yes", text == "yes" ? session : nil)
        invitationHandler(true, session)  // a second answer is ignored
    }

    func advertiser(_ advertiser: Advertiser, didNotStartAdvertisingPeer error: any Error) {
        notStarted.append(error)
    }

    func advertiser(_ advertiser: Advertiser, didNotAcceptInvitationFromPeer peerID: PeerID, error: any Error) {
        notAccepted.append(peerID)
    }
}

@MainActor
final class RecordingBrowserDelegate: BrowserDelegate {
    var calls: [String] = []
    var notStarted: [any Error] = []

    func browser(_ browser: Browser, foundPeer peerID: PeerID, withDiscoveryInfo info: [String: String]?) {
        calls.append("found \(peerID.displayName) \(info ?? [:])")
    }

    func browser(_ browser: Browser, lostPeer peerID: PeerID) {
        calls.append("lost \(peerID.displayName)")
    }

    func browser(_ browser: Browser, didNotStartBrowsingForPeers error: any Error) {
        notStarted.append(error)
    }
}

/// The MPC-style delegate layer, over real sessions on loopback and the real avahi-daemon.
@Suite("Delegates", .avahiTimeLimit)
@MainActor
struct DelegateTests {
    @Test("SessionDelegate: states, data, a stream and a resource, in order, on the main actor")
    func sessionDelegate() async throws {
        let scratch = try ScratchDirectory("delegate")
        defer { scratch.remove() }
        let advertiser = try await loopbackAdvertiser("delegate-host")
        var configuration = Session.Configuration.patient
        configuration.resourceDirectory = scratch.url.appendingPathComponent("in")
        let host = Session(peer: advertiser.peer, configuration: configuration)
        let recorder = RecordingSessionDelegate()
        host.delegate = recorder
        #expect(host.delegate === recorder)
        let acceptor = acceptAll(advertiser, into: host)
        defer { acceptor.cancel() }

        let client = Session(peer: try PeerID(displayName: "porter"))
        let peer = try await client.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        try await client.send(Data("hi".utf8), toPeers: [peer])
        let stream = try client.startStream(withName: "log", toPeer: peer)
        try await stream.write(Data("line".utf8))
        try stream.finish()
        let file = scratch.url.appendingPathComponent("note.txt")
        try Data("note".utf8).write(to: file)
        try await client.sendResource(at: file, withName: "note.txt", toPeer: peer).wait()

        try await eventually { recorder.calls.count == 6 }
        #expect(
            recorder.calls == [
                "state porter connecting", "state porter connected", "data hi from porter", "stream log from porter",
                "started note.txt from porter", "finished note.txt from porter ok",
            ]
        )
        #expect(try recorder.files.map { try Data(contentsOf: $0) } == [Data("note".utf8)])
        var chunks = Data()
        for try await chunk in recorder.streams[0] { chunks += chunk }
        #expect(chunks == Data("line".utf8))

        // Without a delegate, events go to no one: the session goes on.
        host.delegate = nil
        try await client.send(Data("unheard".utf8), toPeers: [peer])
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.calls.count == 6)
    }

    @Test("SessionDelegate: the variant with the reason; a delegate released is not kept alive")
    func reasonsAndWeakness() async throws {
        let pair = try await SessionPair.connect()
        var recorder: ReasonRecordingDelegate? = ReasonRecordingDelegate()
        weak let released = recorder
        pair.client.delegate = recorder
        await pair.host.disconnect()
        try await eventually { recorder?.reasons.count == 1 }
        #expect(recorder?.reasons == [.peerDisconnected])
        recorder = nil  // the adapter holds it only while it calls it
        try await eventually { released == nil }
        #expect(pair.client.delegate == nil)
    }

    @Test("AdvertiserDelegate: the handler accepts or declines; a failed accept is reported; start after stop fails")
    func advertiserDelegate() async throws {
        var sessionConfiguration = Session.Configuration.patient
        sessionConfiguration.maximumPeers = 1
        let advertiser = try await loopbackAdvertiser("delegate-adv")
        let session = Session(peer: advertiser.peer, configuration: sessionConfiguration)
        let recorder = RecordingAdvertiserDelegate(session: session)
        advertiser.delegate = recorder

        let welcome = Session(peer: try PeerID(displayName: "welcome"))
        try await welcome.connectPeer(
            host: "127.0.0.1",
            port: advertiser.port!,
            withContext: Data("yes".utf8),
            timeout: invitationTimeout
        )
        #expect(session.connectedPeers == [welcome.peer])

        let refused = Session(peer: try PeerID(displayName: "refused"))
        await #expect(throws: InvitationError.self) {
            try await refused.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        }
        #expect(refused.connectedPeers.isEmpty)

        let tooMany = Session(peer: try PeerID(displayName: "too-many"))
        _ = try? await tooMany.connectPeer(
            host: "127.0.0.1",
            port: advertiser.port!,
            withContext: Data("yes".utf8),
            timeout: invitationTimeout
        )
        try await eventually { recorder.notAccepted == [tooMany.peer] }
        #expect(recorder.invitations == ["welcome yes", "refused nil", "too-many yes"])

        await advertiser.stop()
        advertiser.startAdvertisingPeer()
        try await eventually { !recorder.notStarted.isEmpty }
        #expect(recorder.notStarted.first as? DiscoveryError == .notRestartable)
    }

    @Test("BrowserDelegate: found with discoveryInfo, lost, and didNotStart after stop", .avahi)
    func browserDelegate() async throws {
        let service = uniqueServiceType("deleg")
        let me = try PeerID(displayName: "delegate-browser")
        let plain = try Advertiser(peer: try PeerID(displayName: "plain"), serviceType: service)
        let roomy = try Advertiser(
            peer: try PeerID(displayName: "roomy"),
            discoveryInfo: ["room": "blue"],
            serviceType: service
        )
        try await plain.start()
        let browser = try Browser(peer: me, serviceType: service)
        let recorder = RecordingBrowserDelegate()
        browser.delegate = recorder
        browser.startBrowsingForPeers()
        try await eventually { recorder.calls == ["found plain [:]"] }
        try await roomy.start()
        try await eventually { recorder.calls.count == 2 }
        #expect(recorder.calls.last == "found roomy [\"room\": \"blue\"]")

        // A second delegate set later hears of both at once.
        let late = RecordingBrowserDelegate()
        browser.delegate = late
        try await eventually { late.calls.count == 2 }
        #expect(Set(late.calls) == ["found plain [:]", "found roomy [\"room\": \"blue\"]"])

        await plain.stop()
        try await eventually { late.calls.count == 3 }
        #expect(late.calls.last == "lost plain")
        #expect(recorder.calls.count == 2, "the delegate replaced hears nothing more")

        browser.stopBrowsingForPeers()
        browser.startBrowsingForPeers()
        try await eventually { !late.notStarted.isEmpty }
        #expect(late.notStarted.first as? DiscoveryError == .notRestartable)
        await roomy.stop()
    }
}
