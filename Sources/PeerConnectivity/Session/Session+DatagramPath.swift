import PeerConnectivityCore

extension Session {
    /// Where the UDP path to `peer` stands: whether its unreliable messages go by UDP, or on the connection
    /// until a probe is answered, or for good because the path was judged blocked (``DatagramPathReport``).
    ///
    /// - Parameter peer: a peer of the session.
    /// - Returns: `.pending` for a peer that is not connected.
    package func datagramPath(to peer: PeerID) -> DatagramPathReport {
        guard let connection = runtime.peers.withLock({ $0[peer]?.connection }) else { return .pending }
        return runtime.datagrams.pathReport(on: connection)
    }
}
