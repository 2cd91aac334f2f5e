import Foundation

/// Terminal input, and output that a parent process reads line by line as it happens.
enum StandardInput {
    /// The lines typed (or piped) in, read on a thread of their own; ends at the end of the input.
    static func lines() -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        let reader = Thread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        reader.start()
        return lines
    }
}

/// Prints a line at once (`print` keeps output to a pipe in a buffer).
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
