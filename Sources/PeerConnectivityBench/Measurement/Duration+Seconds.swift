extension Duration {
    /// The duration in milliseconds, with fractions.
    public var milliseconds: Double {
        Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15
    }

    /// The duration in seconds, with fractions.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
