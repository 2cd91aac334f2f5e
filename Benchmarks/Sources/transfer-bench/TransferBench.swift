import ArgumentParser

/// Measures resources, streams, fairness and memory against raw TCP on loopback.
@main
struct TransferBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer-bench",
        abstract: "Throughput, fairness and memory of resources and streams against raw TCP on loopback.",
        discussion: """
            `run` (the default) measures, with a `serve` child process as the receiving peer, so that \
            each side's peak resident set can be read on its own.
            """,
        subcommands: [RunCommand.self, ServeCommand.self, FolderCommand.self],
        defaultSubcommand: RunCommand.self
    )
}
