import SystemPackage

/// A failed system call, with its errno.
struct POSIXFailure: Error, CustomStringConvertible {
    let call: String
    let code: SystemPackage.Errno

    init(_ call: String, _ code: SystemPackage.Errno) {
        self.call = call
        self.code = code
    }

    var description: String { "\(call): \(code)" }

    /// Whether the disk, or the user's quota on it, is full.
    var isNoSpace: Bool { code == .noSpace || code == .diskQuotaExceeded }
}
