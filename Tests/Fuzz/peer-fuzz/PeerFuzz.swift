import Foundation
import PeerConnectivityFuzz

#if FUZZING
    /// libFuzzer's entry point (built with `-sanitize=fuzzer -D FUZZING`, see Scripts/fuzz.sh).
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        FrameFuzzer.run(UnsafeRawBufferPointer(start: data, count: count))
        return 0
    }

    /// libFuzzer's driver, `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*)(const uint8_t *, size_t))`.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// SwiftPM gives every executable a Swift entry point (it links `main` to it), so libFuzzer's own
    /// `main` is not used: this one hands the command line to libFuzzer's driver.
    @main
    enum PeerFuzz {
        static func main() {
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runFuzzerDriver(&argc, &argv, fuzzOneInput))
        }
    }
#else
    /// Without libFuzzer: replays files through the fuzz target, or writes the seed inputs.
    @main
    enum PeerFuzz {
        static func main() throws {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "--write-seeds", arguments.count == 2 {
                let folder = URL(fileURLWithPath: arguments[1], isDirectory: true)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for seed in FuzzSeeds.all {
                    try Data(seed.bytes).write(to: folder.appendingPathComponent("seed-\(seed.name)"))
                }
                print("wrote \(FuzzSeeds.all.count) seeds to \(folder.path)")
                return
            }
            guard !arguments.isEmpty, !arguments.contains("--help") else {
                print(
                    """
                    usage: peer-fuzz <file or folder>...   replay inputs through the fuzz target
                           peer-fuzz --write-seeds <folder>  write the seed inputs
                    Built with Scripts/fuzz.sh it is a libFuzzer binary instead.
                    """
                )
                return
            }
            var count = 0
            for path in arguments {
                for file in try CorpusReplay.files(at: path) {
                    try CorpusReplay.replay(file)
                    count += 1
                }
            }
            print("replayed \(count) inputs")
        }
    }
#endif
