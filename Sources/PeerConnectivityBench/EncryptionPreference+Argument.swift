import ArgumentParser
import PeerConnectivity

/// `--encryption none | optional | required` in every benchmark tool, by name as the help lists them.
extension EncryptionPreference: ExpressibleByArgument {
    /// The preference named `argument` (`none`, `optional`, `required`).
    public init?(argument: String) { self.init(argument) }

    /// The names the help lists.
    public static var allValueStrings: [String] { allCases.map(\.description) }
}
