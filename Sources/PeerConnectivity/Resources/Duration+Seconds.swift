extension Duration {
    /// The duration in seconds, with its fraction.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
