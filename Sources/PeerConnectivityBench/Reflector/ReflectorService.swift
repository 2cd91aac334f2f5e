import Foundation
import PeerConnectivity
import Synchronization

/// The reflector: advertises, accepts each runner's invitation into a session of its own, sends it a
/// ``ReflectorHello``, echoes every data message back to its sender in the mode it came in, echoes
/// every stream back on a stream of the same name, and confirms every resource with the size and
/// SHA-256 of the file received (then deletes it); optionally runs a ``RawEchoServer`` beside it for
/// the raw-tcp baseline.
///
/// A session per runner keeps runners apart (one runner's backlog never delays another's echoes) and
/// lifts the 8-peer limit of one session: ``ReflectorConfiguration/maximumRunners`` bounds them.
public final class ReflectorService: Sendable {
    private struct State {
        var nextRunner = 0
        var sessions: [Int: Session] = [:]
        var tasks: [Int: Task<Void, Never>] = [:]
        var acceptLoop: Task<Void, Never>?
        var stopped = false
    }

    /// The reflector's identity.
    public let peer: PeerID
    /// What it was started with.
    public let configuration: ReflectorConfiguration
    /// What it tells runners about itself.
    public let hello: ReflectorHello
    private let advertiser: Advertiser
    private let rawEchoServer: RawEchoServer?
    /// Where this reflector's sessions put received resources.
    public let resourceDirectory: URL
    private let ownsResourceDirectory: Bool
    private let log: @Sendable (String) -> Void
    private let state = Mutex(State())

    /// Binds the raw echo port (if any) and prepares the advertiser; nothing is served until ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: name, service type, ports and limits.
    ///   - log: where connections, their ends and failures are reported, one line each.
    /// - Throws: `PeerIDError` for a bad name, `DiscoveryError` for a bad service type,
    ///   ``BenchError/socket(_:errno:)`` when the raw echo port cannot be bound.
    public init(configuration: ReflectorConfiguration, log: @escaping @Sendable (String) -> Void) throws {
        self.configuration = configuration
        self.log = log
        peer = try PeerID(displayName: configuration.name)
        ownsResourceDirectory = configuration.resourceDirectory == nil
        resourceDirectory =
            configuration.resourceDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "reflector-resources-\(UUID().uuidString)",
                isDirectory: true
            )
        rawEchoServer = try configuration.rawEchoPort.map { port throws(BenchError) in
            try RawEchoServer(host: configuration.host, port: port, log: log)
        }
        hello = ReflectorHello(name: configuration.name, host: HostInfo.current(), rawEchoPort: rawEchoServer?.port)
        var discoveryInfo = hello.host.discoveryInfo
        discoveryInfo[ReflectorConnection.rawEchoPortKey] = rawEchoServer.map { String($0.port) }
        var advertiserConfiguration = Advertiser.Configuration.default
        advertiserConfiguration.host = configuration.host
        advertiserConfiguration.port = configuration.port
        advertiserConfiguration.publishesService = configuration.publishesService
        advertiser = try Advertiser(
            peer: peer,
            discoveryInfo: discoveryInfo,
            serviceType: configuration.serviceType,
            encryptionPreference: configuration.encryption,
            configuration: advertiserConfiguration
        )
    }

    /// The session port, once started.
    public var port: Int? { advertiser.port }
    /// The raw echo port, if it runs one.
    public var rawEchoPort: Int? { rawEchoServer?.port }

    /// Starts the raw echo server, the session listener and the DNS-SD service, and answers invitations.
    ///
    /// - Throws: `DiscoveryError` when listening or registering fails (e.g. avahi-daemon not running).
    public func start() async throws {
        rawEchoServer?.start()
        try await advertiser.start()
        let loop = Task { [self] in
            for await invitation in advertiser.invitations {
                admit(invitation)
            }
        }
        state.withLock { $0.acceptLoop = loop }
    }

    /// Stops advertising, says goodbye to every runner (`Session.disconnect()`) and stops the raw echo server.
    public func stop() async {
        let (sessions, loop) = state.withLock { state in
            state.stopped = true
            return (Array(state.sessions.values), state.acceptLoop)
        }
        await advertiser.stop()
        loop?.cancel()
        for session in sessions {
            await session.disconnect()
        }
        rawEchoServer?.stop()
        if ownsResourceDirectory { try? FileManager.default.removeItem(at: resourceDirectory) }
    }

    /// Runners served now.
    public var runnerCount: Int {
        state.withLock { $0.sessions.count }
    }

    private func admit(_ invitation: Invitation) {
        let runner = invitation.peer
        let context = String(decoding: invitation.context, as: UTF8.self)
        var sessionConfiguration = Session.Configuration.default
        sessionConfiguration.resourceDirectory = resourceDirectory
        let session = Session(
            peer: peer,
            encryptionPreference: configuration.encryption,
            configuration: sessionConfiguration
        )
        let id = state.withLock { state -> Int? in
            guard !state.stopped, state.sessions.count < configuration.maximumRunners else { return nil }
            state.nextRunner += 1
            state.sessions[state.nextRunner] = session
            return state.nextRunner
        }
        guard let id else {
            log("declined runner=\(runner.displayName): \(configuration.maximumRunners) runners served already")
            invitation.decline()
            return
        }
        // On the session's event loop: each echo is sent from the thread that read it.
        let task = Task(executorPreference: session.taskExecutor) { [self] in
            do {
                try await invitation.accept(into: session)
            } catch {
                log("accepting runner=\(runner.displayName) failed: \(error)")
                _ = state.withLock { $0.sessions.removeValue(forKey: id) }
                return
            }
            log("invited by runner=\(runner.displayName) context=\"\(context)\"")
            await serve(session)
            state.withLock { state in
                state.sessions[id] = nil
                state.tasks[id] = nil
            }
        }
        state.withLock { $0.tasks[id] = task }
    }

    /// Echoes until the runner leaves; its streams and resources are handled by tasks of their own, which
    /// are cancelled when it leaves.
    private func serve(_ session: Session) async {
        let started = ContinuousClock.now
        var messages = 0
        var bytes = 0
        var streams = 0
        var resources = 0
        var transfers: [Task<Void, Never>] = []
        defer { transfers.forEach { $0.cancel() } }
        for await event in session.events {
            switch event {
            case .peerStateChanged(let peer, .connected, _):
                let security = session.securityInfo(for: peer)?.summary ?? "unknown"
                log(
                    "connected runner=\(peer.displayName) id=\(peer.id.uuidString.lowercased()) runners=\(runnerCount) "
                        + "security=\"\(security)\""
                )
                do {
                    try await session.send(hello.encoded(), toPeers: [peer], mode: .reliable)
                } catch {
                    log("hello to runner=\(peer.displayName) failed: \(error)")
                }
            case .peerStateChanged(let peer, .notConnected, let reason):
                let seconds = started.duration(to: .now).components.seconds
                log(
                    "ended runner=\(peer.displayName) reason=\(reason.map { "\($0)" } ?? "none") "
                        + "echoed=\(messages) bytes=\(bytes) streams=\(streams) resources=\(resources) after \(seconds) s"
                )
                return
            case .peerStateChanged, .startedReceivingResource:
                break
            case .streamReceived(let stream) where stream.name.hasPrefix(StreamTest.oneWayPrefix):
                streams += 1
                transfers.append(Task { [log] in await Self.receive(stream, in: session, log: log) })
            case .streamReceived(let stream):
                streams += 1
                transfers.append(Task { [log] in await Self.echo(stream, in: session, log: log) })
            case .finishedReceivingResource(let name, let peer, let result):
                resources += 1
                transfers.append(Task { [log] in await Self.confirm(name, result, to: peer, in: session, log: log) })
            case .dataReceived(let data, let peer, let mode):
                do {
                    try await session.send(data, toPeers: [peer], mode: mode)
                    messages += 1
                    bytes += data.count
                } catch {
                    // The runner is gone; its notConnected event follows and ends the loop.
                    log("echo to runner=\(peer.displayName) failed: \(error)")
                }
            }
        }
    }

    /// Writes a stream's bytes back to its writer on a stream of the same name, as they come.
    private static func echo(_ stream: IncomingStream, in session: Session, log: @Sendable (String) -> Void) async {
        let outgoing: OutgoingStream
        do {
            outgoing = try session.startStream(withName: stream.name, toPeer: stream.peer)
        } catch {
            stream.cancel()
            log("stream \"\(stream.name.prefix(80))\" from runner=\(stream.peer.displayName) not echoed: \(error)")
            return
        }
        var bytes = 0
        do {
            for try await chunk in stream {
                try await outgoing.write(chunk)
                bytes += chunk.count
            }
            try outgoing.finish()
            log("stream \"\(stream.name.prefix(80))\" from runner=\(stream.peer.displayName) echoed bytes=\(bytes)")
        } catch {
            outgoing.cancel()
            stream.cancel()
            log(
                "stream \"\(stream.name.prefix(80))\" from runner=\(stream.peer.displayName) failed after \(bytes) bytes: \(error)"
            )
        }
    }

    /// The bytes one-way streams are checked against (made on first use).
    private static let pattern = StreamPattern()

    /// Reads a one-way stream, checks every byte against the pattern its name's index gives, and answers
    /// with a ``StreamReceipt``.
    private static func receive(_ stream: IncomingStream, in session: Session, log: @Sendable (String) -> Void) async {
        let index = Int(stream.name.dropFirst(StreamTest.oneWayPrefix.count)) ?? 0
        var bytes = 0
        var mismatch: Int?
        var failure: String?
        do {
            for try await chunk in stream {
                if mismatch == nil {
                    mismatch = chunk.withUnsafeBytes { pattern.firstMismatch(in: $0, index: index, offset: bytes) }
                        .map { bytes + $0 }
                }
                bytes += chunk.count
            }
        } catch {
            failure = "\(error)"
        }
        let receipt = StreamReceipt(name: stream.name, bytes: bytes, firstMismatchOffset: mismatch, error: failure)
        log(
            "stream \"\(stream.name.prefix(80))\" from runner=\(stream.peer.displayName) read bytes=\(bytes)"
                + (mismatch.map { " first-mismatch=\($0)" } ?? "") + (failure.map { " failed: \($0)" } ?? "")
        )
        do {
            try await session.send(receipt.encoded(), toPeers: [stream.peer], mode: .reliable)
        } catch {
            log("receipt to runner=\(stream.peer.displayName) failed: \(error)")
        }
    }

    /// Hashes a received resource, tells its sender the size and SHA-256, and deletes the file.
    private static func confirm(
        _ name: String,
        _ result: Result<URL, TransferError>,
        to peer: PeerID,
        in session: Session,
        log: @Sendable (String) -> Void
    ) async {
        let confirmation: ResourceConfirmation
        switch result {
        case .success(let url):
            do {
                let digest = try FileDigest(of: url)
                confirmation = ResourceConfirmation(name: name, size: digest.size, sha256: digest.sha256)
            } catch {
                confirmation = ResourceConfirmation(
                    name: name,
                    size: nil,
                    sha256: nil,
                    error: "reading the file: \(error)"
                )
            }
            try? FileManager.default.removeItem(at: url)
        case .failure(let error):
            confirmation = ResourceConfirmation(name: name, size: nil, sha256: nil, error: "\(error)")
        }
        log(
            "resource \"\(name.prefix(80))\" from runner=\(peer.displayName) "
                + (confirmation.error.map { "failed: \($0)" }
                    ?? "bytes=\(confirmation.size ?? 0) sha256=\(confirmation.sha256 ?? "")")
        )
        do {
            try await session.send(confirmation.encoded(), toPeers: [peer], mode: .reliable)
        } catch {
            log("confirmation to runner=\(peer.displayName) failed: \(error)")
        }
    }
}
