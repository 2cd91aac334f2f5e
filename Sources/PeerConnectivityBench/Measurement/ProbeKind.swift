/// Where a latency probe of the responsiveness test travels, as the IETF responsiveness draft names them.
public enum ProbeKind: String, Codable, CaseIterable, Sendable {
    /// On a connection of its own that carries no load: the round trip of the link's queues.
    case foreign
    /// Inside the loaded session, behind the load's own bytes: the round trip an application's message
    /// sees while its session moves a transfer (the senders' queues added to the link's).
    case selfFlow = "self"
    /// As datagrams on the unreliable path of the foreign probes' session, as ping's: a lost one is counted
    /// lost and holds up no other, where a probe lost on a TCP connection is sent again after a timeout and
    /// the probes behind it wait.
    case datagram = "udp"
}
