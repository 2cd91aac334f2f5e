import Foundation
import PeerConnectivityBench
import PeerConnectivityTesting
import Testing

/// `test-runner report --html` opened in a real browser: headless Chromium (Debian's `chromium`, which the
/// test command installs) lays the page of a committed responsiveness run out and draws it.
@Suite("The HTML report in Chromium", .timeLimit(.minutes(2 * slowdown)))
struct HTMLReportBrowserTests {
    /// Chromium's path, or nil when it is not installed.
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test(
        "a responsiveness run's page: its figures, four shaded phases and the udp probes in the DOM Chromium built; a screenshot",
        .enabled(if: chromium != nil, "chromium is not installed (Scripts/setup.sh installs it)")
    )
    func responsivenessPage() async throws {
        let folder = try ScratchDirectory("html-report").url
        let page = folder.appendingPathComponent("report.html")
        let run = repositoryRoot().appendingPathComponent("results/responsiveness-2026-11-29/lab-300ms-cubic.json")
        let report = try ToolProcess(
            "test-runner",
            ["report", run.path, "--html", page.path, "--svg", folder.appendingPathComponent("r.svg").path]
        )
        #expect(try await report.exitStatus() == 0, "\(report.output) \(report.errors)")
        let browser = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=615,900"]
        let dom = try await ChildProcess.run(
            try #require(Self.chromium),
            arguments: browser + ["--dump-dom", page.absoluteString],
            timeout: .seconds(60 * slowdown)
        )
        #expect(dom.status == 0, "\(dom.output)")
        for figure in ["run-1-throughput", "run-1-round-trip"] {
            #expect(dom.output.contains("id=\"\(figure)\""), "\(figure) in the DOM Chromium built")
        }
        #expect(dom.output.components(separatedBy: "class=\"band\"").count - 1 == 4, "the four phases are shaded")
        #expect(dom.output.contains(">udp p50<"), "the udp probes' line has its legend")
        let screenshot = folder.appendingPathComponent("report.png")
        let shot = try await ChildProcess.run(
            try #require(Self.chromium),
            arguments: browser + ["--screenshot=\(screenshot.path)", page.absoluteString],
            timeout: .seconds(60 * slowdown)
        )
        #expect(shot.status == 0, "\(shot.output)")
        let png = try Data(contentsOf: screenshot)
        // A PNG, and more than a blank page's few kilobytes: the charts were drawn.
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 20_000, "\(png.count) bytes")
    }
}
