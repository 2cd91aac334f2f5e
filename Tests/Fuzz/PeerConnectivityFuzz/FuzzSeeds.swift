import Foundation
import NIOCore
import PeerConnectivityCore

/// Valid conversations to start the fuzzer from: every frame type, in the order a real peer sends them.
package enum FuzzSeeds {
    /// The seeds by file name: an options byte (see ``FrameFuzzer``) and the peer's bytes.
    package static var all: [(name: String, bytes: [UInt8])] {
        let bob = try! PeerID(id: UUID(uuid: (2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2)), displayName: "bob")
        let carol = try! PeerID(id: UUID(uuid: (3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3)), displayName: "carol")
        let hello = Frame.hello(Frame.Hello(peer: bob))
        let invite = Frame.invite(
            Frame.Invite(timeoutMilliseconds: 30_000, fields: .defaultLimits, context: ByteBuffer(string: "join"))
        )
        let stream = Frame.open(Frame.Open(channel: 1, kind: .stream, size: 0, name: Array("s".utf8)))
        let resource = Frame.open(Frame.Open(channel: 3, kind: .resource, size: 4, name: Array("r.txt".utf8)))
        let connected: [Frame] = [
            .data(ByteBuffer(string: "hello")),
            .keepalive,
            .datagramEndpoint(port: 4000, token: 42),
            .sessionListener(port: 4001),
            .members([Frame.Member(peer: carol, address: [127, 0, 0, 1], port: 4002)]),
            stream,
            .chunk(channel: 1, ByteBuffer(string: "abc")),
            .end(channel: 1, digest: nil),
            resource,
            .chunk(channel: 3, ByteBuffer(string: "data")),
            .end(channel: 3, digest: Array(repeating: 7, count: 32)),
            .reset(channel: 3, .cancelled),
            .credit(channel: 2, increment: 100),
            .done(channel: 2),
            .goodbye(.localDisconnect),
        ]
        func bytes(_ options: UInt8, _ frames: [Frame]) -> [UInt8] {
            var buffer = ByteBuffer(bytes: [options])
            for frame in frames { FrameEncoder.encode(frame, into: &buffer) }
            return buffer.readBytes(length: buffer.readableBytes)!
        }
        return [
            ("invitee-accepts", bytes(0x02, [hello, invite] + connected)),
            ("invitee-bytewise", bytes(0x06, [hello, invite] + connected)),
            ("invitee-channels-credit", bytes(0x52, [hello, invite] + connected)),
            ("invitee-undecided", bytes(0x20, [hello, invite, .data(ByteBuffer(string: "early"))])),
            ("inviter-accepted", bytes(0x01, [hello, .accept(.defaultLimits)] + connected)),
            ("inviter-declined", bytes(0x0D, [hello, .decline(.busy)])),
            (
                "inviter-keepalive-ticks",
                bytes(0x11, [hello, .accept(.defaultLimits), .keepalive, .data(ByteBuffer(string: "x"))])
            ),
        ]
    }
}
