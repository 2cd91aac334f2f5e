import NIOCore
import PeerConnectivity

extension Browser.Configuration {
    /// The event loop group the browser's timers (retries of failed resolves) run on; `nil`, the default,
    /// takes NIO's shared group (`MultiThreadedEventLoopGroup.singleton`). The group must outlive the
    /// browser; give the sessions and the advertiser of the same peer the same group.
    public var eventLoopGroup: (any EventLoopGroup)? {
        get { ioGroup }
        set { ioGroup = newValue }
    }
}
