/// Where a service instance is reachable and its TXT record, as `DNSServiceResolve` reports it.
package struct ResolvedService: Hashable, Sendable {
    /// The host the service runs on, e.g. `"p2pa.local."`; resolve it to addresses with getaddrinfo (nss-mdns) or
    /// `DNSServiceQueryRecord`.
    package var hostTarget: String
    /// The service's port, in host byte order.
    package var port: UInt16
    /// The TXT record's RDATA; decode it with `TXTRecord.decode(_:)`.
    package var txtRecord: [UInt8]
    /// The interface the answer came from.
    package var interfaceIndex: UInt32

    /// Creates a resolved service.
    ///
    /// - Parameters:
    ///   - hostTarget: The host the service runs on.
    ///   - port: The port, in host byte order.
    ///   - txtRecord: The TXT record's RDATA.
    ///   - interfaceIndex: The interface the answer came from.
    package init(hostTarget: String, port: UInt16, txtRecord: [UInt8], interfaceIndex: UInt32) {
        self.hostTarget = hostTarget
        self.port = port
        self.txtRecord = txtRecord
        self.interfaceIndex = interfaceIndex
    }
}
