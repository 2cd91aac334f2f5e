/// The decisions of connecting to a peer that has several addresses, after RFC 8305 ("Happy Eyeballs
/// Version 2"): which address to try next, when, and which connection to keep.
///
/// - **Order.** Addresses are tried IPv6 first, the families interleaved (one IPv6, one IPv4, one IPv6...;
///   RFC 8305 section 4, a "First Address Family Count" of 1), each family in the order it was given;
///   an address given twice is tried once.
/// - **Staggering.** One attempt starts at once; the next starts ``attemptDelay`` later (RFC 8305's
///   "Connection Attempt Delay", 250 ms by default), or at once when every attempt under way has failed.
///   Attempts that are under way are never abandoned for a newer one: each runs until it connects or fails.
/// - **The winner.** The first attempt to connect wins (``Action/succeed(_:)``); every later one that
///   connects is closed (``Action/close(_:)``). When every address has failed: ``Action/fail``.
///
/// No I/O and no clock: the shell (`HappyEyeballsConnector` in the transport) makes the connections, arms the one
/// timer and feeds the outcomes back, on one event loop. Generic over the address, so that tests use plain values.
package struct HappyEyeballsStateMachine<Address: Hashable & Sendable>: Sendable {
    /// An address's family.
    package enum Family: Sendable, Hashable {
        case ipv6
        case ipv4
    }

    /// An address to try, with its family.
    package struct Candidate: Sendable, Hashable {
        /// The address.
        package var address: Address
        /// Its family.
        package var family: Family

        /// Makes a candidate.
        ///
        /// - Parameters:
        ///   - address: the address.
        ///   - family: its family.
        package init(_ address: Address, _ family: Family) {
            self.address = address
            self.family = family
        }
    }

    /// What the shell does next.
    package enum Action: Sendable, Hashable {
        /// Start connecting to the address.
        case connect(Address)
        /// Arm the attempt timer (replacing one that is armed): call ``timerFired(generation:)`` with
        /// `generation` when it fires.
        case scheduleNextAttempt(after: Duration, generation: UInt64)
        /// Disarm the attempt timer.
        case cancelTimer
        /// The connection to this address is the one: hand it to the caller.
        case succeed(Address)
        /// Close the connection to this address: another one won.
        case close(Address)
        /// Every address failed: fail the caller.
        case fail
    }

    /// RFC 8305's recommended "Connection Attempt Delay".
    package static var defaultAttemptDelay: Duration { .milliseconds(250) }

    private enum Phase: Sendable {
        case idle
        case racing
        case won(Address)
        case failed
    }

    /// How long an attempt has before the next one starts beside it.
    package let attemptDelay: Duration
    /// The addresses not tried yet, in the order they will be.
    package private(set) var pending: [Address]
    /// The attempts under way.
    package private(set) var inFlight: Set<Address> = []
    private var phase = Phase.idle
    private var generation: UInt64 = 0
    private var timerArmed = false

    /// Makes the machine for a set of addresses.
    ///
    /// - Parameters:
    ///   - candidates: the addresses, in the order their source gave them.
    ///   - attemptDelay: the time between two attempts' starts, unless the earlier one fails sooner.
    package init(candidates: [Candidate], attemptDelay: Duration = Self.defaultAttemptDelay) {
        self.pending = Self.ordered(candidates).map(\.address)
        self.attemptDelay = attemptDelay
    }

    /// The order addresses are tried in: duplicates removed, IPv6 first, the families interleaved, each
    /// family in its given order.
    ///
    /// - Parameter candidates: the addresses as their source gave them.
    /// - Returns: the same addresses in the order to try them.
    package static func ordered(_ candidates: [Candidate]) -> [Candidate] {
        var seen: Set<Address> = []
        let unique = candidates.filter { seen.insert($0.address).inserted }
        var ipv6 = unique.filter { $0.family == .ipv6 }[...]
        var ipv4 = unique.filter { $0.family == .ipv4 }[...]
        var ordered: [Candidate] = []
        ordered.reserveCapacity(unique.count)
        while !ipv6.isEmpty || !ipv4.isEmpty {
            if let next = ipv6.popFirst() { ordered.append(next) }
            if let next = ipv4.popFirst() { ordered.append(next) }
        }
        return ordered
    }

    /// The address that won, once one has.
    package var winner: Address? {
        if case .won(let address) = phase { return address }
        return nil
    }

    /// Whether the race is over: won or failed.
    package var isFinished: Bool {
        switch phase {
        case .won, .failed: true
        case .idle, .racing: false
        }
    }

    /// Starts: the first attempt, and the timer for the second.
    ///
    /// - Returns: the actions; `.fail` alone when there is no address.
    package mutating func start() -> [Action] {
        guard case .idle = phase else { return [] }
        guard !pending.isEmpty else {
            phase = .failed
            return [.fail]
        }
        phase = .racing
        return startNext()
    }

    /// The attempt timer fired.
    ///
    /// - Parameter generation: the generation its ``Action/scheduleNextAttempt(after:generation:)`` named;
    ///   a timer replaced or disarmed since changes nothing.
    /// - Returns: the actions.
    package mutating func timerFired(generation: UInt64) -> [Action] {
        guard case .racing = phase, timerArmed, generation == self.generation else { return [] }
        timerArmed = false
        return startNext()
    }

    /// The attempt to `address` failed (refused, unreachable, timed out).
    ///
    /// - Parameter address: an address this machine said to connect to.
    /// - Returns: the actions: the next attempt at once when none is under way, `.fail` after the last.
    package mutating func attemptFailed(_ address: Address) -> [Action] {
        guard inFlight.remove(address) != nil, case .racing = phase else { return [] }
        if !pending.isEmpty {
            // Nothing else is trying: no reason to wait for the timer.
            return inFlight.isEmpty ? startNext() : []
        }
        guard inFlight.isEmpty else { return [] }
        phase = .failed
        return disarm() + [.fail]
    }

    /// The attempt to `address` connected.
    ///
    /// - Parameter address: an address this machine said to connect to.
    /// - Returns: `.succeed` for the first (and the timer disarmed), `.close` for any later one.
    package mutating func attemptConnected(_ address: Address) -> [Action] {
        guard inFlight.remove(address) != nil else { return [.close(address)] }
        guard case .racing = phase else { return [.close(address)] }
        phase = .won(address)
        pending = []
        return disarm() + [.succeed(address)]
    }

    /// Starts the next pending attempt and, if more are pending, arms the timer for the one after.
    private mutating func startNext() -> [Action] {
        guard !pending.isEmpty else { return [] }
        let next = pending.removeFirst()
        inFlight.insert(next)
        var actions: [Action] = [.connect(next)]
        if !pending.isEmpty {
            generation &+= 1
            timerArmed = true
            actions.append(.scheduleNextAttempt(after: attemptDelay, generation: generation))
        } else {
            actions += disarm()
        }
        return actions
    }

    private mutating func disarm() -> [Action] {
        guard timerArmed else { return [] }
        timerArmed = false
        generation &+= 1
        return [.cancelTimer]
    }
}
