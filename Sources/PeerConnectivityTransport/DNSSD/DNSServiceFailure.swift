import CDNSSD

/// A DNS-SD operation failed: a `dns_sd.h` call returned an error, its callback reported one, or it timed out.
///
/// With Avahi's compatibility layer, every call fails at once with `kDNSServiceErr_Unknown` when avahi-daemon (or
/// the D-Bus system bus) is not running; ``isDaemonNotRunning`` tells that case apart and ``description`` says how to
/// fix it.
package struct DNSServiceFailure: Error, Hashable, CustomStringConvertible {
    /// The `dns_sd.h` function that failed, e.g. `"DNSServiceRegister"`.
    package var operation: String

    /// The `DNSServiceErrorType` code, e.g. `-65537` (`kDNSServiceErr_Unknown`), or ``timeoutCode``.
    package var code: Int32

    /// `kDNSServiceErr_ServiceNotRunning` from Apple's `dns_sd.h`; Avahi's header lacks it.
    package static let serviceNotRunningCode: Int32 = -65563

    /// `kDNSServiceErr_Timeout` from Apple's `dns_sd.h`; Avahi's header lacks it. Used when an operation gets no
    /// answer in time.
    package static let timeoutCode: Int32 = -65568

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - operation: The `dns_sd.h` function that failed.
    ///   - code: The `DNSServiceErrorType` it returned or reported.
    package init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// A failure for an operation that got no answer in time.
    ///
    /// - Parameter operation: The `dns_sd.h` function that timed out.
    /// - Returns: A failure whose code is ``timeoutCode``.
    package static func timedOut(operation: String) -> DNSServiceFailure {
        DNSServiceFailure(operation: operation, code: self.timeoutCode)
    }

    /// Whether the failure means that avahi-daemon cannot be reached.
    ///
    /// Avahi reports a missing daemon (or a missing D-Bus system bus) as `kDNSServiceErr_Unknown`, and a daemon that
    /// dies under an open operation the same way; mDNSResponder uses `kDNSServiceErr_ServiceNotRunning`.
    package var isDaemonNotRunning: Bool {
        self.code == Int32(kDNSServiceErr_Unknown) || self.code == Self.serviceNotRunningCode
    }

    /// Whether the operation got no answer in time (see ``timedOut(operation:)``).
    package var isTimeout: Bool {
        self.code == Self.timeoutCode
    }

    /// The name of ``code`` as `dns_sd.h` spells it, e.g. `"kDNSServiceErr_Unknown"`, or
    /// `"unknown DNSServiceErrorType"`.
    package var errorName: String {
        switch Int(self.code) {
        case kDNSServiceErr_NoError: return "kDNSServiceErr_NoError"
        case kDNSServiceErr_Unknown: return "kDNSServiceErr_Unknown"
        case kDNSServiceErr_NoSuchName: return "kDNSServiceErr_NoSuchName"
        case kDNSServiceErr_NoMemory: return "kDNSServiceErr_NoMemory"
        case kDNSServiceErr_BadParam: return "kDNSServiceErr_BadParam"
        case kDNSServiceErr_BadReference: return "kDNSServiceErr_BadReference"
        case kDNSServiceErr_BadState: return "kDNSServiceErr_BadState"
        case kDNSServiceErr_BadFlags: return "kDNSServiceErr_BadFlags"
        case kDNSServiceErr_Unsupported: return "kDNSServiceErr_Unsupported"
        case kDNSServiceErr_NotInitialized: return "kDNSServiceErr_NotInitialized"
        case kDNSServiceErr_AlreadyRegistered: return "kDNSServiceErr_AlreadyRegistered"
        case kDNSServiceErr_NameConflict: return "kDNSServiceErr_NameConflict"
        case kDNSServiceErr_Invalid: return "kDNSServiceErr_Invalid"
        case kDNSServiceErr_Firewall: return "kDNSServiceErr_Firewall"
        case kDNSServiceErr_Incompatible: return "kDNSServiceErr_Incompatible"
        case kDNSServiceErr_BadInterfaceIndex: return "kDNSServiceErr_BadInterfaceIndex"
        case kDNSServiceErr_Refused: return "kDNSServiceErr_Refused"
        case kDNSServiceErr_NoSuchRecord: return "kDNSServiceErr_NoSuchRecord"
        case kDNSServiceErr_NoAuth: return "kDNSServiceErr_NoAuth"
        case kDNSServiceErr_NoSuchKey: return "kDNSServiceErr_NoSuchKey"
        case kDNSServiceErr_NATTraversal: return "kDNSServiceErr_NATTraversal"
        case kDNSServiceErr_DoubleNAT: return "kDNSServiceErr_DoubleNAT"
        case kDNSServiceErr_BadTime: return "kDNSServiceErr_BadTime"
        case Int(Self.serviceNotRunningCode): return "kDNSServiceErr_ServiceNotRunning"
        case Int(Self.timeoutCode): return "kDNSServiceErr_Timeout"
        default: return "unknown DNSServiceErrorType"
        }
    }

    /// The operation, the error's name and code, and for a missing daemon how to start it, e.g.
    /// `"DNSServiceBrowse failed: kDNSServiceErr_BadParam (-65540)"`.
    package var description: String {
        if self.isTimeout {
            return "\(self.operation) timed out: \(self.errorName) (\(self.code))"
        }
        let failure = "\(self.operation) failed: \(self.errorName) (\(self.code))"
        guard self.isDaemonNotRunning else {
            return failure
        }
        return failure
            + "; avahi-daemon is not running (start it with Scripts/start-avahi.sh, or `avahi-daemon -D` with dbus"
            + " running)"
    }
}
