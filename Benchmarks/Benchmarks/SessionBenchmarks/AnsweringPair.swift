import BenchmarkSupport
import Foundation
import PeerConnectivity
import PeerConnectivityBench
import Synchronization

/// The tools' reflector, in-process, and a client session whose messages are answered where it reads them
/// (``MessageResponder``): each echo that comes back is answered at once with the next message, on the
/// client's event loop, as the reflector answers each message on its own. Both ends of the round trip run
/// where the session reads, with no task between an echo and the next message: the library's round trip
/// for a request/response protocol written with a responder.
final class AnsweringPair {
    /// The accepting side.
    let host: InProcessReflector
    /// The dialing side.
    let client: Session
    /// The reflector's peer, as the client knows it.
    let peer: PeerID
    private let volley: Volley

    /// Starts a reflector, connects a client to it, plain, and reads its hello.
    ///
    /// - Throws: when the reflector cannot listen, the client cannot connect or no hello comes.
    init() async throws {
        host = try await InProcessReflector(encryption: .none)
        let volley = Volley()
        self.volley = volley
        var configuration = Session.Configuration.default
        configuration.joinsMesh = false
        configuration.messageResponder = MessageResponder { data, _, _ in volley.answer(data) }
        client = Session(
            peer: try PeerID(displayName: "bench-client"),
            encryptionPreference: .none,
            configuration: configuration
        )
        var events = client.events.makeAsyncIterator()
        peer = try await client.connectPeer(host: "127.0.0.1", port: host.port, timeout: .seconds(10))
        // The reflector's hello, before any round trip: the responder answers nothing until one starts.
        while let event = await events.next() {
            if case .dataReceived(let data, _, _) = event, data.starts(with: ReflectorHello.prefix) { return }
        }
        throw BenchmarkFailure("the client session ended before the reflector's hello")
    }

    /// Sends `message` and answers its echo with itself, until `count` echoes have come back.
    ///
    /// - Parameters:
    ///   - message: a message from ``LoopbackPair/message(size:)``.
    ///   - count: round trips.
    /// - Throws: ``BenchmarkFailure`` when an echo differs or the reflector leaves.
    func roundTrips(_ message: Data, count: Int) async throws {
        let (client, peer, volley) = (self.client, self.peer, self.volley)
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            volley.start(message, count: count, done: done)
            Task {
                do {
                    try await client.send(message, toPeers: [peer])
                } catch {
                    volley.fail(error)
                }
            }
        }
    }

    /// Disconnects the client and stops the reflector.
    func stop() async {
        volley.fail(BenchmarkFailure("stopped"))
        await client.disconnect()
        await host.stop()
    }
}

/// The round trips of one iteration: what is left, what must come back, and whom to tell when they are done.
private final class Volley: Sendable {
    private struct State {
        var message = Data()
        var left = 0
        var done: CheckedContinuation<Void, any Error>?
    }

    private let state = Mutex(State())

    func start(_ message: Data, count: Int, done: CheckedContinuation<Void, any Error>) {
        state.withLock { $0 = State(message: message, left: count, done: done) }
    }

    /// The responder's answer to a message: the next message while round trips are left; any other message
    /// (the reflector's hello) goes on to the events.
    func answer(_ data: Data) -> MessageResponse {
        let (response, finished): (MessageResponse, CheckedContinuation<Void, any Error>?) = state.withLock {
            guard $0.left > 0 else { return (.deliver, nil) }
            guard data == $0.message else {
                $0.left = 0
                let done = $0.done
                $0.done = nil
                done?.resume(throwing: BenchmarkFailure("an echo differs"))
                return (.consumed, nil)
            }
            $0.left -= 1
            guard $0.left == 0 else { return (.reply($0.message), nil) }
            let done = $0.done
            $0.done = nil
            return (.consumed, done)
        }
        finished?.resume()
        return response
    }

    func fail(_ error: any Error) {
        let done = state.withLock {
            $0.left = 0
            let done = $0.done
            $0.done = nil
            return done
        }
        done?.resume(throwing: error)
    }
}
