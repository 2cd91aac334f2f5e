extension Advertiser {
    /// The delegate, as `MCNearbyServiceAdvertiser.delegate`: held weakly; its methods are called on
    /// the main actor (see ``AdvertiserDelegate``).
    ///
    /// Once a delegate has been set, every invitation goes to it (``invitations`` has one consumer:
    /// do not iterate it as well); while none is set, invitations are declined.
    public var delegate: (any AdvertiserDelegate)? {
        get { delegateAdapter.delegate }
        set { delegateAdapter.set(newValue, advertiser: self) }
    }

    /// Starts advertising, as `MCNearbyServiceAdvertiser.startAdvertisingPeer()`: returns at once;
    /// a failure goes to the delegate's `advertiser(_:didNotStartAdvertisingPeer:)`. New code awaits
    /// ``start()`` instead, which throws.
    public func startAdvertisingPeer() {
        Task {
            do {
                try await start()
            } catch {
                if let delegate { await delegate.advertiser(self, didNotStartAdvertisingPeer: error) }
            }
        }
    }

    /// Stops advertising, as `MCNearbyServiceAdvertiser.stopAdvertisingPeer()`: returns at once
    /// (``stop()`` returns once it has stopped). Unlike MPC's, an advertiser does not start again.
    public func stopAdvertisingPeer() {
        Task { await stop() }
    }
}
