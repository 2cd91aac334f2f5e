import Foundation

/// Turns the name a peer gave a resource (untrusted bytes) into a file name that stays inside the
/// receive directory, and places a finished file there without overwriting anything.
package enum ResourceFileName {
    /// The longest file name made, in UTF-8 bytes (file systems allow 255; room is left for " (999)").
    package static let maximumLength = 200

    /// A safe file name for `raw`: one path component, never "." or "..", no hidden file, no
    /// control characters, at most ``maximumLength`` bytes; "resource" when nothing is left.
    ///
    /// - Parameter raw: the name as sent; invalid UTF-8 is repaired (U+FFFD).
    /// - Returns: the file name.
    package static func sanitized(_ raw: [UInt8]) -> String {
        isSafeAsSent(raw) ? String(decoding: raw, as: UTF8.self) : sanitizedScalars(raw)
    }

    /// What ``sanitized(_:)`` makes of any name, scalar by scalar (the path every name could take;
    /// most take the shortcut of ``isSafeAsSent(_:)``, which gives the same name).
    package static func sanitizedScalars(_ raw: [UInt8]) -> String {
        let repaired = String(decoding: raw, as: UTF8.self)
        var scalars = String.UnicodeScalarView()
        for scalar in repaired.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F, 0x2F, 0x5C:  // control characters, '/', '\'
                scalars.append("_")
            default:
                scalars.append(scalar)
            }
        }
        var name = String(scalars).trimmingCharacters(in: .whitespaces)
        while name.hasPrefix(".") {
            name.removeFirst()
        }
        var length = 0
        var kept = ""
        for character in name {
            length += character.utf8.count
            guard length <= maximumLength else { break }
            kept.append(character)
        }
        kept = kept.trimmingCharacters(in: .whitespaces)
        return kept.isEmpty ? "resource" : kept
    }

    /// Whether `raw` is already what ``sanitized(_:)`` would make of it, as most names are: printable
    /// ASCII without "/" or "\\", neither starting with "." or a space nor ending with a space, at most
    /// ``maximumLength`` bytes. Such a name is taken as it is, without the Unicode pass.
    package static func isSafeAsSent(_ raw: [UInt8]) -> Bool {
        guard let first = raw.first, let last = raw.last, raw.count <= maximumLength,
            first != UInt8(ascii: "."), first != UInt8(ascii: " "), last != UInt8(ascii: " ")
        else { return false }
        return raw.allSatisfy { byte in
            (0x20...0x7E).contains(byte) && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "\\")
        }
    }

    /// The candidates for `name`, in order: "name.ext", "name (2).ext", ... "name (999).ext"; each made
    /// only when it is reached (the first is usually free, and a folder's every file asks), and the
    /// name split into stem and extension only for the second.
    package static func candidates(for name: String) -> LazyMapCollection<ClosedRange<Int>, String> {
        (1...999).lazy.map { number in
            if number == 1 { return name }
            let ext = URL(fileURLWithPath: name, isDirectory: false).pathExtension
            let stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
            return ext.isEmpty ? "\(stem) (\(number))" : "\(stem) (\(number)).\(ext)"
        }
    }
}
