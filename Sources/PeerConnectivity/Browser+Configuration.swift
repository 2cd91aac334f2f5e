import Logging

extension Browser {
    /// Timers of a browser.
    public struct Configuration: Sendable {
        /// How long resolving a found service (its TXT record, host and port) may take.
        public var resolveTimeout: Duration = .seconds(5)
        /// Where the browser logs services it ignores (malformed TXT) or cannot resolve.
        public var logger = Logger(label: "PeerConnectivity.Browser")

        /// The defaults: resolve timeout 5 s.
        public static var `default`: Configuration { Configuration() }

        /// Makes the default configuration; change its properties as needed.
        public init() {}
    }
}
