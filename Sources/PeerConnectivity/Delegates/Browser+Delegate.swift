extension Browser {
    /// The delegate, as `MCNearbyServiceBrowser.delegate`: held weakly; its methods are called on the
    /// main actor (see ``BrowserDelegate``).
    ///
    /// Setting it subscribes it to ``events`` at once (starting with the peers found now); setting
    /// `nil` ends the subscription.
    public var delegate: (any BrowserDelegate)? {
        get { delegateAdapter.delegate }
        set { delegateAdapter.set(newValue, browser: self) }
    }

    /// Starts browsing, as `MCNearbyServiceBrowser.startBrowsingForPeers()`: a failure goes to the
    /// delegate's `browser(_:didNotStartBrowsingForPeers:)`. New code calls ``start()``, which throws.
    public func startBrowsingForPeers() {
        do {
            try start()
        } catch {
            Task {
                if let delegate { await delegate.browser(self, didNotStartBrowsingForPeers: error) }
            }
        }
    }

    /// Stops browsing, as `MCNearbyServiceBrowser.stopBrowsingForPeers()`. Unlike MPC's, a browser
    /// does not start again.
    public func stopBrowsingForPeers() {
        stop()
    }
}
