import Foundation

extension Session {
    /// Sends a value of any `Encodable` type to connected peers, where ``messages(of:)`` of its type
    /// receives it, as `GroupSessionMessenger.send(_:to:)`.
    ///
    /// The value travels as JSON after a short header naming its type (`String(describing:)`, without
    /// the module: "ChatLine"), so several types can share a session and each sequence gets its own.
    /// A `Data` value goes through `send(_ data: Data, toPeers:mode:)` unchanged instead, as a raw message.
    ///
    /// ```swift
    /// struct ChatLine: Codable, Sendable { var text: String }
    /// try await session.send(ChatLine(text: "hello"), toPeers: session.connectedPeers)
    /// ```
    ///
    /// - Parameters:
    ///   - message: the value.
    ///   - peers: the targets; each must be connected.
    ///   - mode: ``SendMode/reliable`` or ``SendMode/unreliable``.
    /// - Throws: `EncodingError` when the value does not encode; otherwise as the `Data` version:
    ///   ``SessionError/messageTooLarge(size:limit:)`` (the limit counts the header and the JSON),
    ///   ``SessionError/peerNotConnected(_:reason:)``, ``SessionError/noPeers``.
    public func send<Message: Encodable>(
        _ message: Message,
        toPeers peers: [PeerID],
        mode: SendMode = .reliable
    ) async throws {
        let data = try MessageEnvelope.encode(message)
        try await send(data, toPeers: peers, mode: mode)
    }

    /// The values of one type that peers send (`send(_:toPeers:mode:)` with a `Codable` value), each with
    /// the peer it came from, as `GroupSessionMessenger.messages(of:)`.
    ///
    /// ```swift
    /// for try await (line, peer) in session.messages(of: ChatLine.self) {
    ///     print("\(peer.displayName): \(line.text)")
    /// }
    /// ```
    ///
    /// Raw messages and messages of other types are skipped. A message that names this type but does
    /// not decode as it (a peer with another version of the type, or a misbehaving one) is thrown as
    /// ``MessageDecodingError``, naming the peer and the type; a `for try await` loop ends there, but
    /// the iterator goes on with the next message when called again, so a loop that must outlive a bad
    /// peer calls `next()` itself and catches. Each iterator is a subscriber of ``events``, with what
    /// that implies: it sees the messages from when it was made (the first subscriber of the session
    /// also those from before), and while it falls more than ``Configuration/receiveBufferLimit`` bytes
    /// behind, the session stops reading. Keep it running, or drop it.
    ///
    /// - Parameter type: the type of the messages.
    /// - Returns: an `AsyncSequence` of `(message, from: peer)`.
    public func messages<Message: Decodable & Sendable>(of type: Message.Type) -> Messages<Message> {
        Messages(runtime: runtime)
    }

    /// The messages of one type, from ``messages(of:)``: an `AsyncSequence` of `(message, from: peer)`.
    public struct Messages<Message: Decodable & Sendable>: AsyncSequence, Sendable {
        /// A message and the peer that sent it.
        public typealias Element = (Message, from: PeerID)
        /// What a message that does not decode throws.
        public typealias Failure = MessageDecodingError

        let runtime: SessionRuntime

        /// Makes an iterator: a new subscriber of the session's events, which takes only messages.
        public func makeAsyncIterator() -> Iterator {
            Iterator(runtime: runtime)
        }

        /// Iterates the messages of one type. `Sendable`, so it can be made where the subscription must
        /// start and handed to the task that reads it.
        public struct Iterator: AsyncIteratorProtocol, Sendable {
            private var events: Session.Events.Iterator
            private let typeName = MessageEnvelope.typeName(of: Message.self)

            init(runtime: SessionRuntime) {
                let subscription = Session.Events.Subscription(runtime: runtime) { event in
                    if case .dataReceived = event { return true }
                    return false
                }
                self.events = Session.Events.Iterator(subscription: subscription)
            }

            /// The next message of the type, or `nil` once the session is gone or the task is cancelled.
            ///
            /// - Throws: ``MessageDecodingError`` for a message of this type that does not decode; the
            ///   next call goes on with the message after it.
            public mutating func next() async throws(MessageDecodingError) -> (Message, from: PeerID)? {
                while let event = await events.next() {
                    guard case .dataReceived(let data, let peer, _) = event,
                        let (name, body) = MessageEnvelope.open(data), name == typeName
                    else { continue }
                    do {
                        return (try JSONDecoder().decode(Message.self, from: body), from: peer)
                    } catch {
                        throw .undecodable(typeName, from: peer, detail: Self.describe(error))
                    }
                }
                return nil
            }

            /// A short account of a decoding error: what is wrong, and where.
            private static func describe(_ error: any Error) -> String {
                guard let error = error as? DecodingError else { return "\(error)" }
                let context: DecodingError.Context
                switch error {
                case .keyNotFound(let key, let keyContext):
                    return "no value for \"\(key.stringValue)\"" + location(keyContext.codingPath)
                case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
                    context = c
                @unknown default:
                    return "\(error)"
                }
                return context.debugDescription + location(context.codingPath)
            }

            private static func location(_ path: [any CodingKey]) -> String {
                path.isEmpty ? "" : " at " + path.map(\.stringValue).joined(separator: ".")
            }
        }
    }
}
