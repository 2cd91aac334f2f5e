import ArgumentParser
import Foundation
import PeerConnectivityBench

/// `test-runner report`: a comparison table on standard output and an SVG chart.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: """
            Compare result documents: a table of every size, ratios against raw-tcp, an SVG chart, and with \
            --html a page of every run's figures over time.
            """,
        discussion: """
            Files that are not test-runner results (MPCF-TestBench layouts, the bench scripts' summaries) are \
            skipped with a note, so `results/*.json` works. Each data run is compared with the raw-tcp run closest \
            in time that ran between the same hosts with the same window, delay, rate and encryption, within 12 \
            hours; one without such a baseline is named, with the reason.
            """
    )

    @Argument(help: "Result documents written by `test-runner run`.")
    var files: [String]

    @Option(help: "Where to write the SVG chart (default: report.svg beside the first file).")
    var svg: String?

    @Option(
        help: """
            Also write one self-contained HTML page here: for each run, what ran, throughput and round trip over \
            time, the round trips' distribution and the messages lost; the runs side by side.
            """
    )
    var html: String?

    @Option(help: "The chart's title.")
    var title = "PeerConnectivity against raw TCP"

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one result, e.g. results/*.json") }
    }

    func run() throws {
        var documents: [BenchmarkDocument] = []
        for path in files {
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                documents.append(try BenchmarkDocument(decoding: data, path: path))
            } catch let error as BenchError {
                try? FileHandle.standardError.write(contentsOf: Data("skipping \(error)\n".utf8))
            } catch {
                try? FileHandle.standardError.write(
                    contentsOf: Data("skipping \(path): \(error.localizedDescription)\n".utf8)
                )
            }
        }
        guard !documents.isEmpty else {
            try? FileHandle.standardError.write(
                contentsOf: Data("test-runner: none of the files is a test-runner result\n".utf8)
            )
            throw ExitCode(1)
        }
        print(ComparisonTable.render(documents), terminator: "")
        // Beside the user's own files: runs land in results/runs/, which git ignores, apart from the
        // committed results and their chart.
        let path =
            svg ?? URL(fileURLWithPath: files[0]).deletingLastPathComponent().appendingPathComponent("report.svg").path
        try ReportChart.render(documents, title: title).write(toFile: path, atomically: true, encoding: .utf8)
        print("wrote \(path)")
        if let html {
            try HTMLReport.render(documents, title: title).write(toFile: html, atomically: true, encoding: .utf8)
            print("wrote \(html)")
        }
    }
}
