import CDNSSD
import Synchronization

/// A service advertised with `DNSServiceRegister`, until ``cancel()`` or `deinit`.
///
/// Each registration holds one `DNSServiceRef`, which in Avahi's compatibility layer is one thread and one D-Bus
/// connection.
package final class DNSServiceRegistration: Sendable {
    /// The name the service was registered under.
    ///
    /// Avahi renames quietly on a clash ("name #2"); this is the name that the register callback reported when the
    /// registration first succeeded.
    package let registeredName: String

    /// Drives the register callback and owns the `DNSServiceRef`.
    private let processor: DNSServiceRefProcessor

    /// Creates the handle once the registration has succeeded.
    ///
    /// - Parameters:
    ///   - registeredName: The name reported by the register callback.
    ///   - processor: The processor that owns the ref.
    private init(registeredName: String, processor: DNSServiceRefProcessor) {
        self.registeredName = registeredName
        self.processor = processor
    }

    deinit {
        self.processor.cancel()
    }

    /// Registers a service with flags 0, in the default domain, on this host, and returns once the register callback
    /// has reported success.
    ///
    /// Avahi renames quietly when another host holds the name, but a name that this host already advertises for
    /// the same type fails at once with `kDNSServiceErr_NameConflict`.
    ///
    /// - Parameters:
    ///   - name: The instance name; any UTF-8, up to 63 bytes.
    ///   - type: The service type, e.g. `"_p2p-demo._tcp"`.
    ///   - port: The TCP or UDP port, in host byte order.
    ///   - txtRecord: The TXT record's RDATA, e.g. from `TXTRecord.encode(_:)`; at most 65,535 bytes.
    ///   - interfaceIndex: The interface to advertise on (`if_nametoindex`), or 0 for every interface.
    ///   - timeout: How long to wait for the register callback.
    ///   - onFailure: Called, on the registration's DNS-SD thread, with errors reported after the registration succeeded (e.g.
    ///     `kDNSServiceErr_Unknown` when avahi-daemon goes away); the service is no longer advertised then.
    /// - Returns: The registration; keep it for as long as the service should be advertised.
    /// - Throws: ``DNSServiceFailure`` when `DNSServiceRegister` fails or the callback reports an error (at once,
    ///   with ``DNSServiceFailure/isDaemonNotRunning``, when avahi-daemon is not running), a failure with
    ///   ``DNSServiceFailure/isTimeout`` when the callback does not come within `timeout`, or `CancellationError`.
    package static func register(
        name: String,
        type: String,
        port: UInt16,
        txtRecord: [UInt8],
        interfaceIndex: UInt32 = 0,
        timeout: Duration = .seconds(10),
        onFailure: @escaping @Sendable (DNSServiceFailure) -> Void
    ) async throws -> DNSServiceRegistration {
        guard let txtLength = UInt16(exactly: txtRecord.count) else {
            throw DNSServiceFailure(operation: "DNSServiceRegister", code: Int32(kDNSServiceErr_BadParam))
        }
        let context = RegisterContext(onFailure: onFailure)
        let processor = try DNSServiceRefProcessor.start(
            operation: "DNSServiceRegister",
            context: context
        ) { contextPointer, ref in
            txtRecord.withUnsafeBytes { txt in
                DNSServiceRegister(
                    &ref,
                    0,
                    interfaceIndex,
                    name,
                    type,
                    nil,
                    nil,
                    port.bigEndian,
                    txtLength,
                    txt.baseAddress,
                    registerReply,
                    contextPointer
                )
            }
        }
        do {
            let registeredName = try await context.result.value(
                timeout: timeout,
                timeoutFailure: DNSServiceFailure.timedOut(operation: "DNSServiceRegister")
            )
            return DNSServiceRegistration(registeredName: registeredName, processor: processor)
        } catch {
            processor.cancel()
            throw error
        }
    }

    /// Withdraws the service. Idempotent; `deinit` calls it too.
    package func cancel() {
        self.processor.cancel()
    }
}

/// What the register callback reports to.
private final class RegisterContext: DNSServiceCallbackContext {
    /// The first outcome: the registered name or the failure.
    let result = DNSServicePendingResult<String>()
    /// Where failures after success go.
    let onFailure: @Sendable (DNSServiceFailure) -> Void

    /// Creates a context.
    ///
    /// - Parameter onFailure: Where failures after success go.
    init(onFailure: @escaping @Sendable (DNSServiceFailure) -> Void) {
        self.onFailure = onFailure
    }

    /// Set once a failure has been handled; the registration is dead then.
    private let failed = Atomic<Bool>(false)

    /// Whether a failure has been handled.
    var isFinished: Bool {
        self.failed.load(ordering: .acquiring)
    }

    /// Handles a failure, once: fails the pending registration, or, once it has succeeded, calls `onFailure`.
    /// The processor then deallocates the ref.
    ///
    /// - Parameter failure: The failure.
    func report(_ failure: DNSServiceFailure) {
        guard !self.failed.exchange(true, ordering: .acquiringAndReleasing) else {
            return
        }
        if !self.result.fail(failure), self.result.hasSucceeded {
            self.onFailure(failure)
        }
    }

    /// Handles a failure of `DNSServiceProcessResult`.
    ///
    /// - Parameter failure: The failure.
    func processingFailed(_ failure: DNSServiceFailure) {
        self.report(failure)
    }
}

/// The `DNSServiceRegisterReply` callback; `context` is a retained ``RegisterContext``.
private let registerReply: DNSServiceRegisterReply = { _, _, errorCode, name, _, _, context in
    guard let context else {
        return
    }
    let registerContext = Unmanaged<RegisterContext>.fromOpaque(context).takeUnretainedValue()
    if errorCode == kDNSServiceErr_NoError {
        // A later success means Avahi re-registered after a clash, under a new name; the first name stays.
        registerContext.result.succeed(name.map { String(cString: $0) } ?? "")
    } else {
        registerContext.report(DNSServiceFailure(operation: "DNSServiceRegister", code: errorCode))
    }
}
