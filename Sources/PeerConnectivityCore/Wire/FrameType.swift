/// The type byte of a frame (see docs/PROTOCOL.md).
package enum FrameType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case hello = 0x01
    case invite = 0x02
    case accept = 0x03
    case decline = 0x04
    case pairCommit = 0x05
    case pairNonce = 0x06
    case datagramKey = 0x07
    case data = 0x10
    case keepalive = 0x11
    case goodbye = 0x12
    case datagramEndpoint = 0x13
    case sessionListener = 0x14
    case members = 0x15
    case resumeSecret = 0x16
    case resume = 0x17
    case resumed = 0x18
    case ack = 0x19
    case open = 0x20
    case chunk = 0x21
    case end = 0x22
    case reset = 0x23
    case credit = 0x24
    case done = 0x25
    case block = 0x26
    case have = 0x27

    package var description: String {
        switch self {
        case .hello: return "HELLO"
        case .invite: return "INVITE"
        case .accept: return "ACCEPT"
        case .decline: return "DECLINE"
        case .pairCommit: return "PAIR-COMMIT"
        case .pairNonce: return "PAIR-NONCE"
        case .datagramKey: return "DATAGRAM-KEY"
        case .data: return "DATA"
        case .keepalive: return "KEEPALIVE"
        case .goodbye: return "GOODBYE"
        case .datagramEndpoint: return "DATAGRAM-ENDPOINT"
        case .sessionListener: return "SESSION-LISTENER"
        case .members: return "MEMBERS"
        case .resumeSecret: return "RESUME-SECRET"
        case .resume: return "RESUME"
        case .resumed: return "RESUMED"
        case .ack: return "ACK"
        case .open: return "OPEN"
        case .chunk: return "CHUNK"
        case .end: return "END"
        case .reset: return "RESET"
        case .credit: return "CREDIT"
        case .done: return "DONE"
        case .block: return "BLOCK"
        case .have: return "HAVE"
        }
    }
}
