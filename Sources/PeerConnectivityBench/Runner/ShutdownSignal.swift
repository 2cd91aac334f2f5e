import Dispatch
import Foundation

/// SIGINT and SIGTERM, as something to await: their default action (dying at once) is replaced by a
/// dispatch signal source each.
public enum ShutdownSignal {
    /// Waits for the first SIGINT or SIGTERM.
    ///
    /// - Returns: "SIGINT" or "SIGTERM".
    public static func next() async -> String {
        let names = [SIGINT: "SIGINT", SIGTERM: "SIGTERM"]
        let (received, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in names {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { continuation.yield(name) }
            source.activate()
            sources.append(source)
        }
        defer { sources.forEach { $0.cancel() } }
        for await name in received { return name }
        return "end of signals"
    }
}
