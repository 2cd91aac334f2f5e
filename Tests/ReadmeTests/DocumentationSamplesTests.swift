import Foundation
import Testing

/// The DocC catalog's code samples are the code this target compiles.
@Suite("documentation samples")
struct DocumentationSamplesTests {
    static let catalog = ReadmeSamplesTests.root.appendingPathComponent(
        "Sources/PeerConnectivity/PeerConnectivity.docc"
    )

    /// Every article of the catalog, by file name.
    static func articles() throws -> [(name: String, text: String)] {
        let names = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }
        return try names.sorted().map { name in
            (name, try String(contentsOf: catalog.appendingPathComponent(name), encoding: .utf8))
        }
    }

    @Test("every Swift sample of the catalog but the manifest is compiled here, line for line")
    func samplesAreCompiled() throws {
        let compiled = ReadmeSamplesTests.trimmed(
            try String(
                contentsOf: ReadmeSamplesTests.root.appendingPathComponent(
                    "Tests/ReadmeTests/DocumentationSamples.swift"
                ),
                encoding: .utf8
            )
        )
        let articles = try Self.articles()
        #expect(articles.contains { $0.name == "GettingStarted.md" })
        for (name, text) in articles {
            for block in ReadmeSamplesTests.swiftBlocks(of: text) where !block.hasPrefix("// swift-tools-version") {
                let lines = ReadmeSamplesTests.trimmed(block).filter {
                    $0 != "import Foundation" && $0 != "import PeerConnectivity"
                }
                let found = (0...max(0, compiled.count - lines.count)).contains { start in
                    Array(compiled[start..<min(start + lines.count, compiled.count)]) == lines
                }
                #expect(found, "this sample of \(name) is not in DocumentationSamples.swift as written:\n\(block)")
            }
        }
    }

    @Test("the catalog's Package.swift sample is the README's, which is checked as a manifest")
    func manifestIsTheReadmes() throws {
        let readme = try #require(ReadmeSamplesTests.swiftBlocks().first { $0.hasPrefix("// swift-tools-version") })
        for (name, text) in try Self.articles() {
            for block in ReadmeSamplesTests.swiftBlocks(of: text) where block.hasPrefix("// swift-tools-version") {
                #expect(block == readme, "the manifest in \(name) differs from the README's")
            }
        }
    }
}
