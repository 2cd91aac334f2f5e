import NIOCore
import PeerConnectivity

extension Session.Configuration {
    /// The event loop group the session's I/O runs on: its connections, its datagrams, its
    /// ``PeerConnectivity/Session/taskExecutor``. `nil`, the default, takes NIO's shared group
    /// (`MultiThreadedEventLoopGroup.singleton`).
    ///
    /// An app that already runs SwiftNIO (a server, a client of another protocol) passes its own group, so
    /// that the peers' I/O shares its threads. The group must outlive the session. Give the advertiser of
    /// the same peer the same group: the session and the advertiser then run on one of its loops, and an
    /// accepted invitation's connection needs no hop between threads.
    public var eventLoopGroup: (any EventLoopGroup)? {
        get { ioGroup }
        set { ioGroup = newValue }
    }
}
