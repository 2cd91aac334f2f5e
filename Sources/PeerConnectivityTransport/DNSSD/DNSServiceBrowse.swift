import CDNSSD
import Synchronization

/// A running `DNSServiceBrowse` for one service type, until ``cancel()`` or `deinit`.
///
/// Reports Avahi's raw events: one `.added` per interface and IP version on which an instance appears (so
/// duplicates are normal), one `.removed` for each as it goes. Holds one `DNSServiceRef`, which in Avahi's
/// compatibility layer is one thread and one D-Bus connection.
package final class DNSServiceBrowse: Sendable {
    /// What the browse reports.
    package enum Event: Hashable, Sendable {
        /// An instance appeared on an interface.
        case added(DNSServiceInstance)
        /// An instance went away on an interface.
        case removed(DNSServiceInstance)
        /// The browse failed and reports nothing more (e.g. `kDNSServiceErr_Unknown` when avahi-daemon went away;
        /// Avahi does not reconnect). Its `DNSServiceRef` is deallocated right after.
        case failed(DNSServiceFailure)
    }

    /// Drives the browse callback and owns the `DNSServiceRef`.
    private let processor: DNSServiceRefProcessor

    /// Creates the handle.
    ///
    /// - Parameter processor: The processor that owns the ref.
    private init(processor: DNSServiceRefProcessor) {
        self.processor = processor
    }

    deinit {
        self.processor.cancel()
    }

    /// Starts browsing for a service type in the default domain.
    ///
    /// - Parameters:
    ///   - type: The service type, e.g. `"_p2p-demo._tcp"`.
    ///   - interfaceIndex: The interface to browse on (`if_nametoindex`), or 0 for every interface.
    ///   - handler: Called with each event, one at a time, on the browse's DNS-SD thread; after `.failed` it is not
    ///     called again.
    /// - Returns: The running browse.
    /// - Throws: ``DNSServiceFailure`` when `DNSServiceBrowse` fails, at once with
    ///   ``DNSServiceFailure/isDaemonNotRunning`` when avahi-daemon is not running.
    package static func start(
        type: String,
        interfaceIndex: UInt32 = 0,
        handler: @escaping @Sendable (DNSServiceBrowse.Event) -> Void
    ) throws(DNSServiceFailure) -> DNSServiceBrowse {
        let context = BrowseContext(handler: handler)
        let processor = try DNSServiceRefProcessor.start(
            operation: "DNSServiceBrowse",
            context: context
        ) { contextPointer, ref in
            CDNSSD.DNSServiceBrowse(&ref, 0, interfaceIndex, type, nil, browseReply, contextPointer)
        }
        return DNSServiceBrowse(processor: processor)
    }

    /// Stops browsing. Idempotent; `deinit` calls it too. An event being delivered right now finishes; none follow.
    package func cancel() {
        self.processor.cancel()
    }
}

/// What the browse callback reports to.
private final class BrowseContext: DNSServiceCallbackContext {
    /// The user's event handler.
    let handler: @Sendable (DNSServiceBrowse.Event) -> Void
    /// Set once a failure has been reported; the ref is dead then.
    private let failed = Atomic<Bool>(false)

    /// Creates a context.
    ///
    /// - Parameter handler: The user's event handler.
    init(handler: @escaping @Sendable (DNSServiceBrowse.Event) -> Void) {
        self.handler = handler
    }

    /// Whether a failure has been reported.
    var isFinished: Bool {
        self.failed.load(ordering: .acquiring)
    }

    /// Reports a failure, once; the processor then deallocates the ref.
    ///
    /// - Parameter failure: The failure.
    func fail(_ failure: DNSServiceFailure) {
        guard !self.failed.exchange(true, ordering: .acquiringAndReleasing) else {
            return
        }
        self.handler(.failed(failure))
    }

    /// Reports a failure of `DNSServiceProcessResult`.
    ///
    /// - Parameter failure: The failure.
    func processingFailed(_ failure: DNSServiceFailure) {
        self.fail(failure)
    }
}

/// The `DNSServiceBrowseReply` callback; `context` is a retained ``BrowseContext``.
private let browseReply: DNSServiceBrowseReply = { _, flags, interfaceIndex, errorCode, name, type, domain, context in
    guard let context else {
        return
    }
    let browseContext = Unmanaged<BrowseContext>.fromOpaque(context).takeUnretainedValue()
    guard errorCode == kDNSServiceErr_NoError else {
        browseContext.fail(DNSServiceFailure(operation: "DNSServiceBrowse", code: errorCode))
        return
    }
    guard let name, let type, let domain else {
        return
    }
    let instance = DNSServiceInstance(
        name: String(cString: name),
        type: String(cString: type),
        domain: String(cString: domain),
        interfaceIndex: interfaceIndex
    )
    if flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0 {
        browseContext.handler(.added(instance))
    } else {
        browseContext.handler(.removed(instance))
    }
}
