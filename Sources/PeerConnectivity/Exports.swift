import PeerConnectivityCore

/// The identity of one peer: a display name and a unique id. See ``PeerConnectivityCore/PeerID``.
public typealias PeerID = PeerConnectivityCore.PeerID

/// Why a display name cannot make a ``PeerID``.
public typealias PeerIDError = PeerConnectivityCore.PeerIDError

/// Why a peer is, or went, `notConnected`.
public typealias DisconnectReason = PeerConnectivityCore.DisconnectReason

/// Whether a side encrypts its connections, as MPC's `MCEncryptionPreference`.
public typealias EncryptionPreference = PeerConnectivityCore.EncryptionPreference

/// How a connection to a peer is secured.
public typealias PeerSecurityInfo = PeerConnectivityCore.PeerSecurityInfo
