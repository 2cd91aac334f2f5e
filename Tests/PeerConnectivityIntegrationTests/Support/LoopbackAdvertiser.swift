import PeerConnectivity

/// A started advertiser on 127.0.0.1 without DNS-SD, for tests that connect directly. Tests that
/// speak the plain handshake from a raw socket pass `encryption: .none`.
///
/// Its handshake timeout is 30 s unless `configure` sets one: the 5 s default, from accept to INVITE, ran out
/// before a TLS handshake was through with the machine busy (the suite in parallel on two CPUs, and builds).
func loopbackAdvertiser(
    _ name: String,
    encryption: EncryptionPreference = .default,
    configure: (inout Advertiser.Configuration) -> Void = { _ in }
) async throws -> Advertiser {
    var configuration = Advertiser.Configuration.default
    configuration.host = "127.0.0.1"
    configuration.publishesService = false
    configuration.handshakeTimeout = .seconds(30)
    configure(&configuration)
    let advertiser = try Advertiser(
        peer: try PeerID(displayName: name),
        serviceType: "loopback",
        encryptionPreference: encryption,
        configuration: configuration
    )
    try await advertiser.start()
    return advertiser
}

/// Accepts every invitation `advertiser` receives into `session`, until the advertiser stops.
func acceptAll(_ advertiser: Advertiser, into session: Session) -> Task<Void, Never> {
    Task {
        for await invitation in advertiser.invitations {
            try? await invitation.accept(into: session)
        }
    }
}
