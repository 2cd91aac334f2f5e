import ArgumentParser
import PeerConnectivityBench

extension TestKind: ExpressibleByArgument {}
extension DeliveryMode: ExpressibleByArgument {}

extension RateFormat: ExpressibleByArgument {
    public init?(argument: String) { self.init(letter: argument) }

    public var defaultValueDescription: String { "a" }

    public static var allValueStrings: [String] { ["a", "k", "m", "g", "K", "M", "G"] }
}

/// What `run` writes besides its own JSON document.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    /// The result document only.
    case json
    /// Also MPCF-TestBench's layout, beside the document (implies --samples).
    case mpcfTestbench = "mpcf-testbench"
}

/// Splits "HOST[:PORT]": an IPv6 host goes in brackets when a port follows ("[fe80::1%eth0]:7447"); a
/// bare IPv6 address or a host without a port takes `defaultPort`.
func parseEndpoint(_ text: String, defaultPort: Int) -> (host: String, port: Int)? {
    if text.hasPrefix("[") {
        guard let close = text.firstIndex(of: "]") else { return nil }
        let host = String(text[text.index(after: text.startIndex)..<close])
        let rest = text[text.index(after: close)...]
        guard !host.isEmpty else { return nil }
        if rest.isEmpty { return (host, defaultPort) }
        guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
        return (host, port)
    }
    guard !text.isEmpty else { return nil }
    // No colon: a host alone. More than one: a bare IPv6 address.
    guard text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") else {
        return (text, defaultPort)
    }
    guard colon != text.startIndex, let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port)
    else { return nil }
    return (String(text[..<colon]), port)
}

/// Reads "1,64,1024" as sizes in bytes.
func parseSizes(_ text: String) -> [Int]? {
    let parts = text.split(separator: ",", omittingEmptySubsequences: false)
    let sizes = parts.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    return sizes.count == parts.count && !sizes.isEmpty ? sizes : nil
}
