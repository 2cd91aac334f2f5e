import ArgumentParser
import PeerConnectivityBench

extension TestKind: ExpressibleByArgument {}
extension DeliveryMode: ExpressibleByArgument {}

/// What `run` writes besides its own JSON document.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    /// The result document only.
    case json
    /// Also MPCF-TestBench's layout, beside the document (implies --samples).
    case mpcfTestbench = "mpcf-testbench"
}

/// Splits "HOST:PORT" (the last colon separates the port; IPv6 hosts go in brackets).
func parseEndpoint(_ text: String) -> (host: String, port: Int)? {
    guard let colon = text.lastIndex(of: ":"), colon != text.startIndex,
        let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port)
    else { return nil }
    let host = text[..<colon].trimmingCharacters(in: ["[", "]"])
    return (String(host), port)
}

/// Reads "1,64,1024" as sizes in bytes.
func parseSizes(_ text: String) -> [Int]? {
    let parts = text.split(separator: ",", omittingEmptySubsequences: false)
    let sizes = parts.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    return sizes.count == parts.count && !sizes.isEmpty ? sizes : nil
}
