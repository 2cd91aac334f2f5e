/// Which reflector a run measures against.
public enum ReflectorTarget: Hashable, Sendable {
    /// Browse DNS-SD and take the reflector with this display name, or the first found when nil.
    case discover(name: String?)
    /// Connect to the reflector's session port at `host:port` without DNS-SD.
    case direct(host: String, port: Int)
}
