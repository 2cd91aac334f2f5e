/// Which connections in their handshake a listener keeps when a new one arrives.
///
/// A listener cannot tell a slow peer from an attacker that opens connections and says nothing, so
/// it never turns the newest connection away (a real peer that connects during a flood is always
/// the newest): it admits every new connection and, when a limit is reached, closes the **oldest**
/// pending handshake instead:
///
/// - at most ``Limits/maximumPerAddress`` pending from one source (an ``AdmissionKey``: an IPv4 address, a
///   global IPv6 /64, a link-local address): the oldest from that source gives way, so one host cannot push
///   out the others;
/// - at most ``Limits/maximum`` pending in all: the oldest of all gives way.
///
/// A real peer sends HELLO and INVITE as soon as it connects, so it leaves the handshake (the
/// owner calls ``finished(_:)``) within one round trip; an attacker has to open more than
/// ``Limits/maximum`` connections within that round trip, from several addresses, to push it out.
/// Connections that stay are closed by the handshake timeout. Memory is bounded by the limits.
package struct HandshakeAdmission: Sendable {
    /// The caps on pending handshakes.
    package struct Limits: Sendable, Equatable {
        /// Pending handshakes in all.
        package var maximum: Int
        /// Pending handshakes from one source (``AdmissionKey``).
        package var maximumPerAddress: Int
        /// The bits of a global IPv6 address that name its source (``AdmissionKey``).
        package var ipv6PrefixLength: Int

        /// Makes limits; each is at least 1.
        ///
        /// - Parameters:
        ///   - maximum: pending handshakes in all.
        ///   - maximumPerAddress: pending handshakes from one source.
        ///   - ipv6PrefixLength: the bits of a global IPv6 address that name its source.
        package init(
            maximum: Int,
            maximumPerAddress: Int,
            ipv6PrefixLength: Int = AdmissionKey.defaultIPv6PrefixLength
        ) {
            self.maximum = max(1, maximum)
            self.maximumPerAddress = max(1, min(maximumPerAddress, maximum))
            self.ipv6PrefixLength = ipv6PrefixLength
        }
    }

    private struct Entry {
        var id: UInt64
        var source: AdmissionKey
    }

    private let limits: Limits
    /// Pending handshakes, oldest first.
    private var entries: [Entry] = []
    private var countBySource: [AdmissionKey: Int] = [:]

    /// Makes an empty admission table.
    ///
    /// - Parameter limits: the caps.
    package init(limits: Limits) {
        self.limits = limits
    }

    /// How many handshakes are pending.
    package var count: Int { entries.count }

    /// How many handshakes from the source of `address` (its ``AdmissionKey``) are pending.
    ///
    /// - Parameter address: a source address.
    /// - Returns: the count.
    package func count(from address: String) -> Int { countBySource[key(address)] ?? 0 }

    private func key(_ address: String) -> AdmissionKey {
        AdmissionKey(address: address, ipv6PrefixLength: limits.ipv6PrefixLength)
    }

    /// A connection arrived: it is admitted; the connection that must give way for it, if any, is returned.
    ///
    /// - Parameters:
    ///   - id: the new connection's identifier, unique among pending ones.
    ///   - address: its source address (the IP, without the port), counted as its ``AdmissionKey``.
    /// - Returns: the identifier of the pending connection to close (already forgotten here), or `nil`.
    package mutating func arrived(_ id: UInt64, from address: String) -> UInt64? {
        let source = key(address)
        var evicted: UInt64?
        if countBySource[source, default: 0] >= limits.maximumPerAddress,
            let index = entries.firstIndex(where: { $0.source == source })
        {
            evicted = remove(at: index)
        } else if entries.count >= limits.maximum {
            evicted = remove(at: 0)
        }
        entries.append(Entry(id: id, source: source))
        countBySource[source, default: 0] += 1
        return evicted
    }

    /// A connection left its handshake (its INVITE arrived, or it closed). Unknown identifiers are ignored.
    ///
    /// - Parameter id: the connection's identifier.
    package mutating func finished(_ id: UInt64) {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return }
        _ = remove(at: index)
    }

    private mutating func remove(at index: Int) -> UInt64 {
        let entry = entries.remove(at: index)
        let left = (countBySource[entry.source] ?? 1) - 1
        countBySource[entry.source] = left > 0 ? left : nil
        return entry.id
    }
}
