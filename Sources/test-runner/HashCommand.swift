import ArgumentParser
import Foundation
import PeerConnectivityBench

/// `test-runner hash`: how fast this machine makes a resource's block digests, with each hash the protocol knows.
struct HashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Time the block digests of resources (XXH64 and XXH3-64) on this machine, one core, no I/O.",
        discussion: """
            Each round hashes the same number of 1 MiB blocks with each hash in turn, taken in 64 KiB pieces as \
            CHUNK frames bring them. Two peers of this version use XXH3-64; a peer of an earlier release, XXH64. \
            Both ends of a resource hash every block they move, so twice the figure is what the check costs a GiB.
            """
    )

    @Option(help: "1 MiB blocks a round hashes with each hash.")
    var mebibytes = 1024

    @Option(help: "Rounds, the hashes taking turns within each.")
    var rounds = 5

    func validate() throws {
        guard (1...1_048_576).contains(mebibytes) else { throw ValidationError("--mebibytes: 1 to 1,048,576") }
        guard (1...1_000).contains(rounds) else { throw ValidationError("--rounds: 1 to 1,000") }
    }

    func run() throws {
        let speed = BlockHashSpeed(mebibytes: mebibytes, rounds: rounds)
        let host = HostInfo.current()
        let cpu = "\(host.cpuModel ?? "an unnamed CPU") x \(host.cpuCount)"
        print(
            "block digests on \(cpu), one core, \(ToolInfo().versionLine): \(mebibytes) MiB a round, \(rounds) rounds"
        )
        var medians: [Double] = []
        for kind in speed.kinds {
            let sorted = kind.secondsPerGibibyte.sorted()
            let median = sorted[sorted.count / 2]
            medians.append(median)
            let figures = String(
                format: "%.3f-%.3f s a GiB (median %.3f, %.1f GB/s)",
                sorted[0],
                sorted[sorted.count - 1],
                median,
                1.073741824 / median
            )
            print(kind.name.padding(toLength: 8, withPad: " ", startingAt: 0), figures)
        }
        print(String(format: "XXH3-64 over XXH64, medians: %.2f of the time", medians[1] / medians[0]))
    }
}
