import Foundation
import PeerConnectivity

/// A runner's way to the reflector: the driver that carries the messages, what the reflector said
/// about its host, and how reaching it went.
struct ReflectorConnection {
    /// The discoveryInfo key of the raw echo server's port.
    static let rawEchoPortKey = "rawEchoPort"

    var driver: any EchoDriver
    var reflectorHost: HostInfo?
    var report: ConnectionReport

    /// Finds or connects to the reflector for the configuration's test.
    ///
    /// The data test invites the reflector into a session (found by DNS-SD, or at `--connect`) and
    /// waits for its hello. The raw-tcp test takes the raw echo port from the reflector's discoveryInfo
    /// (DNS-SD) or hello (direct), unless given, and connects to it: plain TCP when the run's encryption
    /// is `none`, TLS otherwise.
    static func open(_ configuration: RunnerConfiguration, pattern: PayloadPattern) async throws -> ReflectorConnection
    {
        let me = try PeerID(
            displayName: String("test-runner-\(configuration.runName)".utf8.prefix(63)) ?? "test-runner"
        )
        switch (configuration.plan.test, configuration.target) {
        case (.rawTCP, .discover(let name)):
            var report = ConnectionReport(method: .dnsSD)
            report.serviceType = configuration.serviceType
            let started = MonotonicClock.now()
            let (browser, peer, info) = try await discover(me: me, name: name, configuration: configuration)
            browser.stop()
            report.browseToFoundNanoseconds = MonotonicClock.now() - started
            report.reflectorName = peer.displayName
            guard let port = configuration.rawPort ?? info[rawEchoPortKey].flatMap(Int.init) else {
                throw BenchError.noRawEchoPort
            }
            let host = try await ReflectorAddress.host(
                of: peer,
                serviceType: configuration.serviceType,
                timeout: configuration.connectTimeout
            )
            let driver = try await connectRaw(
                host: host,
                port: port,
                pattern: pattern,
                configuration: configuration,
                report: &report
            )
            return ReflectorConnection(driver: driver, reflectorHost: HostInfo(discoveryInfo: info), report: report)
        case (.rawTCP, .direct(let host, _)):
            // The session only asks the reflector for its host and raw echo port, then closes. A plain
            // baseline may still ask an encrypting reflector.
            var asking = configuration
            if asking.encryption == .none { asking.encryption = .optional }
            var session = try await openSession(me: me, configuration: asking, pattern: pattern)
            await session.connection.driver.close()
            guard let port = configuration.rawPort ?? session.hello.rawEchoPort else { throw BenchError.noRawEchoPort }
            session.connection.driver = try await connectRaw(
                host: host,
                port: port,
                pattern: pattern,
                configuration: configuration,
                report: &session.connection.report
            )
            return session.connection
        default:
            return try await openSession(me: me, configuration: configuration, pattern: pattern).connection
        }
    }

    /// Connects a session to the reflector and waits for its hello.
    private static func openSession(
        me: PeerID,
        configuration: RunnerConfiguration,
        pattern: PayloadPattern
    ) async throws -> (connection: ReflectorConnection, hello: ReflectorHello) {
        // A runner joins no mesh: no listener of its own, nothing for a firewall to let in.
        var sessionConfiguration = Session.Configuration.default
        sessionConfiguration.joinsMesh = false
        sessionConfiguration.streamWindow = configuration.streamWindow
        sessionConfiguration.dialFamily = configuration.dialFamily
        sessionConfiguration.localAddress = configuration.localAddress
        sessionConfiguration.congestionControl = configuration.congestionControl
        if configuration.plan.test == .responsiveness {
            sessionConfiguration.notSentLowWatermark = configuration.notSentLowWatermark
            sessionConfiguration.gatesUnsentBytes = configuration.gatesUnsentBytes
        }
        if configuration.plan.interruptAtPercent != nil {
            // The cut link must be resumed for the transfer to go on: reconnection, on both sides.
            sessionConfiguration.reconnection = ResourceTest.reconnection
        }
        let plan = configuration.plan
        // Echoes are timed where the session reads them, with no task between the read and the clock.
        let echoes = EchoTaker(pattern: pattern, mode: plan.mode)
        sessionConfiguration.messageResponder = echoes.responder
        let session = Session(
            peer: me,
            encryptionPreference: configuration.encryption,
            configuration: sessionConfiguration
        )
        let driver = SessionEchoDriver(
            session: session,
            echoes: echoes,
            // Every test reads the reflector's later messages there: receipts, confirmations, its report.
            inbox: TransferInbox()
        )
        let context = RunnerInvitation.context(
            runName: configuration.runName,
            test: plan.test,
            reconnects: sessionConfiguration.reconnection != nil,
            notSentLowWatermark: sessionConfiguration.notSentLowWatermark,
            congestionControl: sessionConfiguration.congestionControl,
            gatesUnsentBytes: sessionConfiguration.gatesUnsentBytes
        )
        var report: ConnectionReport
        let peer: PeerID
        do {
            switch configuration.target {
            case .discover(let name):
                report = ConnectionReport(method: .dnsSD)
                report.serviceType = configuration.serviceType
                let started = MonotonicClock.now()
                let (browser, found, _) = try await discover(me: me, name: name, configuration: configuration)
                defer { browser.stop() }
                let invited = MonotonicClock.now()
                report.browseToFoundNanoseconds = invited - started
                try await browser.invitePeer(
                    found,
                    to: session,
                    withContext: context,
                    timeout: configuration.connectTimeout
                )
                report.inviteToConnectedNanoseconds = MonotonicClock.now() - invited
                peer = found
            case .direct(let host, let port):
                report = ConnectionReport(method: .direct)
                report.sessionAddress = "\(host):\(port)"
                let invited = MonotonicClock.now()
                peer = try await session.connectPeer(
                    host: host,
                    port: port,
                    withContext: context,
                    timeout: configuration.connectTimeout
                )
                report.inviteToConnectedNanoseconds = MonotonicClock.now() - invited
            }
            driver.connected(to: peer)
            report.encryption = configuration.encryption.description
            report.streamWindow = sessionConfiguration.streamWindow
            report.linkSecurity = session.securityInfo(for: peer)?.summary
            if let endpoints = session.endpoints(of: peer) {
                report.localAddress = ConnectionEndpoints.hostPort(endpoints.localAddress, endpoints.localPort)
                report.remoteAddress = ConnectionEndpoints.hostPort(endpoints.remoteAddress, endpoints.remotePort)
                report.interface = NetworkInterface.name(holding: endpoints.localAddress)
            }
            let connected = MonotonicClock.now()
            let hello = try await driver.hello(timeout: configuration.connectTimeout)
            report.connectedToHelloNanoseconds = MonotonicClock.now() - connected
            report.reflectorName = hello.name
            report.reflectorStreamWindow = hello.streamWindow
            report.reflectorNotSentLowWatermark = hello.notSentLowWatermark
            report.reflectorCongestionControl = hello.congestionControl
            let connection = ReflectorConnection(driver: driver, reflectorHost: hello.host, report: report)
            return (connection, hello)
        } catch {
            await driver.close()
            throw error
        }
    }

    /// Browses until the reflector (by name, or any) is found.
    private static func discover(
        me: PeerID,
        name: String?,
        configuration: RunnerConfiguration
    ) async throws -> (browser: Browser, peer: PeerID, info: [String: String]) {
        let browser = try Browser(peer: me, serviceType: configuration.serviceType)
        try browser.start()
        let wanted = name.map { "a reflector named \"\($0)\"" } ?? "a reflector"
        do {
            let (peer, info) = try await withTimeout(
                configuration.connectTimeout,
                orThrow: .reflectorNotFound(
                    "\(wanted) of _\(configuration.serviceType)._tcp was not found within \(configuration.connectTimeout)"
                )
            ) {
                for try await event in browser.events {
                    if case .found(let peer, let info) = event, name == nil || peer.displayName == name {
                        return (peer, info)
                    }
                }
                throw BenchError.reflectorNotFound("browsing _\(configuration.serviceType)._tcp ended")
            }
            return (browser, peer, info)
        } catch {
            browser.stop()
            throw error
        }
    }

    /// Connects the raw baseline: plain TCP when the run's encryption is `none`, TLS 1.3 otherwise, so
    /// that an encrypted run is compared with an encrypted baseline.
    private static func connectRaw(
        host: String,
        port: Int,
        pattern: PayloadPattern,
        configuration: RunnerConfiguration,
        report: inout ConnectionReport
    ) async throws -> any EchoDriver {
        let started = MonotonicClock.now()
        report.rawAddress = ConnectionEndpoints.hostPort(host, port)
        report.encryption = configuration.encryption.description
        guard configuration.encryption != .none else {
            let fd = try TCPSocket.connect(
                host: host,
                port: port,
                family: configuration.dialFamily,
                localAddress: configuration.localAddress
            )
            report.rawConnectNanoseconds = MonotonicClock.now() - started
            report.linkSecurity = PeerSecurityInfo.unencrypted.summary
            return RawEchoDriver(fd: fd, pattern: pattern)
        }
        let driver = try await TLSEchoDriver.connect(
            host: host,
            port: port,
            pattern: pattern,
            timeout: configuration.connectTimeout,
            family: configuration.dialFamily,
            localAddress: configuration.localAddress
        )
        report.rawConnectNanoseconds = MonotonicClock.now() - started
        report.linkSecurity = driver.linkSecurity
        return driver
    }
}
