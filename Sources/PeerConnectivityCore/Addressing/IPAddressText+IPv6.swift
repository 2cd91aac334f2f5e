/// IPv6 addresses in text form, read into their 16 bytes and written back in the one form RFC 5952 gives
/// them, so that an address range can be cut out of an address (``AdmissionKey``).
extension IPAddressText {
    /// The 16 bytes of an IPv6 address.
    ///
    /// - Parameter text: an IPv6 address in any RFC 4291 text form ("fd00:1::28", "0:0:0:0:0:0:0:1",
    ///   "::ffff:192.0.2.7"), without a scope.
    /// - Returns: the bytes, or nil when `text` is not an IPv6 address.
    package static func ipv6Bytes(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.count <= 45 else { return nil }
        var groups: [UInt16] = []
        var tail: [UInt16] = []
        var compressed = false
        var halves = [text]
        if let gap = text.firstRange(of: "::") {
            halves = [text[..<gap.lowerBound], text[gap.upperBound...]]
            guard !halves[1].contains("::") else { return nil }
        }
        for (index, half) in halves.enumerated() {
            let isLast = index == halves.count - 1
            guard let parsed = parseGroups(half, mayEndInIPv4: isLast) else { return nil }
            if index == 0 { groups = parsed } else { tail = parsed }
        }
        if halves.count == 2 {
            compressed = true
            guard groups.count + tail.count <= 7 else { return nil }
            groups += Array(repeating: 0, count: 8 - groups.count - tail.count) + tail
        }
        guard groups.count == 8, compressed || !text.hasPrefix(":") && !text.hasSuffix(":") else { return nil }
        return groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }

    /// An IPv6 address's text in RFC 5952's form: lowercase, no leading zeros, the longest run of two or
    /// more zero groups (the first of equal runs) written "::".
    ///
    /// - Parameter bytes: the 16 bytes.
    /// - Returns: the text.
    package static func ipv6Text(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 16, "an IPv6 address has 16 bytes")
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        var best: (start: Int, length: Int) = (0, 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8, groups[end] == 0 { end += 1 }
            if end - index > best.length { best = (index, end - index) }
            index = end
        }
        func hex(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard best.length >= 2 else { return hex(0..<8) }
        return hex(0..<best.start) + "::" + hex((best.start + best.length)..<8)
    }

    /// The groups of one side of "::", the last of which may be an IPv4 address (two groups).
    private static func parseGroups(_ text: Substring, mayEndInIPv4: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if index == parts.count - 1, mayEndInIPv4, part.contains(".") {
                let octets = part.split(separator: ".", omittingEmptySubsequences: false).compactMap { octet in
                    (1...3).contains(octet.count) && octet.allSatisfy(\.isASCII) ? UInt8(octet) : nil
                }
                guard octets.count == 4 else { return nil }
                groups += [UInt16(octets[0]) << 8 | UInt16(octets[1]), UInt16(octets[2]) << 8 | UInt16(octets[3])]
                continue
            }
            guard (1...4).contains(part.count), part.allSatisfy(\.isHexDigit), let group = UInt16(part, radix: 16)
            else { return nil }
            groups.append(group)
        }
        return groups
    }
}
