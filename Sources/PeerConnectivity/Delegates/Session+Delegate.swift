extension Session {
    /// The delegate, as `MCSession.delegate`: held weakly; its methods are called on the main actor
    /// (see ``SessionDelegate``).
    ///
    /// Setting it subscribes it to ``events`` at once, so it sees every event from then on (and, when
    /// it is the session's first subscriber, those from before). Setting `nil` ends the subscription;
    /// while the delegate set is released and no other is set, events go to no one.
    public var delegate: (any SessionDelegate)? {
        get { delegateAdapter.delegate }
        set { delegateAdapter.set(newValue, session: self) }
    }
}
