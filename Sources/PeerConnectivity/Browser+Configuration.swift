import Logging
import NIOCore

extension Browser {
    /// Timers of a browser.
    public struct Configuration: Sendable {
        /// How long resolving a found service (its TXT record, host and port) may take. A resolve that
        /// fails or times out is tried again while the service is present: after 0.5 s, then after twice
        /// as long each time up to 8 s (less up to a quarter, at random).
        public var resolveTimeout: Duration = .seconds(5)
        /// Where the browser logs services it ignores (malformed TXT) or cannot resolve: each failed
        /// resolve and its retry at debug, a service still unresolved after 4 attempts at warning.
        public var logger = Logger(label: "PeerConnectivity.Browser")
        /// The event loop group of the browser's retry timers; nil for NIO's shared group. Set through
        /// `eventLoopGroup` of the `PeerConnectivityNIO` module.
        package var ioGroup: (any EventLoopGroup)?

        /// The defaults: resolve timeout 5 s.
        public static var `default`: Configuration { Configuration() }

        /// Makes the default configuration; change its properties as needed.
        public init() {}
    }
}
