import NIOCore

/// The fields that end a HELLO, an INVITE and an ACCEPT (version 3): what a side says about itself
/// beyond its identity, each field typed and sized so that a later version can add fields that this
/// one skips without a new protocol version (docs/PROTOCOL.md).
///
/// Wire form: a count (UInt8), then per field its type (UInt8), its length (UInt16) and its value.
/// A field of a type this version does not know is skipped; a known field of the wrong length, a
/// known field twice, or a list that runs past the frame is malformed.
package struct HandshakeFields: Sendable, Hashable {
    /// The field types this version knows.
    package enum FieldType: UInt8 {
        /// The largest reliable message the sender accepts on this connection, in bytes (UInt32).
        /// Required in INVITE and ACCEPT.
        case maximumMessageLength = 1
        /// The sender reads folder channels (``ChannelKind/folder``); no value. A side that does not
        /// say so is sent a folder one resource per file.
        case readsFolders = 2
        /// The sender checks its UDP path with probes and answers the peer's (``DatagramProbe``); no value.
        /// Probes go only to a peer that says so; to one that does not, datagrams go unchecked.
        case probesDatagrams = 3
        /// The sender hashes blocks with XXH3-64 (``BlockDigestKind/xxh3``); no value. A connection
        /// whose two sides say so makes every block digest with it, any other with XXH64.
        case hashesBlocksWithXXH3 = 4
    }

    /// The largest reliable message the sender accepts, when it says.
    package var maximumMessageLength: UInt32?
    /// Whether the sender reads folder channels.
    package var readsFolders: Bool
    /// Whether the sender probes its UDP path and answers probes.
    package var probesDatagrams: Bool
    /// Whether the sender hashes blocks with XXH3-64.
    package var hashesBlocksWithXXH3: Bool

    /// The fields; none by default.
    package init(
        maximumMessageLength: UInt32? = nil,
        readsFolders: Bool = false,
        probesDatagrams: Bool = false,
        hashesBlocksWithXXH3: Bool = false
    ) {
        self.maximumMessageLength = maximumMessageLength
        self.readsFolders = readsFolders
        self.probesDatagrams = probesDatagrams
        self.hashesBlocksWithXXH3 = hashesBlocksWithXXH3
    }

    /// The fields of a side of this version that accepts messages of up to `maximumMessageLength` bytes
    /// (and reads folder channels, probes datagrams and hashes blocks with XXH3-64).
    ///
    /// - Parameter maximumMessageLength: the limit; above 4 GiB - 1 it is announced as that.
    package init(acceptingMessagesUpTo maximumMessageLength: Int) {
        self.maximumMessageLength = UInt32(clamping: maximumMessageLength)
        self.readsFolders = true
        self.probesDatagrams = true
        self.hashesBlocksWithXXH3 = true
    }

    /// The most bytes a field list may take, count included: fields of later versions fit in it, and a
    /// peer cannot make a handshake frame large with them.
    package static let maximumEncodedLength = 1024

    /// The fields of a side with the default limit (``WireProtocol/defaultMaximumMessageLength``).
    package static let defaultLimits = HandshakeFields(acceptingMessagesUpTo: WireProtocol.defaultMaximumMessageLength)

    /// The bytes these fields take on the wire.
    package var encodedLength: Int {
        1 + (maximumMessageLength == nil ? 0 : 1 + 2 + 4) + flags.count * (1 + 2)
    }

    /// The fields without a value that these fields say.
    private var flags: [FieldType] {
        let said: [(Bool, FieldType)] = [
            (readsFolders, .readsFolders), (probesDatagrams, .probesDatagrams),
            (hashesBlocksWithXXH3, .hashesBlocksWithXXH3),
        ]
        return said.compactMap { $0.0 ? $0.1 : nil }
    }

    /// Appends the fields to `buffer`.
    package func encode(into buffer: inout ByteBuffer) {
        let flags = self.flags
        buffer.writeInteger(UInt8((maximumMessageLength == nil ? 0 : 1) + flags.count))
        if let maximumMessageLength {
            buffer.writeInteger(FieldType.maximumMessageLength.rawValue)
            buffer.writeInteger(UInt16(4))
            buffer.writeInteger(maximumMessageLength)
        }
        for flag in flags {
            buffer.writeInteger(flag.rawValue)
            buffer.writeInteger(UInt16(0))
        }
    }

    /// Reads the fields at the start of `body`.
    ///
    /// - Parameters:
    ///   - body: the frame's body, at the field list; read past it.
    ///   - type: the frame, for the error.
    /// - Throws: ``ProtocolError/malformed(_:_:)`` when the list does not parse.
    package static func parse(_ body: inout ByteBuffer, in type: FrameType) throws(ProtocolError) -> HandshakeFields {
        let start = body.readerIndex
        guard let count = body.readInteger(as: UInt8.self) else {
            throw .malformed(type, "missing the field count")
        }
        var fields = HandshakeFields()
        for index in 0..<count {
            guard let rawType = body.readInteger(as: UInt8.self), let length = body.readInteger(as: UInt16.self),
                var value = body.readSlice(length: Int(length))
            else {
                throw .malformed(type, "field \(index + 1) of \(count) runs past the frame")
            }
            switch FieldType(rawValue: rawType) {
            case .maximumMessageLength:
                guard fields.maximumMessageLength == nil else {
                    throw .malformed(type, "the maximum message length appears twice")
                }
                guard length == 4, let limit = value.readInteger(as: UInt32.self) else {
                    throw .malformed(type, "the maximum message length is \(length) bytes, not 4")
                }
                fields.maximumMessageLength = limit
            case .readsFolders:
                guard !fields.readsFolders else { throw .malformed(type, "the folder capability appears twice") }
                guard length == 0 else { throw .malformed(type, "the folder capability has \(length) bytes, not 0") }
                fields.readsFolders = true
            case .probesDatagrams:
                guard !fields.probesDatagrams else { throw .malformed(type, "the probe capability appears twice") }
                guard length == 0 else { throw .malformed(type, "the probe capability has \(length) bytes, not 0") }
                fields.probesDatagrams = true
            case .hashesBlocksWithXXH3:
                guard !fields.hashesBlocksWithXXH3 else { throw .malformed(type, "the XXH3 capability appears twice") }
                guard length == 0 else { throw .malformed(type, "the XXH3 capability has \(length) bytes, not 0") }
                fields.hashesBlocksWithXXH3 = true
            case nil:
                break  // a field of a later version
            }
            guard body.readerIndex - start <= maximumEncodedLength else {
                throw .malformed(type, "the fields take more than \(maximumEncodedLength) bytes")
            }
        }
        return fields
    }
}
