import BenchmarkPairs
import Foundation
import PeerConnectivity

/// A resource sent from one session to another of this process over loopback TCP (no DNS-SD), plaintext:
/// the user-space work a resource's bytes cost at both ends (the sender's reading and hashing, framing,
/// the receiver's checking and writing), for `RoundTripCounts resource MIB`. The file and the landing
/// folder are on `/dev/shm` when it exists, so that the disk stays out; a warm-up resource of 4 MiB crosses
/// first, so that the counted one finds the connection, the file executor and the receive pool as a
/// transfer under way does.
enum ResourceCounts {
    /// Sends a warm-up resource, then one of `mebibytes` MiB between two calls of `boundary`.
    static func run(mebibytes: Int, boundary: () -> Void) async throws {
        let scratch = FileManager.default.fileExists(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm") : nil
        let folder = (scratch ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("resource-counts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let landing = folder.appendingPathComponent("landing")
        try FileManager.default.createDirectory(at: landing, withIntermediateDirectories: true)

        var receiving = Session.Configuration.default
        receiving.joinsMesh = false
        receiving.resourceDirectory = landing
        let receiver = Session(
            peer: try PeerID(displayName: "counts-receiver"),
            encryptionPreference: .none,
            configuration: receiving
        )
        var listening = Advertiser.Configuration.default
        listening.host = "127.0.0.1"
        listening.publishesService = false
        let advertiser = try Advertiser(
            peer: receiver.peer,
            serviceType: "pc-counts",
            encryptionPreference: .none,
            configuration: listening
        )
        try await advertiser.start()
        let accepting = Task {
            for await invitation in advertiser.invitations { try? await invitation.accept(into: receiver) }
        }
        var sending = Session.Configuration.default
        sending.joinsMesh = false
        let sender = Session(
            peer: try PeerID(displayName: "counts-sender"),
            encryptionPreference: .none,
            configuration: sending
        )
        guard let port = advertiser.port else { throw BenchmarkFailure("the advertiser has no port") }
        let peer = try await sender.connectPeer(host: "127.0.0.1", port: port, timeout: .seconds(10))
        var arrivals = receiver.events.makeAsyncIterator()

        // Both files are made before the count begins: only their sending is counted.
        for (name, size) in [("warm-up", 4), ("counted", mebibytes)] {
            try Self.pattern(mebibytes: size).write(to: folder.appendingPathComponent(name))
        }
        func send(_ name: String, mebibytes: Int) async throws {
            let file = folder.appendingPathComponent(name)
            let transfer = try sender.sendResource(at: file, withName: name, toPeer: peer)
            try await transfer.wait()
            while let event = await arrivals.next() {
                guard case .finishedReceivingResource(let arrived, _, let result) = event, arrived == name else {
                    continue
                }
                let url = try result.get()
                let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int
                guard size == mebibytes << 20 else {
                    throw BenchmarkFailure("\(name) arrived with \(size ?? -1) bytes")
                }
                try FileManager.default.removeItem(at: url)
                return
            }
            throw BenchmarkFailure("the receiving session ended before \(name) arrived")
        }

        try await send("warm-up", mebibytes: 4)
        boundary()
        if mebibytes > 0 { try await send("counted", mebibytes: mebibytes) }
        boundary()
        await sender.disconnect()
        await receiver.disconnect()
        await advertiser.stop()
        accepting.cancel()
    }

    /// `mebibytes` MiB of bytes that repeat no block (each 8-byte word its index, scrambled).
    private static func pattern(mebibytes: Int) -> Data {
        var data = Data(count: mebibytes << 20)
        data.withUnsafeMutableBytes { bytes in
            let words = bytes.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 }
        }
        return data
    }
}
