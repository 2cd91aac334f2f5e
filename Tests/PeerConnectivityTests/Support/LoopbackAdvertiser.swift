import PeerConnectivity

/// A started advertiser on 127.0.0.1 without DNS-SD, for tests that connect directly.
func loopbackAdvertiser(
    _ name: String,
    configure: (inout Advertiser.Configuration) -> Void = { _ in }
) async throws -> Advertiser {
    var configuration = Advertiser.Configuration.default
    configuration.host = "127.0.0.1"
    configuration.publishesService = false
    configure(&configuration)
    let advertiser = try Advertiser(
        peer: try PeerID(displayName: name),
        serviceType: "loopback",
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
