import PeerConnectivity

/// The two kinds of connection every session benchmark runs over: plain TCP, and TLS 1.3.
package enum Security: String, CaseIterable {
    /// `encryptionPreference: .none` on both sides.
    case plain
    /// `encryptionPreference: .required` on both sides: a TLS 1.3 handshake, then encrypted frames.
    case encrypted

    /// The sessions' and the advertiser's preference.
    package var preference: EncryptionPreference {
        switch self {
        case .plain: .none
        case .encrypted: .required
        }
    }
}
