import Foundation

extension LoadController {
    /// Runs a phase's sends on the calling thread, as the blocking baseline drivers do: sleeps until each
    /// message is due, waits for echoes when the window is full, and returns when the phase is finished.
    ///
    /// - Parameter send: writes the message with this sequence number; throws when the connection failed
    ///   (after telling the controller).
    /// - Throws: what `send` throws, or the controller's failure.
    func sendBlocking(_ send: (UInt64) throws -> Void) throws {
        while true {
            let (action, generation) = try nextSend()
            switch action {
            case .send(let sequence):
                try send(sequence)
            case .sleep(let until):
                let now = MonotonicClock.now()
                if until > now { usleep(UInt32(min((until - now) / 1_000, UInt64(UInt32.max)))) }
            case .awaitEcho(let deadline):
                waitBlocking(until: deadline, after: generation)
            case .finished:
                return
            }
        }
    }
}
