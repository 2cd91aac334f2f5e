import Foundation
import PeerConnectivity
import PeerConnectivityBench
import PeerConnectivityTesting
import Testing

/// What a runner's transfers leave in a reflector's receive directory once the reflector has confirmed
/// them: nothing, whether a folder crosses file by file or whole, and whatever its name.
@Suite("A reflector leaves nothing of a runner's transfers", .timeLimit(.minutes(2 * slowdown)))
struct ReflectorLeftoversTests {
    /// Long enough for a runner's handshake on a machine busy with the suite in parallel.
    private static let connectTimeout: Duration = .seconds(30) * slowdown

    @Test("a folder sent file by file leaves no empty folder, and one named '..' sent whole leaves nothing either")
    func nothingLeft() async throws {
        let scratch = try ScratchDirectory("reflector-leftovers")
        defer { scratch.remove() }
        let directory = scratch.url.appendingPathComponent("received", isDirectory: true)
        var configuration = ReflectorConfiguration(
            name: "leftovers",
            host: "127.0.0.1",
            port: 0,
            rawEchoPort: nil,
            publishesService: false,
            resourceDirectory: directory
        )
        configuration.datagramPorts = nil
        configuration.handshakeTimeout = Self.connectTimeout
        let reflector = try ReflectorService(configuration: configuration) { _ in }
        try await reflector.start()
        let port = try #require(reflector.port)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        try writeFolder(["a/b/x.txt": Data("x".utf8), "a/y.txt": Data("y".utf8), "z.txt": Data("z".utf8)], in: source)

        var perFile = Session.Configuration.patient
        perFile.sendsFoldersWhole = false
        for (name, runnerConfiguration) in [("album", perFile), ("..", Session.Configuration.patient)] {
            let runner = Session(peer: try PeerID(displayName: "leftovers-runner"), configuration: runnerConfiguration)
            let peer = try await runner.connectPeer(host: "127.0.0.1", port: port, timeout: Self.connectTimeout)
            // Once this returns every file is placed (DONE follows the placing); what stays is the reflector's.
            try await runner.sendResource(at: source, withName: name, toPeer: peer).wait()
            try await waitFor("the reflector to remove what \"\(name)\" made") {
                receiveDirectoryEntries(directory).isEmpty
            }
            await runner.disconnect()
        }
        await reflector.stop()
    }
}
