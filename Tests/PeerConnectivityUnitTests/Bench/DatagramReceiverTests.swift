import Foundation
import Testing

@testable import PeerConnectivityBench

/// The reflector's count of datagrams at a bitrate: duplicates, order, RFC 3550 jitter, seconds.
@Suite("Datagram receiver")
struct DatagramReceiverTests {
    /// Datagram `sequence` of `length` bytes, sent at `sent` nanoseconds.
    func datagram(_ sequence: UInt64, sent: UInt64, length: Int = 100) -> Data {
        DatagramReceiver.header(sequence: sequence, sentNanoseconds: sent)
            + Data(repeating: 7, count: length - DatagramReceiver.headerLength)
    }

    @Test("every datagram once, in order, evenly spaced: no loss of order, no jitter")
    func even() {
        var receiver = DatagramReceiver()
        for sequence in 0..<10 as Range<UInt64> {
            receiver.record(datagram(sequence, sent: sequence * 1_000), arrivalNanoseconds: 5_000 + sequence * 1_000)
        }
        #expect(receiver.received == 10 && receiver.unique == 10 && receiver.bytes == 1_000)
        #expect(receiver.duplicates == 0 && receiver.outOfOrder == 0 && receiver.jitterNanoseconds == 0)
    }

    @Test("a duplicate is counted once as such; one overtaken by a later one is out of order")
    func duplicatesAndOrder() {
        var receiver = DatagramReceiver()
        for (sequence, arrival) in [(0, 0), (2, 10), (1, 20), (2, 30), (3, 40)] as [(UInt64, UInt64)] {
            receiver.record(datagram(sequence, sent: arrival), arrivalNanoseconds: arrival)
        }
        #expect(receiver.received == 5 && receiver.unique == 4)
        #expect(receiver.duplicates == 1 && receiver.outOfOrder == 1)
    }

    @Test("jitter: J += (|D| - J) / 16, D the change in transit time between arrivals (RFC 3550 §6.4.1)")
    func jitter() {
        var receiver = DatagramReceiver()
        // Transit times 100, 116, 100 ns: |D| is 16 then 16; J = 1, then 1 + 15/16.
        for (sequence, sent, arrival) in [(0, 0, 100), (1, 1_000, 1_116), (2, 2_000, 2_100)]
            as [(UInt64, UInt64, UInt64)]
        {
            receiver.record(datagram(sequence, sent: sent), arrivalNanoseconds: arrival)
        }
        #expect(receiver.jitterNanoseconds == 1 + 15.0 / 16)
    }

    @Test("arrivals per second from the first; a datagram shorter than its header is counted in bytes only")
    func seconds() {
        var receiver = DatagramReceiver()
        receiver.record(datagram(0, sent: 0), arrivalNanoseconds: 1_000_000_000)
        receiver.record(datagram(1, sent: 0), arrivalNanoseconds: 1_500_000_000)
        receiver.record(datagram(2, sent: 0), arrivalNanoseconds: 3_200_000_000)
        receiver.record(Data([1, 2, 3]), arrivalNanoseconds: 3_300_000_000)
        #expect(receiver.seconds.map(\.datagrams) == [2, 0, 2])
        #expect(receiver.seconds.map(\.bytes) == [200, 0, 103])
        #expect(receiver.received == 4 && receiver.unique == 4 && receiver.outOfOrder == 0)
        let receipt = DatagramReceipt(receiver)
        #expect(receipt.bytesPerSecond == [200, 0, 103] && receipt.unique == 4)
        let result = DatagramBulkResult(
            length: 100,
            targetBitsPerSecond: 800,
            seconds: 2,
            sent: 5,
            receipt: receipt,
            maximumLatenessNanoseconds: 0
        )
        #expect(result.sentBitsPerSecond == 2_000 && result.lostDatagrams == 1 && result.lostPercent == 20)
    }
}
