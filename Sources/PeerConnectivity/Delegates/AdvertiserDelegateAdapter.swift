import Foundation
import Synchronization

/// Drives an ``AdvertiserDelegate`` from ``Advertiser/invitations``, which it consumes from the first
/// time a delegate is set until the advertiser stops.
final class AdvertiserDelegateAdapter: Sendable {
    private struct State {
        weak var delegate: (any AdvertiserDelegate)?
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())

    var delegate: (any AdvertiserDelegate)? {
        state.withLock { $0.delegate }
    }

    /// Sets the delegate; starts taking invitations for the first one.
    func set(_ delegate: (any AdvertiserDelegate)?, advertiser: Advertiser) {
        state.withLock { state in
            state.delegate = delegate
            if delegate != nil, state.task == nil {
                state.task = answer(advertiser)
            }
        }
    }

    /// Offers each invitation to whichever delegate is set when it comes; declines it without one.
    /// Never cancelled: ending an `AsyncStream`'s iteration would end the stream for good.
    private func answer(_ advertiser: Advertiser) -> Task<Void, Never> {
        let invitations = advertiser.invitations
        return Task { [weak self, weak advertiser] in
            for await invitation in invitations {
                guard let advertiser, let delegate = self?.delegate else {
                    invitation.decline()
                    continue
                }
                await Self.offer(invitation, to: delegate, from: advertiser)
            }
        }
    }

    @MainActor
    private static func offer(
        _ invitation: Invitation,
        to delegate: any AdvertiserDelegate,
        from advertiser: Advertiser
    ) {
        let answered = OnceFlag()
        delegate.advertiser(
            advertiser,
            didReceiveInvitationFromPeer: invitation.peer,
            withContext: invitation.context.isEmpty ? nil : invitation.context
        ) { accept, session in
            guard answered.claim() else { return }
            guard accept, let session else {
                invitation.decline()
                return
            }
            Task {
                do {
                    try await invitation.accept(into: session)
                } catch {
                    await delegate.advertiser(advertiser, didNotAcceptInvitationFromPeer: invitation.peer, error: error)
                }
            }
        }
    }
}

/// True for the first caller of ``claim()`` only.
final class OnceFlag: Sendable {
    private let done = Atomic<Bool>(false)

    /// Whether this is the first call.
    func claim() -> Bool {
        !done.exchange(true, ordering: .acquiringAndReleasing)
    }
}
