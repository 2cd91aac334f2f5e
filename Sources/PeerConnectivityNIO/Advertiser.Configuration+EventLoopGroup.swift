import NIOCore
import PeerConnectivity

extension Advertiser.Configuration {
    /// The event loop group the advertiser's listener and its incoming connections run on; `nil`, the
    /// default, takes NIO's shared group (`MultiThreadedEventLoopGroup.singleton`). The group must outlive
    /// the advertiser; give the sessions of the same peer the same group (see
    /// `Session.Configuration.eventLoopGroup`).
    public var eventLoopGroup: (any EventLoopGroup)? {
        get { ioGroup }
        set { ioGroup = newValue }
    }
}
