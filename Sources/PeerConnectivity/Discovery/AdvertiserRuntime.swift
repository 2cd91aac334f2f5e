import Foundation
import NIOCore
import NIOFoundationCompat
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The state behind an ``Advertiser``: its listener, its DNS-SD registration and the invitations
/// not yet answered. It is the event handler of incoming connections until a session accepts them.
final class AdvertiserRuntime: ConnectionDelegate, Sendable {
    private enum Phase {
        case idle
        case starting
        case started(ConnectionListener, DNSServiceRegistration?)
        case stopped
    }

    private struct State {
        var phase = Phase.idle
        var pending: [ObjectIdentifier: (connection: Connection, peer: PeerID)] = [:]
        var limiter: InvitationRateLimiter

        var isStopped: Bool {
            if case .stopped = phase { return true }
            return false
        }
    }

    private let record: DiscoveryRecord
    private let serviceType: String
    private let configuration: Advertiser.Configuration
    private let security: ConnectionSecurity?
    private let continuation: AsyncStream<Invitation>.Continuation
    private let state: Mutex<State>
    /// The warnings about inviters its connections and refusals may write, shared by them.
    private let warnings: WarningBudget

    init(
        record: DiscoveryRecord,
        serviceType: String,
        configuration: Advertiser.Configuration,
        security: ConnectionSecurity?,
        continuation: AsyncStream<Invitation>.Continuation
    ) {
        self.security = security
        self.record = record
        self.serviceType = serviceType
        self.configuration = configuration
        self.continuation = continuation
        warnings = WarningBudget(uptimeNanoseconds: configuration.uptimeNanoseconds)
        let limits = InvitationRateLimiter.Limits(
            pendingPerPeer: configuration.maximumPendingInvitationsPerPeer,
            peerBurst: configuration.invitationBurstPerPeer,
            peerPerSecond: configuration.invitationsPerSecondPerPeer,
            addressBurst: configuration.invitationBurstPerAddress,
            addressPerSecond: configuration.invitationsPerSecondPerAddress,
            ipv6PrefixLength: configuration.ipv6PrefixLength
        )
        self.state = Mutex(State(limiter: InvitationRateLimiter(limits: limits)))
    }

    var port: Int? {
        state.withLock { state in
            if case .started(let listener, _) = state.phase { return listener.port }
            return nil
        }
    }

    var serviceName: String? {
        state.withLock { state in
            if case .started(_, let registration) = state.phase { return registration?.registeredName }
            return nil
        }
    }

    func start() async throws(DiscoveryError) {
        try state.withLock { state throws(DiscoveryError) in
            switch state.phase {
            case .idle: state.phase = .starting
            case .starting, .started: return
            case .stopped: throw DiscoveryError.notRestartable
            }
        }
        let txtRecord = try record.txtRecord()
        var connectionConfiguration = ConnectionConfiguration(
            maximumMessageLength: Session.Configuration.default.maximumMessageLength,
            handshakeTimeout: TimeAmount(configuration.handshakeTimeout),
            keepaliveInterval: TimeAmount(Session.Configuration.default.keepaliveInterval),
            livenessTimeout: TimeAmount(Session.Configuration.default.livenessTimeout),
            maximumInvitationTimeout: TimeAmount(configuration.maximumInvitationTimeout),
            logger: configuration.logger,
            security: security,
            encryptedBefore: configuration.certificatePolicy.hasSeenEncrypted
        )
        connectionConfiguration.warnings = warnings
        let listener: ConnectionListener
        do {
            listener = try await ConnectionListener.bind(
                host: configuration.host,
                port: configuration.port,
                localPeer: record.peer,
                configuration: connectionConfiguration,
                handshakeLimits: HandshakeAdmission.Limits(
                    maximum: configuration.maximumPendingHandshakes,
                    maximumPerAddress: configuration.maximumPendingHandshakesPerAddress,
                    ipv6PrefixLength: configuration.ipv6PrefixLength
                ),
                group: PeerEventLoop.loop(for: record.peer, in: configuration.ioGroup),
                delegate: self
            )
        } catch {
            state.withLock { $0.phase = .idle }
            throw DiscoveryError.listenFailed("cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        var registration: DNSServiceRegistration?
        if configuration.publishesService {
            do {
                let logger = configuration.logger
                registration = try await DNSServiceRegistration.register(
                    name: DiscoveryRecord.instanceName(for: record.peer),
                    type: DiscoveryRecord.registrationType(serviceType),
                    port: UInt16(listener.port),
                    txtRecord: txtRecord,
                    onFailure: { failure in logger.error("DNS-SD registration lost: \(failure)") }
                )
            } catch {
                await listener.close()
                state.withLock { $0.phase = .idle }
                if let failure = error as? DNSServiceFailure, failure.isDaemonNotRunning {
                    throw DiscoveryError.daemonNotRunning
                }
                throw DiscoveryError.dnsServiceFailed("\(error)")
            }
        }
        let stoppedMeanwhile = state.withLock { state -> Bool in
            guard case .starting = state.phase else { return true }
            state.phase = .started(listener, registration)
            return false
        }
        if stoppedMeanwhile {
            registration?.cancel()
            await listener.close()
        }
    }

    func stop() async {
        let (phase, pending) = state.withLock { state in
            let result = (state.phase, state.pending.values.map(\.connection))
            state.phase = .stopped
            state.pending = [:]
            return result
        }
        if case .started(let listener, let registration) = phase {
            registration?.cancel()
            await listener.close()
        }
        for connection in pending {
            connection.decline(.declined.with(detail: "the advertiser stopped"))
        }
        continuation.finish()
    }

    /// The application answered the invitation on `connection`.
    func answered(_ connection: Connection) {
        state.withLock { state in
            guard let entry = state.pending.removeValue(forKey: ObjectIdentifier(connection)) else { return }
            state.limiter.answered(peer: entry.peer.id.uuidString)
        }
    }

    // MARK: - Connection events (on event loops)

    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        switch event {
        case .invitation(let peer, let context, let timeout):
            invitation(from: peer, context: context, timeout: timeout, on: connection)
        case .closed:
            answered(connection)
        default:
            _ = event.refuseResumption(on: connection)
        }
        return .more
    }

    private func invitation(from peer: PeerID, context: ByteBuffer, timeout: TimeAmount, on connection: Connection) {
        let address = connection.remoteIPAddress ?? "?"
        let now = configuration.uptimeNanoseconds()
        let refusal = state.withLock { state -> DisconnectReason? in
            if state.isStopped {
                return .busy.with(detail: "the advertiser stopped")
            }
            if state.pending.count >= configuration.maximumPendingInvitations {
                return .busy.with(detail: "\(configuration.maximumPendingInvitations) invitations already pending")
            }
            if case .refuse(let why) = state.limiter.request(peer: peer.id.uuidString, address: address, now: now) {
                return .rateLimited.with(detail: why)
            }
            state.pending[ObjectIdentifier(connection)] = (connection, peer)
            return nil
        }
        if let refusal {
            warnings.warn("declining invitation from \(peer) at \(address): \(refusal)", to: configuration.logger)
            connection.decline(refusal)
            return
        }
        let invitation = Invitation(
            peer: peer,
            context: Data(buffer: context),
            timeout: .nanoseconds(timeout.nanoseconds),
            security: connection.securityInfo,
            connection: connection,
            advertiser: self
        )
        continuation.yield(invitation)
    }
}
