import PeerConnectivityCore

/// The identity of one peer: a display name people read and a unique id the library compares.
///
/// `try PeerID(displayName:)` makes a new peer with a fresh id; it throws ``PeerIDError`` for an empty
/// name, one over 63 bytes of UTF-8 (`PeerID.maximumDisplayNameLength`) or one with a NUL. Its properties
/// are `displayName` and `id` (a `UUID`). Two `PeerID`s made with the same display name are different
/// peers: equality and hashing use the id alone. A `PeerID` is `Codable`, so an app can keep its own and
/// be the same peer across launches. Its `description` is one line for logs, "alice (1a2b3c4d)".
public typealias PeerID = PeerConnectivityCore.PeerID

/// Why a display name cannot make a ``PeerID``.
///
/// Compare with `.emptyDisplayName`, `.displayNameTooLong(_:)` or `.displayNameContainsNUL`; its
/// `description` says what is wrong.
public typealias PeerIDError = PeerConnectivityCore.PeerIDError

/// Why a peer is, or went, `notConnected`.
///
/// Compare with the static members (`reason == .declined`): equality looks at the kind of reason only,
/// while `detail` carries context for logs and people. The reasons:
///
/// - Leaving: `.localDisconnect` (this side called ``Session/disconnect()``), `.peerDisconnected` (the
///   peer said goodbye).
/// - Invitations: `.declined`, `.timedOut` (not answered in time), `.busy` (too many invitations pending
///   there), `.rateLimited` (too many invitations too fast), `.sessionFull`, `.unexpectedPeer` (another
///   peer answered than the one invited), `.duplicate` (the two peers invited each other at once; the
///   other connection was kept).
/// - The link: `.connectionFailed` (the TCP connection could not be made), `.connectionLost` (it closed
///   without a goodbye), `.livenessTimeout` (nothing came from the peer in time), `.handshakeTimeout`,
///   `.overloaded` (the other side closed this connection to make room during a flood),
///   `.protocolViolation`, `.incompatibleVersion`.
/// - Security: `.encryptionRequired` (one side requires encryption, the other refuses it),
///   `.identityMismatch` (the certificate does not prove the peer's id), `.certificateRejected` (by the
///   ``CertificatePolicy`` or the application), `.pairingFailed`, `.securityFailed` (the TLS handshake
///   failed), `.downgradeRefused` (a peer seen encrypted before came in the clear).
/// - Reconnection (``Session/Configuration/reconnection``): `.reconnectionFailed`, whose
///   `unconfirmedMessages` counts the reliable messages the peer never confirmed, and `.resumeRefused`.
public typealias DisconnectReason = PeerConnectivityCore.DisconnectReason

/// Whether a side encrypts its connections, as MPC's `MCEncryptionPreference`: `.required` (the
/// default), `.optional` or `.none`.
///
/// A connection is encrypted (TLS 1.3, both sides' certificates checked) when both sides allow it.
/// `.optional` against `.none` gives a plain connection; `.required` against `.none` is refused on both
/// sides with `DisconnectReason.encryptionRequired`. The preferences travel before encryption starts,
/// so anyone on the path can make an `.optional` side connect in the clear: only `.required` cannot be
/// downgraded.
public typealias EncryptionPreference = PeerConnectivityCore.EncryptionPreference

/// How a connection to a peer is secured, from ``Session/securityInfo(for:)`` and
/// ``Invitation/security``: `isEncrypted`, the `tlsVersion` and `cipherSuite`, the peer's `certificate`
/// and `publicKeySHA256`, whether its id is bound to its key (`isIDBoundToKey`), and the 6-digit
/// `pairingCode` to compare with the peer's; `summary` is one line for logs.
public typealias PeerSecurityInfo = PeerConnectivityCore.PeerSecurityInfo

/// Which IP family a session's connections use when it dials: `.any` (IPv6 and IPv4, as Happy
/// Eyeballs orders them), `.ipv4` or `.ipv6` only. See
/// ``Session/Configuration/dialFamily``.
public typealias AddressFamily = PeerConnectivityCore.AddressFamily
