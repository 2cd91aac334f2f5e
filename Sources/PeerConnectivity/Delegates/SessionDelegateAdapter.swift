import Foundation
import Synchronization

/// Drives a ``SessionDelegate`` from a subscription to the session's events: the delegate layer sits
/// on top of ``Session/events``, as any application would.
final class SessionDelegateAdapter: Sendable {
    private struct State {
        weak var delegate: (any SessionDelegate)?
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())

    var delegate: (any SessionDelegate)? {
        state.withLock { $0.delegate }
    }

    /// Sets the delegate; subscribes for the first one, unsubscribes for `nil`.
    func set(_ delegate: (any SessionDelegate)?, session: Session) {
        let ended = state.withLock { state -> Task<Void, Never>? in
            state.delegate = delegate
            guard delegate != nil else {
                defer { state.task = nil }
                return state.task
            }
            if state.task == nil {
                state.task = follow(session)
            }
            return nil
        }
        ended?.cancel()
    }

    /// Subscribes now, and delivers each event to whichever delegate is set when it comes.
    private func follow(_ session: Session) -> Task<Void, Never> {
        let events = session.events.makeAsyncIterator()
        return Task { [weak self, weak session] in
            var events = events
            while let event = await events.next() {
                guard let session, let delegate = self?.delegate else { continue }
                await Self.deliver(event, to: delegate, from: session)
            }
        }
    }

    @MainActor
    private static func deliver(_ event: SessionEvent, to delegate: any SessionDelegate, from session: Session) {
        switch event {
        case .peerStateChanged(let peer, let state, let reason):
            delegate.session(session, peer: peer, didChange: state, reason: reason)
        case .dataReceived(let data, let peer, _):
            delegate.session(session, didReceive: data, fromPeer: peer)
        case .streamReceived(let stream):
            delegate.session(session, didReceive: stream, withName: stream.name, fromPeer: stream.peer)
        case .startedReceivingResource(let name, let peer, let progress):
            delegate.session(session, didStartReceivingResourceWithName: name, fromPeer: peer, with: progress)
        case .finishedReceivingResource(let name, let peer, let result):
            switch result {
            case .success(let url):
                delegate.session(
                    session,
                    didFinishReceivingResourceWithName: name,
                    fromPeer: peer,
                    at: url,
                    withError: nil
                )
            case .failure(let error):
                delegate.session(
                    session,
                    didFinishReceivingResourceWithName: name,
                    fromPeer: peer,
                    at: nil,
                    withError: error
                )
            }
        }
    }
}
