/// Makes text that came from a peer safe to write into a log line: control characters escaped, so that
/// a peer cannot start a line of its choosing or send terminal escapes, and the length capped, so that
/// one field cannot flood the log.
///
/// A display name, an invitation context, a stream or resource name, a DNS-SD instance name or TXT
/// value: every string a peer chose goes through this before it reaches a log.
package enum LogSafe {
    /// The longest a peer's string is written, in characters, unless a caller asks for another limit.
    package static let defaultLimit = 256

    /// `text` with every control character escaped (`\n`, `\r`, `\t`, `\u{1B}`, ...), as are Unicode's
    /// line and paragraph separators and the bidirectional overrides that reorder what a reader sees;
    /// longer than `limit` characters, it is cut and says how many characters were left out.
    ///
    /// - Parameters:
    ///   - text: a string a peer chose.
    ///   - limit: the most characters of it to keep.
    /// - Returns: one line of printable text.
    package static func escaped<Text: StringProtocol>(_ text: Text, limit: Int = defaultLimit) -> String {
        var result = ""
        var kept = 0
        var count = 0
        for character in text {
            count += 1
            guard kept < limit else { continue }
            kept += 1
            for scalar in character.unicodeScalars {
                if let escape = escape(scalar) {
                    result += escape
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        if count > kept {
            result += "…(\(count - kept) more characters)"
        }
        return result
    }

    /// Whether `text` needs no escaping and fits `limit` (then `escaped` returns it unchanged).
    package static func isClean<Text: StringProtocol>(_ text: Text, limit: Int = defaultLimit) -> Bool {
        text.count <= limit && !text.unicodeScalars.contains { escape($0) != nil }
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String? {
        switch scalar.value {
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        case 0x00..<0x20, 0x7F..<0xA0,  // C0, DEL, C1
            0x2028, 0x2029,  // line and paragraph separators
            0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:  // bidirectional marks and overrides
            return "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        default:
            return nil
        }
    }
}
