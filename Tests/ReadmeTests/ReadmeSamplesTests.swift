import Foundation
import Testing

/// The README's code samples are the code this target compiles.
@Suite("README samples")
struct ReadmeSamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The README's ```swift blocks, in order.
    static func swiftBlocks() throws -> [String] {
        swiftBlocks(of: try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8))
    }

    /// The ```swift blocks of a Markdown text, in order.
    static func swiftBlocks(of markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The lines with their indentation taken off and runs of spaces made one (the README aligns its
    /// comments, swift-format does not), empty ones left out.
    static func trimmed(_ text: String) -> [String] {
        text.split(separator: "\n").map { line in
            line.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }.filter { !$0.isEmpty }
    }

    @Test("every Swift sample of the README but the manifest is compiled here, line for line")
    func samplesAreCompiled() throws {
        let compiled = Self.trimmed(
            try String(
                contentsOf: Self.root.appendingPathComponent("Tests/ReadmeTests/ReadmeSamples.swift"),
                encoding: .utf8
            )
        )
        let blocks = try Self.swiftBlocks().filter { !$0.hasPrefix("// swift-tools-version") }
        #expect(!blocks.isEmpty, "the README shows no Swift sample besides its Package.swift")
        for block in blocks {
            let lines = Self.trimmed(block).filter { $0 != "import Foundation" && $0 != "import PeerConnectivity" }
            let found = (0...max(0, compiled.count - lines.count)).contains { start in
                Array(compiled[start..<min(start + lines.count, compiled.count)]) == lines
            }
            #expect(found, "this README sample is not in ReadmeSamples.swift as written:\n\(block)")
        }
    }

    @Test("the README's Package.swift sample is a manifest SwiftPM reads")
    func manifestParses() async throws {
        let manifest = try #require(Self.swiftBlocks().first { $0.hasPrefix("// swift-tools-version") })
        // The sample as written, in MyApp/ beside a PeerConnectivity/ that links to this checkout, so that a
        // sample naming a path dependency (../PeerConnectivity) reads as well as one naming the URL and tag.
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        let folder = parent.appendingPathComponent("MyApp")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: parent) }
        try FileManager.default.createSymbolicLink(
            at: parent.appendingPathComponent("PeerConnectivity"),
            withDestinationURL: Self.root
        )
        try manifest.write(to: folder.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "dump-package", "--package-path", folder.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // SwiftPM takes seconds: read and wait on a thread of our own, not on one of the cooperative pool's
        // (as many as CPUs), which the tests running beside this one need.
        let text = await withCheckedContinuation { continuation in
            Thread {
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                continuation.resume(returning: text)
            }.start()
        }
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("\"PeerConnectivity\""))
    }
}
