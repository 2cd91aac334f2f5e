import PeerConnectivityCore
import Testing

private let second: UInt64 = 1_000_000_000

private func limiter(
    pendingPerPeer: Int = 2,
    peerBurst: Int = 4,
    peerPerSecond: Double = 1,
    addressBurst: Int = 32,
    addressPerSecond: Double = 8
) -> InvitationRateLimiter {
    InvitationRateLimiter(
        limits: .init(
            pendingPerPeer: pendingPerPeer,
            peerBurst: peerBurst,
            peerPerSecond: peerPerSecond,
            addressBurst: addressBurst,
            addressPerSecond: addressPerSecond
        )
    )
}

@Suite("Invitation rate limits per peer and per address")
struct InvitationRateLimiterTests {
    @Test("at most pendingPerPeer unanswered from one peer; an answer frees a place")
    func pendingPerPeer() {
        var limits = limiter(pendingPerPeer: 2, peerBurst: 100)
        #expect(limits.request(peer: "p", address: "a", now: 0) == .admit)
        #expect(limits.request(peer: "p", address: "a", now: 0) == .admit)
        guard case .refuse(let why) = limits.request(peer: "p", address: "a", now: 0) else {
            Issue.record("a third pending invitation was admitted")
            return
        }
        #expect(why.contains("pending"))
        #expect(limits.request(peer: "q", address: "a", now: 0) == .admit)
        limits.answered(peer: "p")
        #expect(limits.pendingCount(peer: "p") == 1)
        #expect(limits.request(peer: "p", address: "a", now: 0) == .admit)
    }

    @Test("200 quick invitations from one answered-at-once peer: the burst, then one per earned token")
    func tokenBucketPerPeer() {
        var limits = limiter(pendingPerPeer: 2, peerBurst: 4, peerPerSecond: 1)
        var admitted = 0
        // 200 invitations over 2 s, each answered at once: 4 at first, then about 2 more.
        for index in 0..<200 {
            let now = UInt64(index) * (second / 100)
            if limits.request(peer: "flood", address: "a", now: now) == .admit {
                admitted += 1
                limits.answered(peer: "flood")
            }
        }
        #expect(admitted >= 4 && admitted <= 6, "admitted \(admitted)")
        // Another peer on the same host is not held back by the flood's refusals.
        #expect(limits.request(peer: "other", address: "a", now: 2 * second) == .admit)
    }

    @Test("changing peer ids does not get past the per-address bucket")
    func perAddress() {
        var limits = limiter(addressBurst: 8, addressPerSecond: 0)
        var admitted = 0
        for index in 0..<100 where limits.request(peer: "id-\(index)", address: "evil", now: 0) == .admit {
            admitted += 1
        }
        #expect(admitted == 8)
        #expect(limits.request(peer: "friend", address: "good", now: 0) == .admit)
    }

    @Test("tokens come back with time, up to the burst")
    func refill() {
        var limits = limiter(pendingPerPeer: 100, peerBurst: 2, peerPerSecond: 2)
        #expect(limits.request(peer: "p", address: "a", now: 0) == .admit)
        #expect(limits.request(peer: "p", address: "a", now: 0) == .admit)
        #expect(limits.request(peer: "p", address: "a", now: 0) != .admit)
        #expect(limits.request(peer: "p", address: "a", now: second / 2) == .admit)
        #expect(limits.request(peer: "p", address: "a", now: 100 * second) == .admit)
        #expect(limits.request(peer: "p", address: "a", now: 100 * second) == .admit)
        #expect(limits.request(peer: "p", address: "a", now: 100 * second) != .admit)
    }

    @Test("many distinct ids do not grow the tables without bound")
    func boundedKeys() {
        var limits = limiter(pendingPerPeer: 1, peerBurst: 1, peerPerSecond: 1000, addressBurst: 1_000_000)
        for index in 0..<20_000 {
            let now = UInt64(index) * second
            if limits.request(peer: "id-\(index)", address: "a", now: now) == .admit {
                limits.answered(peer: "id-\(index)")
            }
        }
        #expect(limits.pendingCount(peer: "id-19999") == 0)
        #expect(limits.rememberedKeys <= 4097 + 1, "remembers \(limits.rememberedKeys) keys")
    }

    @Test("keys of peers that stopped inviting are forgotten well before the cap, once their buckets are full")
    func idleKeysExpire() {
        var limits = limiter(pendingPerPeer: 1, peerBurst: 4, peerPerSecond: 1, addressBurst: 1_000_000)
        for index in 0..<300 {
            if limits.request(peer: "id-\(index)", address: "a-\(index)", now: 0) == .admit {
                limits.answered(peer: "id-\(index)")
            }
        }
        #expect(limits.rememberedKeys == 600, "each new peer and address is remembered while its bucket refills")
        // Ten seconds later every bucket is full again; the next prune forgets them all but the new one.
        for index in 0..<256 {
            if limits.request(peer: "late", address: "b", now: 10 * second + UInt64(index) * second) == .admit {
                limits.answered(peer: "late")
            }
        }
        #expect(limits.rememberedKeys <= 2, "remembers \(limits.rememberedKeys) keys")
    }
}
