import Foundation
import Logging
import NIOCore
import PeerConnectivityCore

extension Session {
    /// Limits and timers of a session.
    public struct Configuration: Sendable {
        /// The most peers the session holds, connected or connecting (MPC's limit: 8).
        public var maximumPeers: Int = 8
        /// The largest data message sent or accepted, in bytes (default 16 MiB). The session announces it
        /// to each peer when the connection is made, and a peer's `send` of a larger message fails there
        /// with ``SessionError/messageTooLargeForPeer(_:size:limit:)``; a peer that sends one anyway has it
        /// refused. Messages over 1 MiB travel in chunks (see ``Session/send(_:toPeers:mode:)-(Data,_,_)``), so no
        /// frame on the wire is larger than 1 MiB whatever this limit.
        public var maximumMessageLength: Int = WireProtocol.defaultMaximumMessageLength
        /// The most memory, in bytes, that large messages being received may hold in this session (default
        /// 64 MiB). A reliable message over 1 MiB arrives in chunks, gathered into one buffer of its announced
        /// size from its first chunk until it is whole; each counts at that size from the moment it is
        /// announced until it is delivered or dropped. One that would take the session over this budget, or the
        /// process over ``processLargeMessageBudget``, is refused when it is announced: the sender's `send`
        /// throws ``SessionError/messageNotDelivered(_:detail:)`` saying the peer was busy, and may be tried
        /// again. Either budget takes at least one message of ``maximumMessageLength``, whatever it says.
        public var largeMessageBudget: Int = 64 << 20
        /// The most memory, in bytes, that large messages being received may hold in all the sessions of the
        /// process together, as this session counts them (default 256 MiB); see ``largeMessageBudget``.
        public var processLargeMessageBudget: Int = 256 << 20
        /// How often a keepalive frame is sent to each connected peer.
        public var keepaliveInterval: Duration = .seconds(1)
        /// A peer from which nothing arrives for this long is reported `notConnected` with
        /// `DisconnectReason.livenessTimeout` (its process died or its network vanished).
        public var livenessTimeout: Duration = .seconds(5)
        /// Bytes of received messages not yet taken from ``Session/events`` above which the session
        /// stops reading from the network (the peers' sends then wait): nothing is dropped. A message
        /// larger than this limit is still delivered whole: it counts once delivered, and reading waits
        /// until the application has taken it (a message being gathered from its chunks does not count).
        public var receiveBufferLimit: Int = 8 << 20
        /// Where received resources are put. Each arrives first as a hidden partial file here, and is
        /// moved to its final name (derived from the sender's name, made safe, never overwriting a
        /// file) only once its block digests and their root match. Created when needed.
        public var resourceDirectory: URL = FileManager.default.temporaryDirectory
            .appendingPathComponent("PeerConnectivity-resources", isDirectory: true)
        /// The most bytes each of the session's connections keeps unsent in the kernel (`TCP_NOTSENT_LOWAT`,
        /// and streams and resources wait while the kernel holds that much, as the option alone does not
        /// bound it) and in its own socket buffer, and the most one stream queues ahead of the socket (4 KiB
        /// at least); nil (the default) keeps the kernel's send buffer, 4 MiB and 512 KiB. Set it, e.g. to
        /// 16 KiB, when small messages must not wait behind a transfer's megabytes on a slow link: a message
        /// sent during a transfer then waits for the link's queue, not the sender's. The price is more
        /// wake-ups per byte, so less throughput where the CPU is the bottleneck.
        public var notSentLowWatermark: Int?
        /// Whether streams and resources also wait while the kernel holds ``notSentLowWatermark`` unsent, as
        /// it does not bound them by itself; only a benchmark's load turns it off.
        package var gatesUnsentBytes = true
        /// The TCP congestion control of the session's connections, by the kernel's name for it (`cubic`,
        /// `bbr`, `reno`: Linux's `TCP_CONGESTION`); nil (the default) keeps the system's. A name the kernel
        /// does not offer, or does not allow this process, closes no connection: the system's runs, a warning
        /// is logged, and ``LinkReport/congestionControl`` says which one runs. Loss-based ones (`cubic`)
        /// back off as a shallow buffer drops; `bbr` keeps a bloated buffer emptier.
        public var congestionControl: String?
        /// The flow-control window of a stream being received: how many bytes the writer may send
        /// that the application has not read yet (the most a stalled reader holds in memory).
        public var streamWindow: Int = 512 << 10
        /// The flow-control window of a resource being received: how many bytes the sender may have
        /// in flight before the receiver has written them to disk and checked their block; at least two
        /// blocks (2 MiB) are granted whatever this says. It bounds the memory a resource being received
        /// can hold, and a link's throughput to about the window a round trip (16 MiB over 40 ms:
        /// 3.3 Gbit/s). The default, 16 MiB, moved a 1 GiB file about a quarter faster than 4 MiB over
        /// loopback on a 2-core machine, with the receiver's peak memory about 17 MiB higher.
        public var resourceWindow: Int = 16 << 20
        /// The largest resource accepted from a peer, in bytes; `nil` for no maximum but the free space
        /// of ``resourceDirectory``. A larger one is refused when it is offered, before anything is
        /// written: the sender's transfer fails with ``TransferError/refused(peer:name:detail:)``.
        public var maximumResourceSize: UInt64?
        /// How long an interrupted resource's checked blocks stay in ``resourceDirectory`` (a hidden
        /// partial file and a small record beside it) for the same sender to resume it: when the same
        /// peer offers a resource of the same name and length again, only the blocks missing cross.
        /// Kept across a restart of this process. Zero keeps nothing.
        public var partialResourceLifetime: Duration = .seconds(24 * 3600)
        /// The most bytes of interrupted resources and folders kept in ``resourceDirectory`` for
        /// resuming; past it the oldest go first.
        public var maximumPartialResourceBytes: UInt64 = 16 << 30
        /// How many resources may arrive at once (each holds a file open); more are refused, and their
        /// senders may try again. All sessions of a process hold at most a quarter of its descriptor limit.
        public var maximumIncomingResources = 16
        /// Whether a folder (``Session/sendResource(at:withName:toPeer:)`` of a directory) is sent as one
        /// resource, its files one after the other on one channel, to a peer that reads that (every peer
        /// of this version). Off, or to an older peer, each file is a resource of its own, and the
        /// receiver sees one pair of events per file.
        public var sendsFoldersWhole = true
        /// The most files a folder received whole may hold; a folder stream with more ends with a failure
        /// at the first file over, before its file is made, and nothing of the folder is left in
        /// ``resourceDirectory``. Each folder is also held, file by file, to the inodes and bytes free
        /// there when it started (a file counted at its length rounded up to 4 KiB).
        public var maximumFolderEntries = 1_000_000
        /// Whether the session keeps itself a full mesh, as MPC: a peer accepted into a session that
        /// holds others is connected to every member automatically (each session listens on a TCP port
        /// of its own for that). Off, the session holds only the peers it invited or accepted.
        public var joinsMesh = true
        /// The UDP ports the session's socket for unreliable messages may take, the first free one, so
        /// that a firewall can let them in; `nil` (the default) for an ephemeral port. When none is free,
        /// unreliable messages travel on the connections instead.
        public var datagramPorts: ClosedRange<Int>?
        /// The IP family of the connections the session dials (invitations, the mesh, reconnection): both
        /// (the default), or `.ipv4` or `.ipv6` only, as iperf3's `-4` and
        /// `-6`. A peer with no address of the family cannot be invited: the invitation fails as
        /// `.connectionFailed`, saying so.
        public var dialFamily: AddressFamily = .any
        /// The local IP address the session's dialled connections and its UDP socket are bound to, as
        /// iperf3's `-B` (which interface, on a host with several); nil (the default) lets the system choose.
        /// Its family limits the peers' addresses tried to that family. An address this host does not have
        /// fails every invitation as `.connectionFailed`. It does not change where an advertiser listens
        /// (``Advertiser/Configuration/host``).
        public var localAddress: String?
        /// Whether and how the session re-establishes a link that dropped (opt-in; `nil`, the default,
        /// reports the peer `notConnected` at once). See ``Session/Reconnection``.
        public var reconnection: Reconnection?
        /// Answers or takes messages where they are read, before they reach ``Session/events`` (an echo
        /// server's or a request/response protocol's round trip without a task in it); `nil` (the default)
        /// delivers every message. See ``MessageResponder`` for its rules.
        public var messageResponder: MessageResponder?
        /// How the session decides on a peer's certificate on an encrypted connection (after the
        /// binding rule): accept every bound certificate (default), pin keys on first use, or ask the app.
        public var certificatePolicy: CertificatePolicy = .acceptBound
        /// Where the session logs connections and the reasons they close.
        public var logger = Logger(label: "PeerConnectivity.Session")
        /// The event loop group of the session's I/O; nil for NIO's shared group. Set through
        /// `eventLoopGroup` of the `PeerConnectivityNIO` module, which keeps NIO's types out of this one.
        package var ioGroup: (any EventLoopGroup)?
        /// How long a connection to the session's own listener (a member introduced, a link resumed) has from its
        /// accept to its handshake's end. A test on a loaded machine sets a longer one, where a TLS handshake took
        /// seconds and this timer, not the one the test is about, ended the connection.
        package var handshakeTimeout: Duration = .seconds(5)
        /// How long a peer whose connection the other side closed as a duplicate (both invited at once) stays
        /// `connecting`, waiting for the connection that replaces it, before it counts as gone. The replacing
        /// connection is still in its handshake; a test on a loaded machine sets a longer wait, where that
        /// handshake took more than the default's 5 s.
        package var replacementGracePeriod: Duration = .seconds(5)

        /// The defaults: 8 peers, 16 MiB messages, keepalive every 1 s, liveness timeout 5 s.
        public static var `default`: Configuration { Configuration() }

        /// Makes the default configuration; change its properties as needed.
        public init() {}
    }
}
