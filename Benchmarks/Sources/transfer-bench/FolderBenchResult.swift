import Foundation
import PeerConnectivityBench

/// What one `transfer-bench folder` run measured, written as JSON.
struct FolderBenchResult: Codable {
    /// The document's layout; a reader checks it before reading the rest.
    var schemaVersion = 1
    var date: Date
    var host: HostInfo
    /// Both sessions' encryption preference.
    var encryption: String
    /// Regular files in the folder.
    var files: Int
    /// Their bytes added up.
    var bytes: Int
    /// From `sendResource` to the end of `wait()`.
    var seconds: Double
    var filesPerSecond: Double
    var bytesPerSecond: Double
    /// The sending process's CPU time and memory over the transfer.
    var sender: PhaseUsage
    /// Why the folder did not cross, when it did not (the figures then say how far it got in time).
    var error: String?
}
