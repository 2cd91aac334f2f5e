extension Connection {
    /// The network interface this side of the connection runs on: the scope of its link-local address,
    /// else the interface that has its address. A member introduced over this connection with a
    /// link-local address is dialled through it (docs/PROTOCOL.md, MEMBERS). Nil once the socket no longer says.
    package var localInterfaceIndex: UInt32? {
        channel.localAddress.flatMap(Platform.interfaceIndex(of:))
    }
}
