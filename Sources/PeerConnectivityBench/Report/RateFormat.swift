import Foundation

/// How a rate prints, as iperf3's `-f`: in bits a second (`k`, `m`, `g`: Kbit/s, Mbit/s, Gbit/s) or in
/// bytes a second (`K`, `M`, `G`: KB/s, MB/s, GB/s), in powers of 1,000; or, by default, in the bits-a-second
/// unit that fits the figure (a 20 Mbit/s link reads "19.1 Mbit/s", not "0.00 GB/s"), with three significant
/// digits.
public enum RateFormat: Sendable, Hashable {
    /// Bits a second in the unit that fits (bit/s, Kbit/s, Mbit/s or Gbit/s), three significant digits.
    case automatic
    /// Bits a second in a fixed unit.
    case bits(Scale)
    /// Bytes a second in a fixed unit.
    case bytes(Scale)

    /// A power of 1,000.
    public enum Scale: Int, Sendable, Hashable, CaseIterable {
        /// 10^3.
        case kilo = 1
        /// 10^6.
        case mega = 2
        /// 10^9.
        case giga = 3

        var factor: Double { pow(1_000, Double(rawValue)) }
        var prefix: String { ["K", "M", "G"][rawValue - 1] }
    }

    /// The format `-f` names: `k`, `m`, `g` (bits), `K`, `M`, `G` (bytes), or `a` (automatic).
    ///
    /// - Parameter letter: one letter.
    public init?(letter: String) {
        switch letter {
        case "a": self = .automatic
        case "k": self = .bits(.kilo)
        case "m": self = .bits(.mega)
        case "g": self = .bits(.giga)
        case "K": self = .bytes(.kilo)
        case "M": self = .bytes(.mega)
        case "G": self = .bytes(.giga)
        default: return nil
        }
    }

    /// `rate` in this format: "19.1 Mbit/s", "942 Mbit/s", "3.42 Gbit/s", "2.38 GB/s".
    ///
    /// - Parameter bytesPerSecond: the rate, in bytes a second.
    /// - Returns: the figure and its unit.
    public func string(bytesPerSecond: Double) -> String {
        switch self {
        case .automatic:
            let bits = bytesPerSecond * 8
            let scale = Scale.allCases.last { bits >= $0.factor * 0.9995 }
            guard let scale else { return "\(Self.significant(bits)) bit/s" }
            return "\(Self.significant(bits / scale.factor)) \(scale.prefix)bit/s"
        case .bits(let scale):
            return String(format: "%.2f %@bit/s", bytesPerSecond * 8 / scale.factor, scale.prefix)
        case .bytes(let scale):
            return String(format: "%.2f %@B/s", bytesPerSecond / scale.factor, scale.prefix)
        }
    }

    /// `value` with three significant digits: 1.23, 12.3, 123; 0 as "0".
    static func significant(_ value: Double) -> String {
        guard value > 0 else { return "0" }
        let decimals = value >= 99.95 ? 0 : value >= 9.995 ? 1 : 2
        return String(format: "%.\(decimals)f", value)
    }
}
