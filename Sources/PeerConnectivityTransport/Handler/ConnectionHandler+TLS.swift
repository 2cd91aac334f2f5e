import Logging
import NIOCore
import NIOSSL
import PeerConnectivityCore

/// The switch to TLS after the HELLOs, the binding of the certificate to the HELLO, and the
/// certificate decision.
extension ConnectionHandler {
    /// Says so in the log when the HELLOs agreed on a plain connection: a warning when this side would
    /// have encrypted (`.optional` against a peer whose HELLO says none, which anyone on the path can
    /// write), a notice when this side's preference is none.
    func logIfPlain(after hello: Frame.Hello) {
        guard !stateMachine.isEncrypted, stateMachine.peer != nil, !stateMachine.isClosing else { return }
        if security == nil {
            logger.debug("connection not encrypted: this side's encryption preference is none")
        } else {
            warnings.warn(
                """
                connection NOT encrypted: the peer's HELLO says encryption \(hello.encryption) and this side's \
                preference is optional; anyone on the path can read and change it (use .required)
                """,
                to: logger
            )
        }
    }

    /// Switches the stream to TLS after the HELLOs: stops decoding, then (once the read being decoded
    /// is done) puts the TLS handler in front (see ``installTLS(_:context:)``).
    func startTLS(asClient: Bool, context: ChannelHandlerContext) {
        guard let security else {
            run(
                stateMachine.securityFailed(
                    .securityFailed.with(detail: "no identity to encrypt with"),
                    tellingPeer: false
                )
            )
            return
        }
        readerStopped = true
        let verification: NIOSSLCustomVerificationCallback = { [self] certificates, promise in
            // No PKI: the peer proved it holds the key of its leaf certificate in the handshake; the
            // binding rule and the certificate decision run once the handshake is done.
            peerCertificate = try? certificates.first?.toDERBytes()
            promise.succeed(peerCertificate == nil ? .failed : .certificateVerified)
        }
        let tls: NIOSSLHandler
        do {
            if asClient {
                tls = try NIOSSLClientHandler(
                    context: security.clientContext,
                    serverHostname: nil,
                    customVerificationCallback: verification
                )
            } else {
                tls = NIOSSLServerHandler(context: security.serverContext, customVerificationCallback: verification)
            }
        } catch {
            run(stateMachine.securityFailed(.securityFailed.with(detail: "\(error)"), tellingPeer: false))
            return
        }
        if decoding {
            pendingTLS = tls
        } else {
            installTLS(tls, context: context)
        }
    }

    /// Puts the TLS handler first in the pipeline, with a new decoder here behind it, and feeds it the
    /// bytes read past the HELLO (the start of the peer's TLS handshake).
    func installTLS(_ tls: NIOSSLHandler, context: ChannelHandlerContext) {
        let leftover = reader.takeUndecoded()
        reader = ReceiveBuffer(limit: frameLengthLimit)
        let observer = ServerHelloObserver(isClient: tls is NIOSSLClientHandler) { [self] suite in
            cipherSuite = suite.map(TLSServerHello.name(ofCipherSuite:))
        }
        do {
            try context.pipeline.syncOperations.addHandler(tls, position: .first)
            try context.pipeline.syncOperations.addHandler(observer, position: .first)
        } catch {
            run(stateMachine.securityFailed(.securityFailed.with(detail: "\(error)"), tellingPeer: false))
            return
        }
        readerStopped = false
        if let leftover {
            context.pipeline.syncOperations.fireChannelRead(NIOAny(leftover))
        }
    }

    /// The TLS handshake is done: apply the binding rule to the peer's certificate, then start the
    /// pairing exchange.
    func tlsHandshakeCompleted() {
        guard let security, let connection, let peer = stateMachine.peer else { return }
        guard let certificate = peerCertificate else {
            run(
                stateMachine.securityFailed(
                    .securityFailed.with(detail: "the peer sent no certificate"),
                    tellingPeer: true
                )
            )
            return
        }
        switch security.verify(certificate, peer) {
        case .refused(let reason):
            warnings.warn("closing connection: \(reason)", to: logger)
            run(stateMachine.securityFailed(reason, tellingPeer: true))
        case .proved(var proved):
            proved.info = proved.info.with(tlsVersion: negotiatedTLSVersion(), cipherSuite: cipherSuite)
            verified = proved
            connection.securityInfo = proved.info
            var nonce = [UInt8](repeating: 0, count: PairingExchange.nonceLength)
            var generator = SystemRandomNumberGenerator()
            for index in nonce.indices { nonce[index] = generator.next() }
            let pairing = PairingExchange(
                isInviter: stateMachine.isInviter,
                localKey: security.localPublicKey,
                peerKey: proved.publicKey,
                localNonce: nonce,
                hash: security.hash
            )
            run(stateMachine.secured(pairing))
        }
    }

    /// The TLS version NIOSSL negotiated, by name.
    func negotiatedTLSVersion() -> String? {
        guard let context, let version = try? context.pipeline.syncOperations.nioSSL_tlsVersion() else { return nil }
        switch version {
        case .tlsv1: return "TLS 1.0"
        case .tlsv11: return "TLS 1.1"
        case .tlsv12: return "TLS 1.2"
        case .tlsv13: return "TLS 1.3"
        }
    }

    /// The pairing code is known: record it and ask the certificate decision.
    func decideCertificate(
        peer: PeerID,
        pairingCode: String,
        connection: Connection
    ) {
        let info = (verified?.info ?? connection.securityInfo).with(pairingCode: pairingCode)
        connection.securityInfo = info
        guard let decide = security?.decide else {
            run(stateMachine.certificateDecided(nil))
            return
        }
        guard let eventLoop = context?.eventLoop else { return }
        let loopBound = NIOLoopBound(self, eventLoop: eventLoop)
        Task {
            let verdict = await decide(peer, info)
            eventLoop.execute {
                let handler = loopBound.value
                handler.run(handler.stateMachine.certificateDecided(verdict))
            }
        }
    }
}
