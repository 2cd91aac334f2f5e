/// A service instance as `DNSServiceBrowse` reports it, on one interface.
package struct DNSServiceInstance: Hashable, Sendable {
    /// The instance name, e.g. `"Alice's Mac"`; any UTF-8.
    package var name: String
    /// The service type as Avahi reports it, e.g. `"_p2p-demo._tcp."` (with a trailing dot).
    package var type: String
    /// The domain as Avahi reports it, e.g. `"local."`.
    package var domain: String
    /// The interface the instance was seen on (`if_nametoindex`); the same instance is reported once per interface
    /// and IP version.
    package var interfaceIndex: UInt32

    /// Creates an instance description.
    ///
    /// - Parameters:
    ///   - name: The instance name.
    ///   - type: The service type.
    ///   - domain: The domain.
    ///   - interfaceIndex: The interface it was seen on.
    package init(name: String, type: String, domain: String, interfaceIndex: UInt32) {
        self.name = name
        self.type = type
        self.domain = domain
        self.interfaceIndex = interfaceIndex
    }
}
