import Crypto
import Foundation
import Logging
import NIOCore
import NIOPosix
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The unreliable side of a session: one UDP socket beside its TCP connections.
///
/// When a connection is established this side tells the peer, over that connection, its UDP port and
/// a random token (a DATAGRAM-ENDPOINT frame); the peer does the same. A datagram is the receiver's
/// token followed by the message. A datagram whose token is unknown, or that comes from another
/// address than the token's connection, is dropped: the token is a secret shared over TCP, so no one
/// else can inject messages. Until the peer's endpoint is known (the first round trip after
/// connecting) or when UDP is unavailable, the session sends unreliable messages on the connection.
///
/// On an encrypted connection each side also sends, inside TLS and before its DATAGRAM-ENDPOINT, a
/// random 32-byte key (DATAGRAM-KEY); the peer seals every datagram to it with ChaCha20-Poly1305
/// under that key (the token authenticated, a random nonce per datagram), and a datagram that does
/// not open is dropped. Until the key is known such a connection carries unreliable messages inside TLS.
///
/// With a peer whose handshake said it probes (``HandshakeFields/probesDatagrams``), the path is checked
/// before it carries messages: both sides send probes and answer the other's (``DatagramProbe``), each path
/// judged by a ``DatagramPathStateMachine`` (`SessionDatagrams+Probes.swift`). Until a probe is answered
/// unreliable messages go on the connection; when the path is judged blocked they stay there, and a warning
/// says so.
final class SessionDatagrams: Sendable {
    /// Counts, for tests and diagnostics.
    struct Statistics: Sendable, Equatable {
        /// Datagrams handed to the socket.
        var sent = 0
        /// Messages dropped on sending because the socket's buffer was full.
        var droppedFull = 0
        /// Unreliable messages sent on the TCP connection, before the peer's endpoint was known.
        var sentOnConnection = 0
        /// Datagrams delivered.
        var received = 0
        /// Datagrams dropped: unknown token, wrong sender address, or too short.
        var rejected = 0
        /// Datagrams dropped because the application had not taken enough of the events.
        var droppedUnread = 0
        /// Probes sent, and answers to the peers' probes sent.
        var probesSent = 0
        var answersSent = 0
    }

    struct Peer {
        let id: PeerID
        let address: String
        /// The key datagrams to us from this peer are sealed with (encrypted connections).
        let key: SymmetricKey?
    }

    /// Where a probe token leads: the connection, and whether probes to us or answers to ours come under it.
    struct ProbeRoute {
        let connection: ObjectIdentifier
        /// `true`: our own token's complement, under which the peer's probes come; `false`: the peer's,
        /// under which the answers to our probes come.
        let isOurs: Bool
    }

    /// One connection's checked path.
    struct Path {
        var machine = DatagramPathStateMachine()
        let connection: Connection
        let peer: PeerID
        var timer: Scheduled<Void>?
        /// Bumped whenever the timer changes, so that one armed before fires for nothing.
        var timerGeneration = 0
    }

    struct State {
        var endpoint: DatagramEndpoint?
        var eventLoop: (any EventLoop)?
        var logger: Logger?
        var closed = false
        /// No UDP socket could be bound.
        var unavailable = false
        /// Every datagram received is dropped, as behind a firewall that blocks UDP (tests).
        var dropsEverything = false
        /// Our token per connection: what the peer puts in front of its datagrams to us.
        var localTokens: [ObjectIdentifier: UInt64] = [:]
        /// Token -> the peer it was given to, and the address its datagrams must come from.
        var senders: [UInt64: Peer] = [:]
        /// Where each peer receives: its address and port, and its token.
        var targets: [ObjectIdentifier: (address: SocketAddress, token: UInt64)] = [:]
        /// The keys peers gave us to seal datagrams to them with, per encrypted connection.
        var peerKeys: [ObjectIdentifier: SymmetricKey] = [:]
        /// Connections established before the socket was bound, to announce once it is.
        var waiting: [(Connection, PeerID)] = []
        /// Connections whose peer probes: their paths are checked before they carry messages.
        var probing: Set<ObjectIdentifier> = []
        /// The paths being checked or checked, per connection.
        var paths: [ObjectIdentifier: Path] = [:]
        /// Probe tokens: the complement of ours (the peer's probes) and of the peer's (its answers).
        var probeRoutes: [UInt64: ProbeRoute] = [:]
        var statistics = Statistics()
        var deliver: (@Sendable (Data, PeerID) -> Bool)?
    }

    let state = Mutex(State())

    /// Starts binding the UDP socket; connections established meanwhile are announced once it is bound.
    ///
    /// - Parameters:
    ///   - eventLoop: where the socket runs (the local peer's event loop).
    ///   - deliver: hands a received message to the session; returns `false` to drop it
    ///     (the application is too far behind).
    ///   - host: the local address to bind (``Session/Configuration/localAddress``); nil for every one.
    ///   - ports: the UDP ports to try, the first free one (``Session/Configuration/datagramPorts``); nil
    ///     for an ephemeral one.
    ///   - logger: where a path's verdict is logged.
    func start(
        on eventLoop: any EventLoop,
        host: String?,
        ports: ClosedRange<Int>?,
        logger: Logger,
        deliver: @escaping @Sendable (Data, PeerID) -> Bool
    ) {
        state.withLock { state in
            state.deliver = deliver
            state.eventLoop = eventLoop
            state.logger = logger
        }
        DatagramEndpoint.bind(host: host ?? DualStack.anyAddress, ports: ports, group: eventLoop) {
            [weak self] bytes, from in
            self?.received(bytes, from: from)
        }.whenComplete { [weak self] result in
            guard let self else {
                if case .success(let endpoint) = result { endpoint.close() }
                return
            }
            self.bound(result)
        }
    }

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// The socket's port, once bound.
    var port: Int? { state.withLock { $0.endpoint?.port } }

    private func bound(_ result: Result<DatagramEndpoint, any Error>) {
        guard case .success(let endpoint) = result else {
            // No UDP: unreliable messages keep travelling on the connections.
            state.withLock { state in
                state.waiting = []
                state.unavailable = true
            }
            return
        }
        let waiting = state.withLock { state -> [(Connection, PeerID)]? in
            guard !state.closed else { return nil }
            state.endpoint = endpoint
            defer { state.waiting = [] }
            return state.waiting
        }
        guard let waiting else {
            endpoint.close()
            return
        }
        for (connection, peer) in waiting {
            announce(on: connection, to: peer, port: endpoint.port)
            startPath(on: connection)
        }
    }

    /// A connection is established: tell the peer where to send datagrams (now, or once bound).
    ///
    /// - Parameter probes: whether the peer probes (its handshake said so, or the link's first connection's).
    func established(_ connection: Connection, with peer: PeerID, probes: Bool) {
        let port = state.withLock { state -> Int? in
            if probes { state.probing.insert(ObjectIdentifier(connection)) }
            guard let endpoint = state.endpoint else {
                if !state.closed { state.waiting.append((connection, peer)) }
                return nil
            }
            return endpoint.port
        }
        if let port { announce(on: connection, to: peer, port: port) }
    }

    private func announce(on connection: Connection, to peer: PeerID, port: Int) {
        guard let address = connection.remoteIPAddress else { return }
        let token = UInt64.random(in: 1...UInt64.max)
        let key = connection.securityInfo.isEncrypted ? SymmetricKey(size: .bits256) : nil
        state.withLock { state in
            state.localTokens[ObjectIdentifier(connection)] = token
            state.senders[token] = Peer(id: peer, address: address, key: key)
            if state.probing.contains(ObjectIdentifier(connection)) {
                state.probeRoutes[DatagramProbe.token(for: token)] = ProbeRoute(
                    connection: ObjectIdentifier(connection),
                    isOurs: true
                )
            }
        }
        if let key {
            connection.sendControl(.datagramKey(key.withUnsafeBytes { Array($0) }))
        }
        connection.sendControl(.datagramEndpoint(port: UInt16(port), token: token))
    }

    /// The peer said where it receives datagrams.
    func peerEndpoint(port: UInt16, token: UInt64, on connection: Connection) {
        guard let remote = connection.remoteIPAddress,
            let address = try? SocketAddress(ipAddress: remote, port: Int(port))
        else { return }
        state.withLock { $0.targets[ObjectIdentifier(connection)] = (address, token) }
        startPath(on: connection)
    }

    /// Our token on `connection`, for tests that forge datagrams.
    func localToken(on connection: Connection) -> UInt64? {
        state.withLock { $0.localTokens[ObjectIdentifier(connection)] }
    }

    /// The peer of an encrypted connection gave the key to seal datagrams to it with.
    func peerKey(_ key: [UInt8], on connection: Connection) {
        state.withLock { $0.peerKeys[ObjectIdentifier(connection)] = SymmetricKey(data: key) }
        startPath(on: connection)
    }

    /// A connection closed: forget its tokens, its peer's endpoint and its path.
    func closed(_ connection: Connection) {
        let key = ObjectIdentifier(connection)
        let timer = state.withLock { state -> Scheduled<Void>? in
            if let token = state.localTokens.removeValue(forKey: key) {
                state.senders[token] = nil
                state.probeRoutes[DatagramProbe.token(for: token)] = nil
            }
            if let target = state.targets.removeValue(forKey: key) {
                state.probeRoutes[DatagramProbe.token(for: target.token)] = nil
            }
            state.peerKeys[key] = nil
            state.waiting.removeAll { $0.0 === connection }
            state.probing.remove(key)
            return state.paths.removeValue(forKey: key)?.timer
        }
        timer?.cancel()
    }

    /// Sends `message` to the peer of `connection` as one datagram.
    ///
    /// - Returns: `false` when the peer's endpoint is not known, or its path not open (the caller then uses
    ///   the connection).
    func send(_ message: Data, on connection: Connection) -> Bool {
        let encrypted = connection.securityInfo.isEncrypted
        let target = state.withLock { state -> (DatagramEndpoint, SocketAddress, UInt64, SymmetricKey?)? in
            let key = ObjectIdentifier(connection)
            guard let endpoint = state.endpoint, let target = state.targets[key],
                !encrypted || state.peerKeys[key] != nil,
                !state.probing.contains(key) || state.paths[key]?.machine.verdict == .open
            else {
                state.statistics.sentOnConnection += 1
                return nil
            }
            return (endpoint, target.address, target.token, state.peerKeys[key])
        }
        guard let (endpoint, address, token, key) = target else { return false }
        guard let datagram = Self.datagram(message, token: token, key: key, allocator: connection.allocator) else {
            return true
        }
        let sent = endpoint.send(datagram, to: address)
        state.withLock { state in
            if sent { state.statistics.sent += 1 } else { state.statistics.droppedFull += 1 }
        }
        return true
    }

    /// Closes the socket and stops every path's probes.
    func shutdown() {
        let (endpoint, timers) = state.withLock { state -> (DatagramEndpoint?, [Scheduled<Void>]) in
            state.closed = true
            defer {
                state.endpoint = nil
                state.paths = [:]
            }
            return (state.endpoint, state.paths.values.compactMap(\.timer))
        }
        timers.forEach { $0.cancel() }
        endpoint?.close()
    }

    /// Bytes a sealed datagram adds: ChaCha20-Poly1305's 12-byte nonce and 16-byte tag.
    static let sealOverhead = 12 + 16

    /// A datagram: `token`, then `body`, sealed under `key` when there is one (the token authenticated).
    ///
    /// - Returns: nil when sealing failed (the datagram is dropped).
    static func datagram(
        _ body: some DataProtocol,
        token: UInt64,
        key: SymmetricKey?,
        allocator: ByteBufferAllocator
    ) -> ByteBuffer? {
        var datagram = allocator.buffer(capacity: WireProtocol.datagramHeaderLength + body.count + sealOverhead)
        datagram.writeInteger(token)
        if let key {
            let tokenBytes = withUnsafeBytes(of: token.bigEndian) { Array($0) }
            guard let sealed = try? ChaChaPoly.seal(body, using: key, authenticating: tokenBytes) else { return nil }
            datagram.writeBytes(sealed.combined)
        } else {
            datagram.writeBytes(body)
        }
        return datagram
    }

    /// The body of a datagram received under `token`, opened with `key` when there is one.
    ///
    /// - Returns: nil when it does not open (forged or garbled: dropped).
    static func opened(_ body: Data, token: UInt64, key: SymmetricKey?) -> Data? {
        guard let key else { return body }
        let tokenBytes = withUnsafeBytes(of: token.bigEndian) { Array($0) }
        guard let box = try? ChaChaPoly.SealedBox(combined: body),
            let opened = try? ChaChaPoly.open(box, using: key, authenticating: tokenBytes)
        else { return nil }
        return opened
    }

    /// Drops every datagram received from now on, as a firewall that blocks UDP would (tests).
    func dropEveryDatagram() {
        state.withLock { $0.dropsEverything = true }
    }

    /// What a received datagram's token names.
    private enum Arrival {
        /// A message from this peer, to open with this key and hand over.
        case message(PeerID, SymmetricKey?, @Sendable (Data, PeerID) -> Bool)
        /// A probe or an answer to one (``probeReceived(_:token:from:)``).
        case probe
        /// Nothing: dropped.
        case dropped
    }

    private func received(_ bytes: ByteBuffer, from address: SocketAddress) {
        var bytes = bytes
        let token = bytes.readInteger(as: UInt64.self)
        let arrival = state.withLock { state -> Arrival in
            guard !state.dropsEverything else { return .dropped }
            guard let token, let peer = state.senders[token] else {
                // Not a message's token: a probe's, or nothing.
                if let token, state.probeRoutes[token] != nil { return .probe }
                state.statistics.rejected += 1
                return .dropped
            }
            guard peer.address == Platform.addressText(address), let deliver = state.deliver else {
                state.statistics.rejected += 1
                return .dropped
            }
            return .message(peer.id, peer.key, deliver)
        }
        let sender: PeerID
        let key: SymmetricKey?
        let deliver: @Sendable (Data, PeerID) -> Bool
        switch arrival {
        case .dropped:
            return
        case .probe:
            if let token { probeReceived(bytes, token: token, from: address) }
            return
        case .message(let peer, let peerKey, let handOver):
            (sender, key, deliver) = (peer, peerKey, handOver)
        }
        // A forged or garbled datagram does not open: dropped.
        guard let token,
            let message = Self.opened(Data(buffer: bytes, byteTransferStrategy: .copy), token: token, key: key)
        else {
            state.withLock { $0.statistics.rejected += 1 }
            return
        }
        let delivered = deliver(message, sender)
        state.withLock { state in
            if delivered { state.statistics.received += 1 } else { state.statistics.droppedUnread += 1 }
        }
    }
}
