import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// Waits until `progress` has counted at least `fraction` of its total, for ``waitLimit`` at most.
func waitFor(_ progress: Progress, fraction: Double) async throws {
    let deadline = ContinuousClock.now + waitLimit
    while Double(progress.completedUnitCount) < fraction * Double(progress.totalUnitCount) {
        guard ContinuousClock.now < deadline else {
            throw FixtureError("progress stuck at \(progress.completedUnitCount)")
        }
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// The bytes a transfer's `progress` says were resumed rather than sent (`resumedByteCountKey`).
func resumedBytes(_ progress: Progress) -> Int64 {
    (progress.userInfo[.resumedByteCountKey] as? NSNumber)?.int64Value ?? 0
}

/// A session's configuration for resume tests: receiving into `directory`, with reconnection on when
/// `reconnects`.
func resumeConfiguration(receivingInto directory: URL, reconnects: Bool) -> Session.Configuration {
    var configuration = reconnects ? ReconnectionTests.configuration() : Session.Configuration.patient
    configuration.resourceDirectory = directory
    return configuration
}

/// Sends `url` as `name` from `pair`'s client to its host, runs `cut` once half of it has crossed, and
/// waits until the transfer has failed on both ends.
func sendAndCut(_ url: URL, as name: String, over pair: SessionPair, cut: (SessionPair) async -> Void) async throws {
    let transfer = try pair.client.sendResource(at: url, withName: name, toPeer: pair.host.peer)
    try await waitFor(transfer.progress, fraction: 0.5)
    await cut(pair)
    await #expect(throws: TransferError.self) { try await transfer.wait() }
    _ = try await pair.hostLog.waitForResources(1)
}

/// A pair in the clear whose host receives into `received` through a proxy that flips a bit in the 40th
/// chunk the client sends (with 16 chunks a block, in block 2); stop the proxy when done.
func pairDamagingOneChunk(receivingInto received: URL, scratch: ScratchDirectory) async throws -> (
    SessionPair, ChunkDamagingProxy
) {
    let proxy = Locked<ChunkDamagingProxy?>(nil)
    let pair = try await SessionPair.connect(
        host: resumeConfiguration(receivingInto: received, reconnects: false),
        client: resumeConfiguration(receivingInto: scratch.url.appendingPathComponent("unused"), reconnects: false),
        encryption: .none,
        through: { port in
            let started = try await ChunkDamagingProxy.start(to: port, damagingChunk: 40)
            proxy.withLock { $0 = started }
            return started.port
        }
    )
    return (pair, try #require(proxy.withLock { $0 }))
}
