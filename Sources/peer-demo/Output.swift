import Foundation

/// Line-at-a-time output, flushed at once so a parent process reads each line as it happens.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
