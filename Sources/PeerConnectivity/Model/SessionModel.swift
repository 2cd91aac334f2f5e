import Foundation
import Observation

/// An observable snapshot of a session, its peers and their states and the resources in flight, and
/// of a browser's discovered peers: for a declarative UI to bind to with no glue code.
///
/// The model is derived from the session's and the browser's own events, never told anything by the
/// application: it is not a second source of truth. It changes while ``run()`` runs, which is its
/// lifetime: run it from the task of the view that shows it, and it stops when that task is cancelled.
///
/// ```swift
/// struct PeersView: View {
///     @State var model: SessionModel   // SessionModel(session: session, browser: browser)
///     var body: some View {
///         List(model.connectedPeers, id: \.self) { Text($0.displayName) }
///             .task { await model.run() }   // follows the session while the view is shown
///     }
/// }
/// ```
///
/// It lives on the main actor, where UI code reads it; its properties change there, one event at a
/// time, in the order the session reports them. It takes no messages or streams from the session:
/// running or not, it never holds back the session's reading.
@MainActor
@Observable
public final class SessionModel {
    /// The session shown.
    public let session: Session
    /// The browser whose peers are shown in ``discovered``, if any.
    public let browser: Browser?

    /// Every peer the session holds or held while the model followed it, with its state; peers that
    /// left stay, `notConnected`, with the reason.
    public private(set) var peers: [PeerID: PeerStatus] = [:]
    /// The peers the browser has found and not lost, with their discoveryInfo; empty once it stops.
    public private(set) var discovered: [PeerID: [String: String]] = [:]
    /// Why browsing failed, if it did (avahi-daemon went away).
    public private(set) var discoveryError: DiscoveryError?
    /// The resources in flight, both ways, by their id; each leaves when it ends, however it ends.
    public private(set) var transfers: [Transfer.ID: Transfer] = [:]
    /// Whether ``run()`` is running, so that the model follows the session.
    public private(set) var isRunning = false

    /// How many calls of ``run()`` are running.
    @ObservationIgnored private var runners = 0
    /// The task that follows the session while any ``run()`` runs.
    @ObservationIgnored private var follower: Task<Void, Never>?

    /// The connected peers, by display name.
    public var connectedPeers: [PeerID] {
        peers.filter { $0.value.state == .connected }.keys.sorted {
            ($0.displayName, $0.id.uuidString) < ($1.displayName, $1.id.uuidString)
        }
    }

    /// Makes a model of `session` and, if given, `browser`, showing their state now.
    ///
    /// - Parameters:
    ///   - session: the session.
    ///   - browser: a browser whose found peers ``discovered`` shows.
    public init(session: Session, browser: Browser? = nil) {
        self.session = session
        self.browser = browser
        resync(
            states: session.runtime.peerStates,
            found: browser?.foundPeers,
            inFlight: session.runtime.resourcesInFlight.inProgress
        )
    }

    /// Follows the session and the browser: the model changes only while this runs.
    ///
    /// It first reads their state now (so a model run again after a pause is right at once), then
    /// applies every change they report, on the main actor, in order. Several views may each run it
    /// (`.task { await model.run() }`): the model follows while at least one of them runs. Returns when
    /// the calling task is cancelled (the model holds its session, so the session outlives it). When the
    /// browser stops, ``discovered`` empties and the session goes on being followed.
    public func run() async {
        runners += 1
        if runners == 1 {
            isRunning = true
            follower = Task { await self.follow() }
        }
        await Self.untilCancelled()
        runners -= 1
        guard runners == 0, let follower else { return }
        self.follower = nil
        follower.cancel()
        await follower.value
        if runners == 0 { isRunning = false }
    }

    /// Returns when the calling task is cancelled (at once if it already is), without a timer.
    private nonisolated static func untilCancelled() async {
        let (cancelled, continuation) = AsyncStream<Never>.makeStream()
        await withTaskCancellationHandler {
            for await _ in cancelled {}
        } onCancel: {
            continuation.finish()
        }
    }

    /// Subscribes with a snapshot, sets it, then applies every change until cancelled.
    private func follow() async {
        let runtime = session.runtime
        let (sessionID, states) = runtime.subscribeToPeerStates()
        let sessionEvents = Session.Events.Iterator(subscription: .init(runtime: runtime, id: sessionID))
        let (transfersID, inFlight) = runtime.resourcesInFlight.subscribe()
        let transferChanges = HubIterator(hub: runtime.resourcesInFlight.changes, id: transfersID)
        let browsing = browser.map { browser in
            let (id, found) = browser.runtime.subscribe(replayingFoundPeers: false)
            return (events: Browser.Events.Iterator(runtime: browser.runtime, id: id), found: found)
        }
        resync(states: states, found: browsing?.found, inFlight: inFlight)
        await withDiscardingTaskGroup { group in
            group.addTask {
                var events = sessionEvents
                while let event = await events.next() { await self.apply(event) }
            }
            group.addTask {
                var changes = transferChanges
                while let change = await changes.next() { await self.apply(change) }
            }
            if let browserEvents = browsing?.events {
                group.addTask {
                    var events = browserEvents
                    do {
                        while let event = try await events.next() { await self.apply(event) }
                        if !Task.isCancelled { await self.browsingEnded(nil) }
                    } catch {
                        await self.browsingEnded(error as? DiscoveryError ?? .dnsServiceFailed("\(error)"))
                    }
                }
            }
        }
    }

    // MARK: - Applying what the session and the browser report

    private func resync(
        states: [PeerID: PeerState],
        found: [PeerID: [String: String]]?,
        inFlight: [TransferRecord]
    ) {
        var peers = self.peers
        for (peer, status) in peers where states[peer] == nil && status.state != .notConnected {
            peers[peer] = PeerStatus(state: .notConnected)
        }
        for (peer, state) in states where peers[peer]?.state != state {
            peers[peer] = PeerStatus(
                state: state,
                security: state == .connected ? session.securityInfo(for: peer) : nil
            )
        }
        if peers != self.peers { self.peers = peers }
        if let found, found != discovered { discovered = found }
        let transfers = Dictionary(inFlight.map { (ObjectIdentifier($0.progress), Transfer($0)) }) { a, _ in a }
        if transfers != self.transfers { self.transfers = transfers }
    }

    private func apply(_ event: SessionEvent) {
        guard case .peerStateChanged(let peer, let state, let reason) = event else { return }
        peers[peer] = PeerStatus(
            state: state,
            disconnectReason: state == .connected ? nil : reason,
            security: state == .connected ? session.securityInfo(for: peer) : nil
        )
    }

    private func apply(_ change: TransferRegistry.Change) {
        switch change {
        case .started(let record): transfers[ObjectIdentifier(record.progress)] = Transfer(record)
        case .ended(let id): transfers[id] = nil
        }
    }

    private func apply(_ event: BrowserEvent) {
        switch event {
        case .found(let peer, let info): discovered[peer] = info
        case .lost(let peer): discovered[peer] = nil
        }
    }

    private func browsingEnded(_ failure: DiscoveryError?) {
        if !discovered.isEmpty { discovered = [:] }
        if let failure { discoveryError = failure }
    }
}
