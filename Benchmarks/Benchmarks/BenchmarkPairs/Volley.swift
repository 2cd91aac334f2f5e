import Foundation
import PeerConnectivity
import Synchronization

/// Round trips answered where the client's session reads (its ``MessageResponder``): each echo that comes
/// back is answered at once with the next message, on the client's event loop, as the reflector answers each
/// message on its own, so no task is between an echo and the next send. Outside a volley every message goes
/// on to the session's events (the reflector's hello).
package final class Volley: Sendable {
    private struct State {
        var message = Data()
        var left = 0
        var done: CheckedContinuation<Void, any Error>?

        /// Ends the volley: nothing more is answered; whom to tell.
        mutating func end() -> CheckedContinuation<Void, any Error>? {
            left = 0
            defer { done = nil }
            return done
        }
    }

    private let state = Mutex(State())

    /// A volley not yet started: every message goes on to the session's events.
    package init() {}

    /// The responder to give the client's session.
    package var responder: MessageResponder {
        MessageResponder { [self] data, _, _ in answer(data) }
    }

    /// Starts a volley of `count` round trips of `message`; `done` is resumed when the last echo has come
    /// back, or with the failure that ended it. The caller sends the first message.
    package func start(_ message: Data, count: Int, done: CheckedContinuation<Void, any Error>) {
        state.withLock { $0 = State(message: message, left: count, done: done) }
    }

    /// Ends the volley under way, if any, with `error`.
    package func fail(_ error: any Error) {
        state.withLock { $0.end() }?.resume(throwing: error)
    }

    private func answer(_ data: Data) -> MessageResponse {
        let (response, done, result) = state.withLock {
            state -> (MessageResponse, CheckedContinuation<Void, any Error>?, Result<Void, any Error>) in
            guard state.left > 0 else { return (.deliver, nil, .success(())) }
            guard data == state.message else {
                return (.consumed, state.end(), .failure(BenchmarkFailure("an echo differs")))
            }
            state.left -= 1
            return state.left > 0 ? (.reply(state.message), nil, .success(())) : (.consumed, state.end(), .success(()))
        }
        done?.resume(with: result)
        return response
    }
}
