import Foundation
import PeerConnectivity
import Testing

/// Two connected sessions over loopback without DNS-SD: `client` invited `host` (directly, or through
/// a proxy `through` starts in front of the host's port and whose port it returns), whose events
/// `hostLog` collects (and `clientLog` the client's).
struct SessionPair {
    let client: Session
    let host: Session
    let clientLog: EventLog
    let hostLog: EventLog
    let advertiser: Advertiser
    let acceptor: Task<Void, Never>

    static func connect(
        host hostConfiguration: Session.Configuration = .default,
        client clientConfiguration: Session.Configuration = .default,
        clientSession: Session? = nil,
        encryption: EncryptionPreference = .default,
        through proxy: (Int) async throws -> Int = { $0 }
    ) async throws -> SessionPair {
        let advertiser = try await loopbackAdvertiser("pair-host", encryption: encryption)
        let host = Session(peer: advertiser.peer, encryptionPreference: encryption, configuration: hostConfiguration)
        let hostLog = EventLog(host)
        let acceptor = acceptAll(advertiser, into: host)
        let client =
            try clientSession
            ?? Session(
                peer: try PeerID(displayName: "pair-client"),
                encryptionPreference: encryption,
                configuration: clientConfiguration
            )
        let clientLog = EventLog(client)
        let port = try await proxy(advertiser.port!)
        try await client.connectPeer(host: "127.0.0.1", port: port, timeout: invitationTimeout)
        try await hostLog.waitFor(client.peer, .connected)
        return SessionPair(
            client: client,
            host: host,
            clientLog: clientLog,
            hostLog: hostLog,
            advertiser: advertiser,
            acceptor: acceptor
        )
    }
}

/// Deterministic bytes: the same seed gives the same content, different seeds differ.
///
/// One loop over the bytes in place: `map` with a closure, unoptimized as tests are built, took 2.4 s for 28 MiB,
/// all of it on a thread of the cooperative pool the tests beside it were waiting for.
func pattern(count: Int, seed: UInt64) -> Data {
    var data = Data(count: count)
    let mix = seed &* 0x9E37_79B9
    data.withUnsafeMutableBytes { buffer in
        let bytes = buffer.bindMemory(to: UInt8.self)
        var index = 0
        while index < count {
            bytes[index] = UInt8(truncatingIfNeeded: ((UInt64(index) &+ mix) &* 0xBF58_476D_1CE4_E5B9) >> 29)
            index += 1
        }
    }
    return data
}

/// A new empty directory under the system's temporary directory; `remove()` deletes it.
struct ScratchDirectory {
    let url: URL

    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pc-test-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Names of what the directory holds, hidden files included, sorted.
    func contents(_ sub: String? = nil) throws -> [String] {
        let directory = sub.map { url.appendingPathComponent($0) } ?? url
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// A file of `mebibytes` MiB (one pattern repeated: cheap to make), for transfers cut short.
    ///
    /// Written on a thread of its own: hundreds of MiB can wait for the disk, and the cooperative pool's threads
    /// (as many as CPUs) are not to wait with them.
    func largeFile(mebibytes: Int) async throws -> URL {
        let file = url.appendingPathComponent("large-\(mebibytes)")
        try await onOwnThread {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            let handle = try FileHandle(forWritingTo: file)
            let block = pattern(count: 1 << 20, seed: 11)
            for _ in 0..<mebibytes { try handle.write(contentsOf: block) }
            try handle.close()
        }
        return file
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
