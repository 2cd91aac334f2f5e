/// Limits the invitations one peer, and one source, may hand to the application.
///
/// Each key (a remote peer id; a source, an ``AdmissionKey``, so that a global IPv6 /64 is one) has a token
/// bucket: ``Limits/burst`` invitations at once, refilled at ``Limits/perSecond``. A remote peer id may also have at most
/// ``Limits/pendingPerPeer`` invitations unanswered at once. An invitation is admitted only when every
/// limit allows it, and only an admitted one spends tokens, so a peer that floods is refused without
/// using up its address's budget for other peers on the same host. The peer id is the peer's own
/// claim (HELLO is not authenticated): the per-address limit is the one an attacker cannot dodge by
/// changing ids. Pure: the caller passes the time.
package struct InvitationRateLimiter: Sendable {
    /// How many invitations are allowed.
    package struct Limits: Sendable, Equatable {
        /// Unanswered invitations from one peer id.
        package var pendingPerPeer: Int
        /// Invitations one peer id may send at once.
        package var peerBurst: Int
        /// Invitations per second one peer id earns back.
        package var peerPerSecond: Double
        /// Invitations one source may send at once.
        package var addressBurst: Int
        /// Invitations per second one source earns back.
        package var addressPerSecond: Double
        /// The bits of a global IPv6 address that name its source (``AdmissionKey``).
        package var ipv6PrefixLength: Int

        /// Makes limits.
        ///
        /// - Parameters:
        ///   - pendingPerPeer: unanswered invitations from one peer id.
        ///   - peerBurst: invitations one peer id may send at once.
        ///   - peerPerSecond: invitations per second one peer id earns back.
        ///   - addressBurst: invitations one source may send at once.
        ///   - addressPerSecond: invitations per second one source earns back.
        ///   - ipv6PrefixLength: the bits of a global IPv6 address that name its source.
        package init(
            pendingPerPeer: Int,
            peerBurst: Int,
            peerPerSecond: Double,
            addressBurst: Int,
            addressPerSecond: Double,
            ipv6PrefixLength: Int = AdmissionKey.defaultIPv6PrefixLength
        ) {
            self.pendingPerPeer = max(1, pendingPerPeer)
            self.peerBurst = max(1, peerBurst)
            self.peerPerSecond = max(0, peerPerSecond)
            self.addressBurst = max(1, addressBurst)
            self.addressPerSecond = max(0, addressPerSecond)
            self.ipv6PrefixLength = ipv6PrefixLength
        }
    }

    /// Whether an invitation may go to the application.
    package enum Verdict: Equatable, Sendable {
        /// Hand it over; call ``InvitationRateLimiter/answered(peer:)`` when it is answered or gone.
        case admit
        /// Decline it; the text says which limit.
        case refuse(String)
    }

    private struct Bucket {
        var tokens: Double
        var updated: UInt64

        mutating func refill(now: UInt64, burst: Int, perSecond: Double) {
            let elapsed = Double(now &- updated) / 1e9
            if now > updated {
                tokens = min(Double(burst), tokens + elapsed * perSecond)
                updated = now
            }
        }
    }

    /// Keys kept at most; beyond, keys with nothing pending and a full bucket are forgotten.
    private static let maximumKeys = 4096
    /// Every this many requests, keys back to a full bucket are forgotten anyway: a long-running
    /// advertiser keeps no entry for a peer or address that has stopped inviting.
    private static let requestsBetweenPrunes = 256

    private let limits: Limits
    private var peerBuckets: [String: Bucket] = [:]
    private var addressBuckets: [String: Bucket] = [:]
    private var pending: [String: Int] = [:]
    private var requestsSincePrune = 0

    /// Makes a limiter with full buckets.
    ///
    /// - Parameter limits: the limits.
    package init(limits: Limits) {
        self.limits = limits
    }

    /// Unanswered invitations from `peer`.
    ///
    /// - Parameter peer: a peer id's text.
    /// - Returns: the count.
    package func pendingCount(peer: String) -> Int { pending[peer] ?? 0 }

    /// Peer ids and addresses remembered (bounded: see ``request(peer:address:now:)``).
    package var rememberedKeys: Int { peerBuckets.count + addressBuckets.count }

    /// An invitation arrived.
    ///
    /// - Parameters:
    ///   - peer: the inviting peer id's text.
    ///   - address: the source address (IP, no port), counted as its ``AdmissionKey``.
    ///   - now: a monotonic time in nanoseconds.
    /// - Returns: whether to hand it to the application.
    package mutating func request(peer: String, address: String, now: UInt64) -> Verdict {
        let address = AdmissionKey(address: address, ipv6PrefixLength: limits.ipv6PrefixLength).description
        prune(now: now)
        var peerBucket = peerBuckets[peer] ?? Bucket(tokens: Double(limits.peerBurst), updated: now)
        peerBucket.refill(now: now, burst: limits.peerBurst, perSecond: limits.peerPerSecond)
        var addressBucket = addressBuckets[address] ?? Bucket(tokens: Double(limits.addressBurst), updated: now)
        addressBucket.refill(now: now, burst: limits.addressBurst, perSecond: limits.addressPerSecond)
        defer {
            peerBuckets[peer] = peerBucket
            addressBuckets[address] = addressBucket
        }
        if pendingCount(peer: peer) >= limits.pendingPerPeer {
            return .refuse("\(limits.pendingPerPeer) invitations from this peer are already pending")
        }
        if peerBucket.tokens < 1 {
            return .refuse("more than \(limits.peerBurst) invitations from this peer at \(limits.peerPerSecond)/s")
        }
        if addressBucket.tokens < 1 {
            return .refuse(
                "more than \(limits.addressBurst) invitations from \(address) at \(limits.addressPerSecond)/s"
            )
        }
        peerBucket.tokens -= 1
        addressBucket.tokens -= 1
        pending[peer, default: 0] += 1
        return .admit
    }

    /// An admitted invitation was answered, expired or closed.
    ///
    /// - Parameter peer: the inviting peer id's text.
    package mutating func answered(peer: String) {
        let left = (pending[peer] ?? 1) - 1
        pending[peer] = left > 0 ? left : nil
    }

    /// Forgets keys that are back to a full bucket with nothing pending: every
    /// ``requestsBetweenPrunes`` requests, and whenever there are too many.
    private mutating func prune(now: UInt64) {
        requestsSincePrune += 1
        let due = requestsSincePrune >= Self.requestsBetweenPrunes
        if due { requestsSincePrune = 0 }
        if due || peerBuckets.count > Self.maximumKeys {
            peerBuckets = peerBuckets.filter { key, bucket in
                var bucket = bucket
                bucket.refill(now: now, burst: limits.peerBurst, perSecond: limits.peerPerSecond)
                return pending[key] != nil || bucket.tokens < Double(limits.peerBurst)
            }
        }
        if due || addressBuckets.count > Self.maximumKeys {
            addressBuckets = addressBuckets.filter { _, bucket in
                var bucket = bucket
                bucket.refill(now: now, burst: limits.addressBurst, perSecond: limits.addressPerSecond)
                return bucket.tokens < Double(limits.addressBurst)
            }
        }
    }
}
