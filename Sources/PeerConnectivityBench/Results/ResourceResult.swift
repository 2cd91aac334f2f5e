import PeerConnectivity

/// One resource of the resource test: a file of `--bytes` sent with `sendResource`, received and
/// confirmed by the reflector (size and SHA-256 of the file it got). Times are nanoseconds.
///
/// With `--interrupt-at`, the link is cut once the file is that far sent and resumed by reconnection;
/// the transfer goes on over the resumed link, and ``interruptedAtBytes``, ``bytesSentAfterResume``
/// and ``resumedBytes`` tell how much crossed again.
public struct ResourceResult: Codable, Hashable, Sendable {
    /// The transfer's number: 0 to `--count` − 1 (warm-up transfers are not kept).
    public var index: Int
    /// The name it was sent with.
    public var name: String
    /// The file's size.
    public var bytes: Int
    /// What became of it.
    public var outcome: TransferOutcome
    /// Why it failed or was judged corrupted.
    public var error: String?
    /// `sendResource` called to `wait()` returning: the library's own end-to-end check (the reflector's
    /// session has checked the SHA-256 and kept the file).
    public var transferNanoseconds: UInt64?
    /// `wait()` returning to the reflector's confirmation arriving (its own hashing of the file included).
    public var confirmationNanoseconds: UInt64?
    /// `bytes` over `transferNanoseconds`.
    public var bytesPerSecond: Double
    /// The size the reflector reported.
    public var confirmedSize: Int?
    /// The SHA-256 the reflector reported.
    public var confirmedSHA256: String?
    /// The folder test: the files sent; nil for a file.
    public var files: Int?
    /// The folder test: the files the reflector reported.
    public var confirmedFiles: Int?
    /// What the library says the sender did: blocks sent and resumed, bytes that crossed, reopenings,
    /// and the seconds spent reading and hashing the file (summed over threads); nil when the transfer
    /// never started.
    public var statistics: ResourceTransferStatistics?
    /// `--interrupt-at`: the bytes of the file sent when the link was cut; nil when it was not.
    public var interruptedAtBytes: UInt64?
    /// `--interrupt-at`: the bytes of the file sent from the cut to the end (over the resumed link, and
    /// what was still queued at the cut): `statistics.bytesSent` − ``interruptedAtBytes``.
    public var bytesSentAfterResume: UInt64?
    /// `--interrupt-at`: the bytes the reflector held from the cut attempt, which did not cross again
    /// (`statistics.bytesResumed`).
    public var resumedBytes: UInt64?

    /// Makes a result, not yet sent.
    ///
    /// - Parameters:
    ///   - index: its number.
    ///   - name: its name.
    ///   - bytes: its size.
    public init(index: Int, name: String, bytes: Int) {
        self.index = index
        self.name = name
        self.bytes = bytes
        outcome = .failed
        bytesPerSecond = 0
    }
}

extension ResourceResult {
    /// One line of the runner's summary: "resource 0: completed, 64.0 MiB in 0.52 s (129.1 MB/s); 64 blocks,
    /// 64 sent, 0 resumed, 0 reopenings; read 0.05 s, hash 0.21 s (summed over threads), blocks digested with
    /// XXH3-64", then, when the
    /// link was cut, where, what the reflector held, what crossed after, and whether the digest matched.
    public var line: String {
        var text =
            (files == nil ? "resource" : "folder") + " \(index): \(outcome.rawValue), "
            + (files.map { "\($0) files, " } ?? "") + Self.mebibytes(UInt64(max(bytes, 0)))
        if let transferNanoseconds {
            text += String(
                format: " in %.2f s (%.1f MB/s",
                Double(transferNanoseconds) / 1e9,
                bytesPerSecond / 1e6
            )
            if let files, transferNanoseconds > 0 {
                text += String(format: ", %.0f files/s", Double(files) / (Double(transferNanoseconds) / 1e9))
            }
            text += ")"
        }
        if let statistics {
            text +=
                "; \(statistics.blocks) blocks, \(statistics.blocksSent) sent, \(statistics.blocksResumed) resumed, "
                + "\(statistics.reopenings) reopening\(statistics.reopenings == 1 ? "" : "s")"
                + String(
                    format: "; read %.2f s, hash %.2f s (summed over threads)",
                    statistics.readSeconds,
                    statistics.hashSeconds
                )
                + (statistics.blockDigest.map { ", blocks digested with \($0)" } ?? "")
        }
        if let interruptedAtBytes {
            let share = { (value: UInt64) in
                self.bytes > 0 ? String(format: " (%.1f %%)", Double(value) * 100 / Double(self.bytes)) : ""
            }
            text += "\n  cut at \(Self.mebibytes(interruptedAtBytes))\(share(interruptedAtBytes)) sent"
            if let resumedBytes { text += "; the reflector held \(Self.mebibytes(resumedBytes)), not sent again" }
            if let bytesSentAfterResume {
                text += "; sent after the cut \(Self.mebibytes(bytesSentAfterResume))\(share(bytesSentAfterResume))"
            }
            if outcome == .completed {
                text += "; the reflector confirmed the whole file's SHA-256"
            }
        }
        if let error { text += "\n  \(error)" }
        return text
    }

    private static func mebibytes(_ bytes: UInt64) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}
