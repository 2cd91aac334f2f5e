import Metrics

/// What a session records about its links, as opposed to its connections (see ``PeerMetrics``).
package enum LinkMetrics {
    /// The session gave up a dropped link: the reconnection window ended, or the peer refused to resume.
    ///
    /// Rare, so the counter is looked up each time (from the factory bootstrapped now).
    package static func linkGivenUp() {
        Counter(label: PeerMetrics.linksGivenUp).increment()
    }
}
