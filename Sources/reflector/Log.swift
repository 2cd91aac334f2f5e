import Foundation

/// Log lines on standard output, each stamped and written at once (a parent process reads them live).
enum Log {
    static func line(_ text: String) {
        let stamp = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
        try? FileHandle.standardOutput.write(contentsOf: Data("\(stamp) \(text)\n".utf8))
    }
}
