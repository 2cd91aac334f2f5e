import Foundation
import PeerConnectivityFuzz
import PeerConnectivityTesting
import Testing

/// The fuzz target's committed corpus (Tests/FuzzCorpus, grown by Scripts/fuzz.sh) and seeds, replayed:
/// an input that once crashed or broke an invariant would trap here again.
@Suite("Fuzz corpus replay")
struct FuzzCorpusTests {
    static let corpus = repositoryRoot().appendingPathComponent("Tests/FuzzCorpus")

    @Test("every committed corpus input runs through the parser and the state machine")
    func corpus() throws {
        let files = try CorpusReplay.files(at: Self.corpus.path)
        #expect(files.count >= FuzzSeeds.all.count, "the corpus at \(Self.corpus.path) is missing or empty")
        for file in files {
            try CorpusReplay.replay(file)
        }
    }

    @Test("the seeds parse whole; all but the declined and undecided ones reach the connected state")
    func seeds() {
        #expect(FuzzSeeds.all.count >= 7)
        for seed in FuzzSeeds.all {
            let outcome = seed.bytes.withUnsafeBytes { FrameFuzzer.run($0) }
            #expect(!outcome.rejected, "seed \(seed.name) was rejected")
            let staysInHandshake = seed.name.hasSuffix("declined") || seed.name.hasSuffix("undecided")
            #expect(outcome.established == !staysInHandshake, "seed \(seed.name): \(outcome)")
        }
    }

    @Test("inputs of every length up to 64 bytes of one value, in every options mode, do not trap")
    func shortInputs() {
        for options in UInt8.min...UInt8.max {
            for filler: UInt8 in [0x00, 0x01, 0x10, 0xFF] {
                for length in [0, 1, 4, 5, 9, 64] {
                    let input = [options] + [UInt8](repeating: filler, count: length)
                    _ = input.withUnsafeBytes { FrameFuzzer.run($0) }
                }
            }
        }
    }
}
