import Synchronization

/// Drives a ``BrowserDelegate`` from a subscription to ``Browser/events``.
final class BrowserDelegateAdapter: Sendable {
    private struct State {
        weak var delegate: (any BrowserDelegate)?
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())

    var delegate: (any BrowserDelegate)? {
        state.withLock { $0.delegate }
    }

    /// Sets the delegate: a new one gets a subscription of its own (which starts with the peers found
    /// now), `nil` none.
    func set(_ delegate: (any BrowserDelegate)?, browser: Browser) {
        let ended = state.withLock { state -> Task<Void, Never>? in
            guard delegate !== state.delegate || state.task == nil else { return nil }
            let ended = state.task
            state.delegate = delegate
            state.task = delegate.map { follow(browser, to: $0) }
            return ended
        }
        ended?.cancel()
    }

    /// Subscribes now, and delivers each event to `delegate` while it lives.
    private func follow(_ browser: Browser, to delegate: any BrowserDelegate) -> Task<Void, Never> {
        let events = browser.events.makeAsyncIterator()
        return Task { [weak browser, weak delegate] in
            var events = events
            do {
                while let event = try await events.next() {
                    guard let browser, let delegate else { return }
                    await Self.deliver(event, to: delegate, from: browser)
                }
            } catch {
                guard let browser, let delegate else { return }
                await delegate.browser(browser, didNotStartBrowsingForPeers: error)
            }
        }
    }

    @MainActor
    private static func deliver(_ event: BrowserEvent, to delegate: any BrowserDelegate, from browser: Browser) {
        switch event {
        case .found(let peer, let info):
            delegate.browser(browser, foundPeer: peer, withDiscoveryInfo: info.isEmpty ? nil : info)
        case .lost(let peer):
            delegate.browser(browser, lostPeer: peer)
        }
    }
}
