import Crypto
import Foundation
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
    }

    private struct Peer {
        let id: PeerID
        let address: String
        /// The key datagrams to us from this peer are sealed with (encrypted connections).
        let key: SymmetricKey?
    }

    private struct State {
        var endpoint: DatagramEndpoint?
        var closed = false
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
        var statistics = Statistics()
        var deliver: (@Sendable (Data, PeerID) -> Bool)?
    }

    private let state = Mutex(State())

    /// Starts binding the UDP socket; connections established meanwhile are announced once it is bound.
    ///
    /// - Parameters:
    ///   - eventLoop: where the socket runs (the local peer's event loop).
    ///   - deliver: hands a received message to the session; returns `false` to drop it
    ///     (the application is too far behind).
    ///   - ports: the UDP ports to try, the first free one (``Session/Configuration/datagramPorts``); nil
    ///     for an ephemeral one.
    func start(
        on eventLoop: any EventLoop,
        ports: ClosedRange<Int>?,
        deliver: @escaping @Sendable (Data, PeerID) -> Bool
    ) {
        state.withLock { $0.deliver = deliver }
        DatagramEndpoint.bind(host: DualStack.anyAddress, ports: ports, group: eventLoop) {
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
            state.withLock { $0.waiting = [] }
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
        }
    }

    /// A connection is established: tell the peer where to send datagrams (now, or once bound).
    func established(_ connection: Connection, with peer: PeerID) {
        let port = state.withLock { state -> Int? in
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
    }

    /// Our token on `connection`, for tests that forge datagrams.
    func localToken(on connection: Connection) -> UInt64? {
        state.withLock { $0.localTokens[ObjectIdentifier(connection)] }
    }

    /// The peer of an encrypted connection gave the key to seal datagrams to it with.
    func peerKey(_ key: [UInt8], on connection: Connection) {
        state.withLock { $0.peerKeys[ObjectIdentifier(connection)] = SymmetricKey(data: key) }
    }

    /// A connection closed: forget its tokens and its peer's endpoint.
    func closed(_ connection: Connection) {
        let key = ObjectIdentifier(connection)
        state.withLock { state in
            if let token = state.localTokens.removeValue(forKey: key) { state.senders[token] = nil }
            state.targets[key] = nil
            state.peerKeys[key] = nil
            state.waiting.removeAll { $0.0 === connection }
        }
    }

    /// Sends `message` to the peer of `connection` as one datagram.
    ///
    /// - Returns: `false` when the peer's endpoint is not known (the caller then uses the connection).
    func send(_ message: Data, on connection: Connection) -> Bool {
        let encrypted = connection.securityInfo.isEncrypted
        let target = state.withLock { state -> (DatagramEndpoint, SocketAddress, UInt64, SymmetricKey?)? in
            let key = ObjectIdentifier(connection)
            guard let endpoint = state.endpoint, let target = state.targets[key],
                !encrypted || state.peerKeys[key] != nil
            else {
                state.statistics.sentOnConnection += 1
                return nil
            }
            return (endpoint, target.address, target.token, state.peerKeys[key])
        }
        guard let (endpoint, address, token, key) = target else { return false }
        var datagram = connection.allocator.buffer(
            capacity: WireProtocol.datagramHeaderLength + message.count + Self.sealOverhead
        )
        datagram.writeInteger(token)
        if let key {
            let tokenBytes = withUnsafeBytes(of: token.bigEndian) { Array($0) }
            guard let sealed = try? ChaChaPoly.seal(message, using: key, authenticating: tokenBytes) else {
                return true
            }
            datagram.writeBytes(sealed.combined)
        } else {
            datagram.writeBytes(message)
        }
        let sent = endpoint.send(datagram, to: address)
        state.withLock { state in
            if sent { state.statistics.sent += 1 } else { state.statistics.droppedFull += 1 }
        }
        return true
    }

    /// Closes the socket.
    func shutdown() {
        let endpoint = state.withLock { state -> DatagramEndpoint? in
            state.closed = true
            defer { state.endpoint = nil }
            return state.endpoint
        }
        endpoint?.close()
    }

    /// Bytes a sealed datagram adds: ChaCha20-Poly1305's 12-byte nonce and 16-byte tag.
    static let sealOverhead = 12 + 16

    private func received(_ bytes: ByteBuffer, from address: SocketAddress) {
        var bytes = bytes
        let accepted = state.withLock { state -> (PeerID, SymmetricKey?, UInt64, @Sendable (Data, PeerID) -> Bool)? in
            guard let token = bytes.readInteger(as: UInt64.self), let peer = state.senders[token],
                peer.address == Platform.addressText(address), let deliver = state.deliver
            else {
                state.statistics.rejected += 1
                return nil
            }
            return (peer.id, peer.key, token, deliver)
        }
        guard let (sender, key, token, deliver) = accepted else { return }
        var message = Data(buffer: bytes, byteTransferStrategy: .copy)
        if let key {
            // A forged or garbled datagram does not open: dropped.
            let tokenBytes = withUnsafeBytes(of: token.bigEndian) { Array($0) }
            guard let box = try? ChaChaPoly.SealedBox(combined: message),
                let opened = try? ChaChaPoly.open(box, using: key, authenticating: tokenBytes)
            else {
                state.withLock { $0.statistics.rejected += 1 }
                return
            }
            message = opened
        }
        let delivered = deliver(message, sender)
        state.withLock { state in
            if delivered { state.statistics.received += 1 } else { state.statistics.droppedUnread += 1 }
        }
    }
}
