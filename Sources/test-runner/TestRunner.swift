import ArgumentParser
import PeerConnectivityBench

/// The benchmark's measuring side: runs a plan against a reflector and writes the result; reports on
/// results; times the block digests on this machine.
@main
struct TestRunner: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-runner",
        abstract: "Measure PeerConnectivity against a reflector, and compare the results with raw TCP.",
        version: ToolInfo().versionLine,
        subcommands: [RunCommand.self, ReportCommand.self, HashCommand.self]
    )
}
