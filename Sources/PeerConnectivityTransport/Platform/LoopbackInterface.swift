#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The loopback interface, as DNS-SD numbers interfaces.
package enum LoopbackInterface {
    /// The index of "lo" (Linux) or "lo0" (Darwin), or nil if neither exists.
    package static let index: UInt32? = {
        for name in ["lo", "lo0"] {
            let index = if_nametoindex(name)
            if index != 0 { return index }
        }
        return nil
    }()

    /// The address a service seen on the loopback interface is reached at: it runs on this host.
    package static let address = "127.0.0.1"
}
