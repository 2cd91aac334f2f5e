import Foundation
import PeerConnectivityBench

#if canImport(Glibc)
    import Glibc
#endif

/// Opens many TCP connections to a port on loopback that never complete a handshake, and watches
/// how long the server keeps each open: the attacker's side of a connection flood.
///
/// Each connection comes from its own source address in 127.0.0.0/8 (bound before connecting:
/// 127.1.x.y, never 127.0.0.1), as a flood from many hosts would. It runs on the calling thread
/// with plain blocking-then-polled sockets, so it does not compete with the event loops it attacks
/// for their threads. The process's open-file limit is raised to its hard limit when needed.
enum ConnectionFlood {
    /// What a flood connection does once connected.
    enum Behaviour: String, Codable, Sendable, CaseIterable {
        /// Sends nothing.
        case idle
        /// Sends bytes that are no frame at all (an HTTP request).
        case garbage
        /// Sends a valid HELLO one byte at a time, slowly enough never to finish within the timeout.
        case dribble
    }

    /// What to open and for how long to watch.
    struct Plan: Sendable {
        /// The port on 127.0.0.1 to connect to.
        var port: Int
        /// How many connections.
        var count: Int
        /// Behaviours, given to connections in turn.
        var behaviours: [Behaviour]
        /// Time between two connects.
        var pacing: Duration
        /// Time between two bytes of a dribbling connection.
        var dribbleInterval: Duration
        /// How long to watch after the last connect before giving up on connections still open.
        var watchLimit: Duration

        /// Makes a plan.
        ///
        /// - Parameters:
        ///   - port: the port on 127.0.0.1.
        ///   - count: how many connections.
        ///   - behaviours: behaviours given to connections in turn.
        ///   - pacing: time between two connects.
        ///   - dribbleInterval: time between two bytes of a dribbling connection.
        ///   - watchLimit: how long to watch after the last connect.
        init(
            port: Int,
            count: Int,
            behaviours: [Behaviour] = Behaviour.allCases,
            pacing: Duration = .milliseconds(1),
            dribbleInterval: Duration = .milliseconds(250),
            watchLimit: Duration = .seconds(15)
        ) {
            self.port = port
            self.count = count
            self.behaviours = behaviours.isEmpty ? [.idle] : behaviours
            self.pacing = pacing
            self.dribbleInterval = dribbleInterval
            self.watchLimit = watchLimit
        }
    }

    /// What happened to the flood.
    struct Report: Codable, Sendable {
        /// Connections made.
        var opened: Int
        /// Connects that failed (refused, or no source address).
        var failed: Int
        /// Connections the server closed.
        var closedByServer: Int
        /// Connections still open when watching stopped.
        var stillOpen: Int
        /// From connect to the server's close, over every connection it closed: at least as long as the server held it.
        var lifetime: LatencySummary
        /// From the server's first bytes (its HELLO, sent as it accepts; the connect when it sent none) to its close:
        /// at most as long as the server held it, without the wait in its accept queue, which a loaded machine makes
        /// seconds long.
        var serverLifetime: LatencySummary
        /// The same, per behaviour.
        var serverLifetimeByBehaviour: [String: LatencySummary]
        /// The opening: from the first connect to the last, in milliseconds.
        var openingMilliseconds: Double
    }

    /// Runs the flood on a thread of its own; returns when every connection is closed or the watch limit passed.
    ///
    /// - Parameter plan: the plan.
    /// - Returns: the report.
    static func run(_ plan: Plan) async -> Report {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: runBlocking(plan)) }
            thread.start()
        }
    }

    /// A source address of 127.1.0.0/16 for connection `index`.
    static func sourceAddress(_ index: Int) -> String {
        "127.1.\(index / 250 % 250).\(index % 250 + 1)"
    }

    private struct Flooder {
        var fd: Int32
        var behaviour: Behaviour
        var openedAt: UInt64
        /// When the server's first bytes came.
        var heardAt: UInt64?
        var closedAt: UInt64?
        var dribbled = 0
        var nextDribble: UInt64
    }

    private static let garbage = Array("GET / HTTP/1.1\r\nHost: flood\r\n\r\n".utf8)
    /// A HELLO frame (docs/PROTOCOL.md) of peer "dribbler".
    private static let hello: [UInt8] = {
        let name = Array("dribbler".utf8)
        let body: [UInt8] = [0x01, 0x50, 0x43, 0x4F, 0x4E, 0x00, 0x01] + Array(repeating: 0x42, count: 16)
        let full = body + [UInt8(name.count)] + name
        return withUnsafeBytes(of: UInt32(full.count).bigEndian) { Array($0) } + full
    }()

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    private static func raiseFileLimit(to needed: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(needed) else { return }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(needed))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    private static func connect(from source: String, port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func call(_ address: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_addr.s_addr = inet_addr(address)
            socketAddress.sin_port = UInt16(port).bigEndian
            return withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard call(source, port: 0, { bind(fd, $0, $1) }) == 0,
            call("127.0.0.1", port: port, { Glibc.connect(fd, $0, $1) }) == 0
        else {
            close(fd)
            return nil
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    private static func send(_ bytes: ArraySlice<UInt8>, on fd: Int32) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private static func runBlocking(_ plan: Plan) -> Report {
        raiseFileLimit(to: plan.count + 256)
        let pacing = nanoseconds(plan.pacing)
        let dribbleInterval = nanoseconds(plan.dribbleInterval)
        var flooders: [Flooder] = []
        var failed = 0
        let start = now()
        var nextConnect = start
        var lastConnect = start
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let time = now()
            // Every connect that is due (a few per wake-up: polling 1,000 sockets each millisecond
            // would cost this process, which shares the machine with the server, more than the flood).
            while flooders.count + failed < plan.count, now() >= nextConnect {
                let index = flooders.count + failed
                let behaviour = plan.behaviours[index % plan.behaviours.count]
                if let fd = connect(from: sourceAddress(index), port: plan.port) {
                    let openedAt = now()
                    if behaviour == .garbage { send(garbage[...], on: fd) }
                    flooders.append(
                        Flooder(fd: fd, behaviour: behaviour, openedAt: openedAt, nextDribble: openedAt)
                    )
                } else {
                    failed += 1
                }
                lastConnect = now()
                nextConnect += pacing
            }
            let allOpened = flooders.count + failed >= plan.count
            if allOpened
                && (flooders.allSatisfy { $0.closedAt != nil } || time > lastConnect + nanoseconds(plan.watchLimit))
            {
                break
            }
            // Dribble, then wait (at most 1 ms while still connecting) for closes.
            var polled: [pollfd] = []
            var indices: [Int] = []
            for index in flooders.indices where flooders[index].closedAt == nil {
                if flooders[index].behaviour == .dribble, time >= flooders[index].nextDribble,
                    flooders[index].dribbled < hello.count
                {
                    let at = flooders[index].dribbled
                    send(hello[at..<(at + 1)], on: flooders[index].fd)
                    flooders[index].dribbled += 1
                    flooders[index].nextDribble = time + dribbleInterval
                }
                polled.append(pollfd(fd: flooders[index].fd, events: Int16(POLLIN), revents: 0))
                indices.append(index)
            }
            let waitMilliseconds: Int32 = allOpened ? 10 : 5
            guard poll(&polled, nfds_t(polled.count), waitMilliseconds) > 0 else { continue }
            let seen = now()
            for (slot, entry) in polled.enumerated() where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress!, $0.count, 0) }
                if count > 0, flooders[indices[slot]].heardAt == nil { flooders[indices[slot]].heardAt = seen }
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                    flooders[indices[slot]].closedAt = seen
                }
            }
        }
        var lifetimes: [UInt64] = []
        var serverLifetimes: [UInt64] = []
        var byBehaviour: [Behaviour: [UInt64]] = [:]
        for flooder in flooders {
            close(flooder.fd)
            guard let closedAt = flooder.closedAt else { continue }
            lifetimes.append(closedAt - flooder.openedAt)
            let serverLifetime = closedAt - (flooder.heardAt ?? flooder.openedAt)
            serverLifetimes.append(serverLifetime)
            byBehaviour[flooder.behaviour, default: []].append(serverLifetime)
        }
        return Report(
            opened: flooders.count,
            failed: failed,
            closedByServer: lifetimes.count,
            stillOpen: flooders.count - lifetimes.count,
            lifetime: LatencySummary(nanoseconds: lifetimes),
            serverLifetime: LatencySummary(nanoseconds: serverLifetimes),
            serverLifetimeByBehaviour: Dictionary(
                uniqueKeysWithValues: byBehaviour.map { ($0.key.rawValue, LatencySummary(nanoseconds: $0.value)) }
            ),
            openingMilliseconds: Double(lastConnect - start) / 1e6
        )
    }
}
