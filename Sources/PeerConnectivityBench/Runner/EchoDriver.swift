import PeerConnectivity

/// Carries one phase's messages to the reflector and its echoes back into the phase's controller:
/// a PeerConnectivity session (``SessionEchoDriver``), or the raw baseline over TCP (``RawEchoDriver``) or
/// TLS (``TLSEchoDriver``).
protocol EchoDriver: Sendable {
    /// Sends the phase's messages as its controller says until the phase is finished; echoes that
    /// arrive meanwhile are accounted for in `controller`.
    ///
    /// - Throws: when the reflector goes away or a send fails.
    func run(_ controller: LoadController, size: Int) async throws

    /// Closes the connection.
    func close() async

    /// Where the UDP path to the reflector stands; nil for a driver without one (the raw baselines).
    func datagramPath() -> DatagramPathReport?
}

extension EchoDriver {
    /// None: the raw baselines have no UDP path.
    func datagramPath() -> DatagramPathReport? { nil }
}
