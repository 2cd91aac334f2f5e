import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A progress line rewritten in place with a carriage return, only when standard output is a terminal.
enum ProgressLine {
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    static func show(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data("\r\u{1B}[K\(text)".utf8))
    }

    static func clear() {
        try? FileHandle.standardOutput.write(contentsOf: Data("\r\u{1B}[K".utf8))
    }
}
