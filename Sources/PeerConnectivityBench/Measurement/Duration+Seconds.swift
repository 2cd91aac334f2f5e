extension Duration {
    /// The duration in milliseconds, with fractions.
    public var milliseconds: Double {
        Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15
    }

    /// The duration in whole nanoseconds; zero for a negative one.
    public var wholeNanoseconds: UInt64 {
        UInt64(max(0, components.seconds)) * 1_000_000_000 + UInt64(max(0, components.attoseconds / 1_000_000_000))
    }

    /// The duration in seconds, with fractions.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
