import Dispatch
import Foundation

/// Turns SIGINT / SIGTERM into something a task can await.
final class SignalWatcher: Sendable {
    private let stream: AsyncStream<Int32>
    // DispatchSourceSignal is thread-safe; the sources are only kept alive here.
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    init(signals: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        self.sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    /// Waits for the first of the signals.
    func next() async {
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()
    }
}
