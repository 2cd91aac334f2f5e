import Foundation
import Logging
import NIOCore
import NIOPosix
import PeerConnectivityCore
import PeerConnectivityTransport
import Testing

@testable import PeerConnectivity

#if canImport(Glibc)
    import Glibc
#endif

/// IPv6 and IPv4 on one listener: addresses as the sockets report them, made one form; real sessions over
/// `::1` and over 127.0.0.1 to a listener on `::`; several addresses raced over loopback.
@Suite("Dual stack", .timeLimit(.minutes(1 * slowdown)))
struct DualStackTests {
    @Test("socket addresses in their one text form: IPv4-mapped as IPv4, link-local with its interface")
    func addressText() throws {
        #expect(Platform.addressText(try SocketAddress(ipAddress: "::ffff:10.0.0.1", port: 1)) == "10.0.0.1")
        #expect(Platform.addressText(try SocketAddress(ipAddress: "10.0.0.1", port: 1)) == "10.0.0.1")
        #expect(Platform.addressText(try SocketAddress(ipAddress: "fd00::1", port: 1)) == "fd00::1")
        #expect(Platform.addressText(try SocketAddress(ipAddress: "::1", port: 1)) == "::1")
        #expect(Platform.addressText(try SocketAddress(ipAddress: "fe80::1%lo", port: 1)) == "fe80::1%lo")
        #expect(Platform.hostPort(try SocketAddress(ipAddress: "::ffff:10.0.0.1", port: 7)) == "10.0.0.1:7")
        #expect(Platform.hostPort(try SocketAddress(ipAddress: "fe80::1%lo", port: 7)) == "[fe80::1%lo]:7")
        let mapped = Platform.ipv4Mapped(try SocketAddress(ipAddress: "10.0.0.1", port: 9))
        #expect(mapped.ipAddress == "::ffff:10.0.0.1" && mapped.port == 9)
    }

    @Test("MEMBERS bytes: a mapped address goes as 4 bytes; a link-local one is dialled on the interface it came over")
    func memberAddresses() throws {
        let loopback = if_nametoindex("lo")
        #expect(Platform.addressBytes("::ffff:10.0.0.1") == [10, 0, 0, 1])
        let linkLocal = try #require(Platform.addressBytes("fe80::1%lo"))
        #expect(linkLocal.count == 16)
        #expect(Platform.addressString(linkLocal, interface: loopback) == "fe80::1%lo")
        #expect(Platform.addressString(linkLocal) == "fe80::1")
        // A global address takes no scope; a mapped one comes out as IPv4.
        let global = try #require(Platform.addressBytes("fd00::2"))
        #expect(Platform.addressString(global, interface: loopback) == "fd00::2")
        #expect(Platform.addressString(Array(repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 7]) == "192.0.2.7")
        // The interface of a local address: its scope, or the interface that has it.
        #expect(Platform.interfaceIndex(of: try SocketAddress(ipAddress: "127.0.0.1", port: 0)) == loopback)
        #expect(Platform.interfaceIndex(of: try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: 0)) == loopback)
        #expect(Platform.interfaceIndex(of: try SocketAddress(ipAddress: "fe80::1%lo", port: 0)) == loopback)
        #expect(Platform.interfaceIndex(of: try SocketAddress(ipAddress: "192.0.2.254", port: 0)) == nil)
    }

    /// An advertiser on "::" (the default), a host session accepting everything, and a client session.
    private struct DualStackPair {
        let advertiser: Advertiser
        let host: Session
        let hostLog: EventLog
        let acceptor: Task<Void, Never>

        static func start(_ name: String) async throws -> DualStackPair {
            var configuration = Advertiser.Configuration.default
            #expect(configuration.host == "::")
            configuration.publishesService = false
            configuration.handshakeTimeout = .seconds(30)
            let advertiser = try Advertiser(
                peer: try PeerID(displayName: name),
                serviceType: "dualstack",
                configuration: configuration
            )
            try await advertiser.start()
            let host = Session(peer: advertiser.peer)
            return DualStackPair(
                advertiser: advertiser,
                host: host,
                hostLog: EventLog(host),
                acceptor: acceptAll(advertiser, into: host)
            )
        }

        /// Connects a new client to `address` and checks both ends' view of the connection, and that
        /// reliable and unreliable messages cross both ways.
        func connectAndExchange(from address: String) async throws {
            let client = Session(peer: try PeerID(displayName: "client over \(address)"))
            let clientLog = EventLog(client)
            try await client.connectPeer(host: address, port: advertiser.port!, timeout: invitationTimeout)
            try await hostLog.waitFor(client.peer, .connected)
            let fromClient = try #require(client.endpoints(of: host.peer))
            let fromHost = try #require(host.endpoints(of: client.peer))
            #expect(fromClient.remoteAddress == address && fromClient.localAddress == address)
            #expect(fromHost.remoteAddress == address, "no IPv4-mapped form: \(fromHost)")
            #expect(fromHost.remotePort == fromClient.localPort)

            try await client.send(Data("reliable".utf8), toPeers: [host.peer])
            try await eventually { hostLog.messages.contains(Data("reliable".utf8)) }
            // Unreliable both ways: the UDP sockets are on "::" too, and the source address of each datagram
            // must match the connection's, in the same form, or it is rejected.
            let probe = Data("datagram".utf8)
            let deadline = ContinuousClock.now + waitLimit
            while ContinuousClock.now < deadline,
                host.runtime.datagrams.statistics.received == 0 || client.runtime.datagrams.statistics.received == 0
            {
                try await client.send(probe, toPeers: [host.peer], mode: .unreliable)
                try await host.send(probe, toPeers: [client.peer], mode: .unreliable)
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(host.runtime.datagrams.statistics.received > 0 && client.runtime.datagrams.statistics.received > 0)
            #expect(
                host.runtime.datagrams.statistics.rejected == 0 && client.runtime.datagrams.statistics.rejected == 0
            )
            // The log reads the events in a task of its own: it may not have them yet.
            try await eventually { clientLog.messages.contains(probe) && hostLog.messages.contains(probe) }
            await client.disconnect()
        }

        func stop() async {
            acceptor.cancel()
            await advertiser.stop()
            await host.disconnect()
        }
    }

    @Test("two sessions connect over IPv6 loopback (::1), and messages and datagrams cross")
    func ipv6Loopback() async throws {
        let pair = try await DualStackPair.start("ipv6 host")
        try await pair.connectAndExchange(from: "::1")
        await pair.stop()
    }

    @Test("an IPv4 client reaches a listener on ::, and is seen as 127.0.0.1, not ::ffff:127.0.0.1")
    func ipv4ClientToDualStackListener() async throws {
        let pair = try await DualStackPair.start("dual-stack host")
        try await pair.connectAndExchange(from: "127.0.0.1")
        await pair.stop()
    }

    private static func configuration() -> ConnectionConfiguration {
        ConnectionConfiguration(
            maximumMessageLength: 1 << 20,
            handshakeTimeout: .seconds(30),
            keepaliveInterval: .seconds(30),
            livenessTimeout: .seconds(90),
            logger: Logger(label: "dual-stack-test")
        )
    }

    @Test("dialling several addresses: a refused one is passed over at once, the next connects; all refused fails")
    func raceOverLoopback() async throws {
        let invitee = try PeerID(displayName: "raced")
        let events = ConnectionEventStream(finishesOnClose: false)
        let listener = try await ConnectionListener.bind(
            host: "127.0.0.1",
            port: 0,
            localPeer: invitee,
            configuration: Self.configuration(),
            handshakeLimits: .init(maximum: 8, maximumPerAddress: 8),
            group: MultiThreadedEventLoopGroup.singleton,
            delegate: events
        )
        defer {
            events.finish()
            Task { await listener.close() }
        }
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let closed = refusing.port
        let target = DialTarget(
            host: "raced.local",
            port: listener.port,
            addresses: [
                try SocketAddress(ipAddress: "127.0.0.1", port: listener.port),
                try SocketAddress(ipAddress: "::1", port: closed),
            ]
        )
        let start = ContinuousClock.now
        let connection = try await ConnectionDialer.dial(
            target,
            localPeer: try PeerID(displayName: "racer"),
            invitation: .init(expectedPeer: invitee, context: ByteBuffer(), timeout: .seconds(30)),
            configuration: Self.configuration(),
            group: MultiThreadedEventLoopGroup.singleton,
            delegate: ConnectionEventStream()
        )
        let elapsed = ContinuousClock.now - start
        defer { connection.close(.localDisconnect) }
        // IPv6 was tried first and refused; IPv4 then connected.
        #expect(connection.remoteIPAddress == "127.0.0.1")
        #expect(elapsed < .seconds(5) * slowdown, "took \(elapsed)")
        var inbound = events.makeAsyncIterator()
        guard let first = await inbound.next(), case .invitation = first.event else {
            Issue.record("the listener saw no invitation first")
            return
        }

        let refused = DialTarget(
            host: "refused.local",
            port: closed,
            addresses: [
                try SocketAddress(ipAddress: "127.0.0.1", port: closed),
                try SocketAddress(ipAddress: "::1", port: closed),
            ]
        )
        let error = await #expect(throws: (any Error).self) {
            _ = try await ConnectionDialer.dial(
                refused,
                localPeer: try PeerID(displayName: "racer"),
                invitation: .init(expectedPeer: invitee, context: ByteBuffer(), timeout: .seconds(30)),
                configuration: Self.configuration(),
                group: MultiThreadedEventLoopGroup.singleton,
                delegate: ConnectionEventStream()
            )
        }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains("[::1]:\(closed)") && text.contains("127.0.0.1:\(closed)"), "\(text)")
        if let six = text.firstRange(of: "[::1]"), let four = text.firstRange(of: "127.0.0.1") {
            #expect(six.lowerBound < four.lowerBound, "IPv6 first: \(text)")
        }
    }

    @Test("a link-local address without its interface is dialled on each interface that has one")
    func unscopedLinkLocal() async throws {
        #expect(!Platform.linkLocalInterfaces().contains("lo"))
        let shown = try await ChildProcess.run(
            "/bin/sh",
            arguments: ["-c", "ip -o -6 addr show scope link"],
            timeout: .seconds(10)
        )
        // "2: eth0    inet6 fe80::fc:ff:fe00:1/64 scope link ..."
        guard
            let line = shown.output.split(separator: "\n").first(where: { $0.contains("inet6 fe80") }),
            let field = line.split(separator: " ").first(where: { $0.hasPrefix("fe80") })
        else {
            Issue.record("no interface here has a link-local address: \(shown.output)")
            return
        }
        let address = String(field.prefix { $0 != "/" })
        let invitee = try PeerID(displayName: "link-local listener")
        let listener = try await ConnectionListener.bind(
            host: "::",
            port: 0,
            localPeer: invitee,
            configuration: Self.configuration(),
            handshakeLimits: .init(maximum: 8, maximumPerAddress: 8),
            group: MultiThreadedEventLoopGroup.singleton,
            delegate: ConnectionEventStream()
        )
        let connection = try await ConnectionDialer.dial(
            DialTarget(host: address, port: listener.port),
            localPeer: try PeerID(displayName: "link-local dialer"),
            invitation: .init(expectedPeer: invitee, context: ByteBuffer(), timeout: .seconds(30)),
            configuration: Self.configuration(),
            group: MultiThreadedEventLoopGroup.singleton,
            delegate: ConnectionEventStream()
        )
        let remote = connection.remoteIPAddress ?? ""
        #expect(
            remote.hasPrefix(address + "%")
                && Platform.linkLocalInterfaces().contains(String(remote.split(separator: "%")[1]))
        )
        connection.close(.localDisconnect)
        await listener.close()
    }
}
