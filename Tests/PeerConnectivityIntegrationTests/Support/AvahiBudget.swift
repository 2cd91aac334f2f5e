import Testing

/// How many tests talk to avahi-daemon at once.
///
/// avahi-daemon is one process serving every DNS-SD client on the machine, and each `DNSServiceRef` holds a D-Bus
/// connection of its own (D-Bus allows 256 per user; avahi-daemon limits what one client may hold). With every
/// DNS-SD test of the suite running at once, a resolve that takes a millisecond alone took two seconds, discovery
/// took ten, and resolves failed with kDNSServiceErr_Unknown. A test takes a permit (``Trait/avahi``) for as
/// long as it runs; one that stresses the daemon on purpose takes them all (``Trait/avahiAlone``).
///
/// Permits are granted in the order asked, so a test that waits for all of them is not passed over.
actor AvahiBudget {
    /// Tests that may talk to avahi-daemon at once.
    static let permits = 2

    /// The budget of this test process.
    static let shared = AvahiBudget()

    private var inUse = 0
    private var waiting: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Waits until `count` permits are free, and takes them.
    func acquire(_ count: Int) async {
        if waiting.isEmpty, inUse + count <= Self.permits {
            inUse += count
            return
        }
        await withCheckedContinuation { waiting.append((count, $0)) }
    }

    /// Gives back `count` permits, and wakes those waiting in turn while enough are free.
    func release(_ count: Int) {
        inUse -= count
        while let next = waiting.first, inUse + next.count <= Self.permits {
            waiting.removeFirst()
            inUse += next.count
            next.continuation.resume()
        }
    }
}

/// Runs each test case it applies to (every one in a suite it is given to) with permits of ``AvahiBudget``.
///
/// Give a test either this trait or its suite, not both: a test holding one permit and waiting for all of them would
/// wait forever.
struct AvahiBudgetTrait: TestTrait, SuiteTrait, TestScoping {
    /// The permits each test case takes.
    let count: Int

    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        await AvahiBudget.shared.acquire(count)
        do {
            try await function()
        } catch {
            await AvahiBudget.shared.release(count)
            throw error
        }
        await AvahiBudget.shared.release(count)
    }
}

extension Trait where Self == AvahiBudgetTrait {
    /// The test talks to avahi-daemon: it runs beside at most ``AvahiBudget/permits`` - 1 others that do.
    static var avahi: Self { AvahiBudgetTrait(count: 1) }

    /// The test stresses avahi-daemon: no other test that talks to it runs meanwhile.
    static var avahiAlone: Self { AvahiBudgetTrait(count: AvahiBudget.permits) }
}

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a suite with tests that talk to avahi-daemon. A test's time counts its wait for permits of
    /// ``AvahiBudget`` behind every other test that holds them, which with the suite in parallel on a loaded machine
    /// came to more than a minute. Longer than the whole suite takes there: a guard against a hang, not a bound on
    /// how fast the machine is.
    static var avahiTimeLimit: Self { .timeLimit(.minutes(5 * slowdown)) }
}
