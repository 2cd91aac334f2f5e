import Foundation
import PeerConnectivity
import Synchronization

/// Takes the reflector's echoes where the runner's session reads them (its ``MessageResponder``): an echo of
/// the running phase is checked and handed to the phase's ``LoadController``, a latency probe's echo to the
/// ``ProbeBook`` it is routed to, each timed as it is read, with no task between the read and the clock.
/// Everything else (the hello, receipts, reports, a notice) goes on to the session's events.
final class EchoTaker: Sendable {
    /// The phase the echoes go to, set by the sender for the length of a phase.
    let phase = CurrentPhase()
    /// The payloads of the data test.
    let pattern: PayloadPattern
    /// How the data test sends.
    let mode: DeliveryMode
    private let probes = Mutex<ProbeBook?>(nil)

    /// - Parameters:
    ///   - pattern: the payloads of the data test.
    ///   - mode: how the data test sends.
    init(pattern: PayloadPattern, mode: DeliveryMode) {
        self.pattern = pattern
        self.mode = mode
    }

    /// The responder of the runner's session: echoes and probes taken, the rest delivered. With a window of
    /// one, an echo the phase's sender waits for is answered with the next message as it is read, as the
    /// reflector answers each message: no task is woken between an echo and the next send.
    var responder: MessageResponder {
        MessageResponder { [self] data, _, mode in
            switch taking(data, arrivedAs: mode, mayReply: true) {
            case .notTaken: .deliver
            case .taken: .consumed
            case .reply(let message): .reply(message)
            }
        }
    }

    /// What ``taking(_:arrivedAs:mayReply:)`` did with a message.
    enum Taken {
        /// Not an echo or a probe: the event reader has it.
        case notTaken
        /// Accounted for.
        case taken
        /// Accounted for; this, the phase's next message, goes back to the reflector now.
        case reply(Data)
    }

    /// What a message read is, by its first bytes.
    private enum Seen {
        /// A latency probe's echo.
        case probe
        /// An echo of the running phase, and what its payload holds.
        case echo(CurrentPhase.Phase, PayloadInspection)
        /// Anything else (the hello, a receipt, a report, a notice), or an echo with no phase running.
        case other
    }

    /// The prefixes a message is told apart by, as bytes (see `UnsafeRawBufferPointer.begins(with:)`).
    private static let probePrefix = [UInt8](LatencyProbe.prefix)
    private static let evictionPrefix = [UInt8](RunnerEviction.prefix)
    private static let reportPrefix = [UInt8](ReflectorReport.prefix)

    /// Hands the echoes of latency probes to `book` from now on.
    func routeProbes(to book: ProbeBook) {
        probes.withLock { $0 = book }
    }

    /// Takes `data` if it is a probe's echo or an echo of the running phase; called where it is read (or,
    /// on a session with reconnection, which calls no responder, by the driver's event reader).
    ///
    /// - Returns: whether it was taken; if not, the event reader has it.
    func take(_ data: Data, arrivedAs: SendMode) -> Bool {
        if case .notTaken = taking(data, arrivedAs: arrivedAs, mayReply: false) { return false }
        return true
    }

    /// Takes `data` as ``take(_:arrivedAs:)`` does; when `mayReply`, the phase's controller may decide that its
    /// next message goes back as the reply (``LoadController/received(_:at:onConnection:mayReply:)``).
    func taking(_ data: Data, arrivedAs: SendMode, mayReply: Bool) -> Taken {
        let now = MonotonicClock.now()
        let running = phase.current
        // One look at the message's bytes tells a probe's echo, an echo of the running phase (inspected) and
        // anything else apart.
        let seen = data.withUnsafeBytes { bytes -> Seen in
            if bytes.begins(with: Self.probePrefix) { return .probe }
            guard let running, !bytes.begins(with: Self.evictionPrefix), !bytes.begins(with: Self.reportPrefix)
            else { return .other }
            return .echo(running, pattern.inspect(bytes, expectedSize: running.size))
        }
        switch seen {
        case .probe:
            // Dropped when no book is routed.
            probes.withLock { $0 }?.received(data, at: now)
            return .taken
        case .other:
            return .notTaken
        case .echo(let current, let inspection):
            // Unreliable: a message that came on the connection (no UDP path yet) is counted apart.
            let onConnection = mode == .unreliable && arrivedAs == .reliable
            guard
                let sequence = current.controller.received(
                    inspection,
                    at: now,
                    onConnection: onConnection,
                    mayReply: mayReply
                )
            else { return .taken }
            var message = Data(count: current.size)
            message.withUnsafeMutableBytes { pattern.write(sequence: sequence, into: $0) }
            return .reply(message)
        }
    }
}
