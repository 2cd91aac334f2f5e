import Foundation
import PeerConnectivityTransport
import Testing

/// The C library's part, in one place: addresses in text and bytes, the descriptor limit, accept errors, mapped
/// memory.
@Suite("Platform")
struct PlatformTests {
    @Test("IPv4 and IPv6 addresses go to bytes and back; anything else is nil")
    func addresses() {
        #expect(Platform.addressBytes("192.0.2.7") == [192, 0, 2, 7])
        #expect(Platform.addressBytes("fe80::1")?.count == 16)
        #expect(Platform.addressBytes("fe80::1").flatMap { Platform.addressString($0) } == "fe80::1")
        #expect(Platform.addressString([10, 0, 0, 2]) == "10.0.0.2")
        #expect(Platform.addressBytes("not an address") == nil)
        #expect(Platform.addressString([1, 2, 3]) == nil)
    }

    @Test("the descriptor limit is read, and resource exhaustion is told from other accept errors")
    func limitsAndErrors() {
        #expect((Platform.fileDescriptorLimit ?? 0) > 0)
        #expect(Platform.isResourceExhaustion(24))  // EMFILE
        #expect(Platform.isOutOfFileDescriptors(23))  // ENFILE
        #expect(!Platform.isResourceExhaustion(111))  // ECONNREFUSED
        #expect(!Platform.isOutOfFileDescriptors(12))  // ENOMEM: exhaustion, but not of descriptors
    }

    #if os(Linux)
        @Test("a mapping of 2 MiB or more asks for huge pages, a smaller one does not")
        func mappingsAskForHugePages() throws {
            let large = try #require(Platform.mapMemory(4 << 20))
            defer { Platform.unmapMemory(large, count: 4 << 20) }
            let small = try #require(Platform.mapMemory(64 << 10))
            defer { Platform.unmapMemory(small, count: 64 << 10) }
            // Read through a handle to its end: `String(contentsOfFile:)` gave only the first page of it here.
            let file = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
            defer { try? file.close() }
            let smaps = String(decoding: try #require(try file.readToEnd()), as: UTF8.self)
            // A kernel built without transparent huge pages refuses the hint and marks nothing.
            if FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled") {
                #expect(try #require(Self.flags(of: large, in: smaps)).contains("hg"))
            }
            #expect(try !#require(Self.flags(of: small, in: smaps)).contains("hg"))
        }

        /// The `VmFlags` of the mapping that holds `address`, from `/proc/self/smaps`.
        private static func flags(of address: UnsafeMutableRawPointer, in smaps: String) -> [Substring]? {
            let target = UInt(bitPattern: address)
            var inside = false
            for line in smaps.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if let range = fields.first, range.contains("-"), fields.count >= 5 {
                    let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                    inside = bounds.count == 2 && bounds[0] <= target && target < bounds[1]
                } else if inside, fields.first == "VmFlags:" {
                    return Array(fields.dropFirst())
                }
            }
            return nil
        }
    #endif
}
