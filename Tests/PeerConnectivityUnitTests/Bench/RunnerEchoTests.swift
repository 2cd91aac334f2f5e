import Foundation
import PeerConnectivity
import Testing

@testable import PeerConnectivityBench

/// What the reflector does with each message of a runner, decided where the message is read.
@Suite("The reflector's answer to each message of a runner")
struct RunnerEchoTests {
    private func makeEcho() -> RunnerEcho {
        RunnerEcho(activity: RunnerActivity(clock: ContinuousIdleClock()))
    }

    /// The reply `response` carries, if it is one.
    private func reply(_ response: MessageResponse) -> Data? {
        if case .reply(let data) = response { return data }
        return nil
    }

    private func isConsumed(_ response: MessageResponse) -> Bool {
        if case .consumed = response { return true }
        return false
    }

    private func isDelivered(_ response: MessageResponse) -> Bool {
        if case .deliver = response { return true }
        return false
    }

    @Test("data is echoed as it came and counted; report and reverse-bulk requests go on to the events")
    func echoes() {
        let echo = makeEcho()
        #expect(reply(echo.respond(to: Data("hello".utf8), mode: .reliable)) == Data("hello".utf8))
        #expect(reply(echo.respond(to: Data("datagram".utf8), mode: .unreliable)) == Data("datagram".utf8))
        #expect(echo.echoed == (2, 13))
        #expect(isDelivered(echo.respond(to: ReflectorReport.request, mode: .reliable)))
        #expect(isDelivered(echo.respond(to: BulkRequest(index: 1, milliseconds: 500).encoded(), mode: .reliable)))
        #expect(echo.echoed == (2, 13), "requests are not echoes")
    }

    @Test("one-way messages between start and end are counted and checked, not echoed; end answers a receipt")
    func oneWay() throws {
        let echo = makeEcho()
        // The reflector's own pattern, which lives as long as the process: `bytes` is a view of its table.
        let pattern = ReflectorService.pattern.bytes(index: 0, offset: 0, count: 100)
        #expect(isConsumed(echo.respond(to: MessageFlow.start(size: 100).encoded(), mode: .reliable)))
        #expect(isConsumed(echo.respond(to: pattern, mode: .reliable)))
        var wrong = pattern
        wrong[5] ^= 0xFF
        #expect(isConsumed(echo.respond(to: wrong, mode: .reliable)))
        #expect(isConsumed(echo.respond(to: pattern, mode: .reliable)))
        let answer = try #require(reply(echo.respond(to: MessageFlow.end(size: 100).encoded(), mode: .reliable)))
        let receipt = try #require(StreamReceipt(decoding: answer))
        #expect(receipt.name == MessageFlow.receiptName)
        #expect(receipt.bytes == 300 && receipt.firstMismatchOffset == 105)
        #expect(echo.echoed == (0, 0))
        // After the end, messages are echoed again.
        #expect(reply(echo.respond(to: pattern, mode: .reliable)) == pattern)
    }

    @Test("datagrams from start-udp to end are counted, reliable messages meanwhile echoed; end answers a receipt")
    func datagrams() throws {
        let echo = makeEcho()
        let start = MessageFlow(action: MessageFlow.startDatagrams, size: 64).encoded()
        #expect(isConsumed(echo.respond(to: start, mode: .reliable)))
        for _ in 0..<3 {
            #expect(isConsumed(echo.respond(to: Data(count: 64), mode: .unreliable)))
        }
        #expect(reply(echo.respond(to: Data("probe".utf8), mode: .reliable)) == Data("probe".utf8))
        let answer = try #require(reply(echo.respond(to: MessageFlow.end(size: 64).encoded(), mode: .reliable)))
        let receipt = try #require(DatagramReceipt.decoded(from: answer))
        #expect(receipt.received == 3 && receipt.bytes == 192)
        // An end with nothing started is taken without an answer.
        #expect(isConsumed(echo.respond(to: MessageFlow.end(size: 64).encoded(), mode: .reliable)))
    }
}
