import Foundation
import Testing

@testable import PeerConnectivity

/// Browser events for any number of subscribers, through the real avahi-daemon.
@Suite("Browser events", .avahiTimeLimit, .avahi)
struct BrowserEventsTests {
    /// Collects a browser's events from one iterator, in the background.
    final class Collector: Sendable {
        let events = Locked<[BrowserEvent]>([])
        let ended = Locked(false)
        private let task: Task<Void, Never>

        init(_ browser: Browser) {
            let events = self.events
            let ended = self.ended
            let iterator = browser.events.makeAsyncIterator()
            task = Task {
                var iterator = iterator
                while let event = try? await iterator.next() { events.withLock { $0.append(event) } }
                ended.withLock { $0 = true }
            }
        }

        deinit {
            task.cancel()
        }
    }

    @Test("every iterator sees found and lost; one made late starts with the peers found; stop ends them all")
    func subscribers() async throws {
        let service = uniqueServiceType("subs")
        let me = try PeerID(displayName: "subscriber")
        let other = try Advertiser(
            peer: try PeerID(displayName: "other"),
            discoveryInfo: ["k": "v"],
            serviceType: service
        )
        let browser = try Browser(peer: me, serviceType: service)
        let early = [Collector(browser), Collector(browser)]
        try browser.start()
        try await other.start()
        let found = BrowserEvent.found(other.peer, discoveryInfo: ["k": "v"])
        let deadline = ContinuousClock.now + waitLimit
        while ContinuousClock.now < deadline, early.contains(where: { $0.events.value.isEmpty }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(early.map(\.events.value) == [[found], [found]])

        let late = Collector(browser)
        try await eventually { !late.events.value.isEmpty }
        #expect(late.events.value == [found], "starts with the peers found now")

        await other.stop()
        while ContinuousClock.now < deadline + .seconds(5), late.events.value.count < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        for collector in early + [late] {
            #expect(collector.events.value == [found, .lost(other.peer)])
        }
        browser.stop()
        try await eventually { (early + [late]).allSatisfy { $0.ended.value } }
        var afterStop = browser.events.makeAsyncIterator()
        #expect(try await afterStop.next() == nil)
    }

    @Test("when browsing fails, every iterator throws the error once, then ends; a model shows it")
    @MainActor
    func failure() async throws {
        let me = try PeerID(displayName: "failing")
        let browser = try Browser(peer: me, serviceType: uniqueServiceType("fail"))
        let model = SessionModel(session: Session(peer: me), browser: browser)
        let running = Task { await model.run() }
        defer { running.cancel() }
        try await eventually { model.isRunning }
        let before = [browser.events.makeAsyncIterator(), browser.events.makeAsyncIterator()]
        browser.runtime.fail(.daemonNotRunning)
        for var iterator in before + [browser.events.makeAsyncIterator()] {  // the last made after the failure
            await #expect(throws: DiscoveryError.daemonNotRunning) { _ = try await iterator.next() }
            #expect(try await iterator.next() == nil)
        }
        try await eventually { model.discoveryError == .daemonNotRunning }
    }
}
