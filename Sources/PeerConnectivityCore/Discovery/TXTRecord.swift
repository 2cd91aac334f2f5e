/// The DNS-SD TXT record codec (RFC 6763 §6).
///
/// A TXT record is a sequence of strings, each one length byte followed by up to 255 bytes. Each string holds one
/// `key=value` attribute. Keys are printable US-ASCII without `=`, compared case-insensitively; values here are
/// UTF-8 text.
///
/// Encoding is strict and deterministic: keys are sorted, and anything that would not decode back to the same
/// dictionary throws. Decoding is lenient and total: it never traps, whatever the bytes, and skips what it cannot
/// read.
package enum TXTRecord {
    /// The longest a single `key=value` string may be, in bytes: its length must fit in one length byte.
    package static let maximumEntryLength = 255

    /// The longest a whole TXT record may be, in bytes: the RDATA length of a DNS resource record is 16 bits.
    package static let maximumRecordLength = 65_535

    /// The byte value of `=`, which separates a key from its value.
    private static let equalsSign = UInt8(ascii: "=")

    /// Encodes attributes as a TXT record.
    ///
    /// Each entry becomes one length-prefixed `key=value` string; entries are ordered by key so that the same
    /// dictionary always gives the same bytes. An empty dictionary gives a single zero byte, the one empty string
    /// that RFC 6763 §6.1 asks for.
    ///
    /// - Parameter entries: The attributes. Keys must be 1 or more printable US-ASCII characters other than `=`,
    ///   distinct even when compared case-insensitively.
    /// - Returns: The TXT record's RDATA.
    /// - Throws: ``TXTRecordError`` when a key is empty, holds `=` or a character that is not printable US-ASCII,
    ///   clashes case-insensitively with another key, when an entry is longer than ``maximumEntryLength`` bytes,
    ///   or when the whole record is longer than ``maximumRecordLength`` bytes.
    package static func encode(_ entries: [String: String]) throws(TXTRecordError) -> [UInt8] {
        guard !entries.isEmpty else {
            return [0]
        }
        var seenKeys = Set<String>()
        var record: [UInt8] = []
        for key in entries.keys.sorted() {
            try self.validate(key: key)
            guard seenKeys.insert(self.foldCase(key)).inserted else {
                throw .duplicateKey(key: key)
            }
            let entry = Array("\(key)=\(entries[key, default: ""])".utf8)
            guard entry.count <= self.maximumEntryLength else {
                throw .entryTooLong(key: key)
            }
            record.append(UInt8(entry.count))
            record.append(contentsOf: entry)
        }
        guard record.count <= self.maximumRecordLength else {
            throw .recordTooLong
        }
        return record
    }

    /// Decodes a TXT record into attributes, skipping whatever cannot be read.
    ///
    /// Never traps. What it does with malformed input:
    /// - a zero-length string is skipped (an empty record is one such string);
    /// - a string whose length byte runs past the end of the input ends decoding; the strings before it are kept;
    /// - a string without `=` is a boolean attribute (RFC 6763 §6.4) and decodes to an empty value, as does `key=`;
    /// - a string with an empty key, or a key that is not printable US-ASCII, is skipped;
    /// - a value that is not valid UTF-8 is skipped;
    /// - when a key occurs more than once (compared case-insensitively), only its first occurrence counts, as
    ///   RFC 6763 §6.4 requires, even if that occurrence was skipped for its value.
    ///
    /// - Parameter bytes: The TXT record's RDATA.
    /// - Returns: The attributes that could be read.
    package static func decode(_ bytes: some Collection<UInt8>) -> [String: String] {
        var attributes: [String: String] = [:]
        var seenKeys = Set<String>()
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let length = Int(bytes[index])
            let start = bytes.index(after: index)
            guard let end = bytes.index(start, offsetBy: length, limitedBy: bytes.endIndex) else {
                break
            }
            index = end
            let entry = bytes[start..<end]
            guard !entry.isEmpty else {
                continue
            }
            let keyEnd = entry.firstIndex(of: self.equalsSign) ?? entry.endIndex
            let keyBytes = entry[entry.startIndex..<keyEnd]
            guard !keyBytes.isEmpty, keyBytes.allSatisfy(self.isKeyByte) else {
                continue
            }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard seenKeys.insert(self.foldCase(key)).inserted else {
                continue
            }
            let valueStart = keyEnd == entry.endIndex ? keyEnd : entry.index(after: keyEnd)
            guard let value = String(validating: entry[valueStart..<entry.endIndex], as: UTF8.self) else {
                continue
            }
            attributes[key] = value
        }
        return attributes
    }

    /// Checks that a key can be encoded.
    ///
    /// - Parameter key: The key to check.
    /// - Throws: ``TXTRecordError`` when the key is empty, holds `=`, or holds a character that is not printable
    ///   US-ASCII.
    private static func validate(key: String) throws(TXTRecordError) {
        guard !key.isEmpty else {
            throw .emptyKey
        }
        guard !key.utf8.contains(self.equalsSign) else {
            throw .keyContainsEquals(key: key)
        }
        guard key.utf8.allSatisfy(self.isKeyByte) else {
            throw .invalidKeyCharacter(key: key)
        }
    }

    /// Whether a byte may appear in a key: printable US-ASCII (0x20-0x7E) other than `=`.
    ///
    /// - Parameter byte: The byte to check.
    /// - Returns: `true` when the byte is allowed in a key.
    private static func isKeyByte(_ byte: UInt8) -> Bool {
        (0x20...0x7E).contains(byte) && byte != self.equalsSign
    }

    /// The ASCII-lowercased form of a key, used to compare keys case-insensitively as RFC 6763 §6.4 requires.
    ///
    /// - Parameter key: A key of printable US-ASCII characters.
    /// - Returns: The key with `A`-`Z` mapped to `a`-`z`.
    private static func foldCase(_ key: String) -> String {
        String(
            decoding: key.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 },
            as: UTF8.self
        )
    }
}
