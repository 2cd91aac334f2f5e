import Foundation

/// How a typed message travels in a data message: a header naming its type, then its JSON.
///
/// ```
/// 0xFE 'P' 'C' 'M'   magic (0xFE never appears in UTF-8 text, so a text message never starts so)
/// 0x01               envelope version
/// n (1 byte)         length of the type's name, 1-255
/// n bytes            the type's name, UTF-8 (`String(describing: T.self)`: "ChatLine")
/// rest               the value, JSON (`JSONEncoder`, default options)
/// ```
///
/// A data message that does not start with this header is not a typed message: typed sequences skip it.
enum MessageEnvelope {
    static let magic: [UInt8] = [0xFE, 0x50, 0x43, 0x4D]
    static let version: UInt8 = 1

    /// The name a type travels under: its name without its module (so that two programs that define
    /// the same type in modules of different names understand each other), cut to 255 bytes.
    static func typeName<T>(of type: T.Type) -> String {
        var name = String(describing: type)
        while name.utf8.count > 255 { name.removeLast() }
        return name
    }

    /// The header for messages of `typeName`.
    static func header(typeName: String) -> [UInt8] {
        let name = Array(typeName.utf8)
        return magic + [version, UInt8(name.count)] + name
    }

    /// A typed message: the header and the value's JSON.
    ///
    /// - Throws: `EncodingError` when the value does not encode.
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        var data = Data(header(typeName: typeName(of: T.self)))
        data.append(try JSONEncoder().encode(value))
        return data
    }

    /// The name and body of a typed message; `nil` for a message that is not one.
    static func open(_ data: Data) -> (typeName: Substring, body: Data)? {
        let start = data.startIndex
        let fixed = magic.count + 2
        guard data.count > fixed, data.starts(with: magic), data[start + magic.count] == version else { return nil }
        let nameLength = Int(data[start + magic.count + 1])
        guard nameLength > 0, data.count >= fixed + nameLength else { return nil }
        let nameBytes = data[(start + fixed)..<(start + fixed + nameLength)]
        guard let name = String(bytes: nameBytes, encoding: .utf8) else { return nil }
        return (Substring(name), data[(start + fixed + nameLength)...])
    }
}
