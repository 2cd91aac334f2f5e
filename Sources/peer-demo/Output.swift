import Foundation

/// Line-at-a-time output, flushed at once so a parent process reads each line as it happens.
enum Output {
    static func line(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data((text + "\n").utf8))
    }
}
