/// What peers say to each other: sent with `session.send(_:toPeers:)`, received from
/// `session.messages(of: ChatLine.self)`, as JSON.
struct ChatLine: Codable, Sendable {
    var text: String
}
