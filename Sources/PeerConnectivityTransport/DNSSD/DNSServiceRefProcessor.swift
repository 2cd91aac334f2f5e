import CDNSSD
import Dispatch

/// Drives the callbacks of one `DNSServiceRef` and owns it until it is cancelled.
///
/// Avahi's compatibility layer runs one thread per `DNSServiceRef`; that thread writes to the ref's socket
/// (`DNSServiceRefSockFD`) when results are waiting, and `DNSServiceProcessResult` then runs the callbacks on the
/// calling thread. A `DispatchSourceRead` on that socket calls `DNSServiceProcessResult` on a serial queue, so the
/// callbacks of one ref never run concurrently.
///
/// ``cancel()`` cancels the source; the source's cancel handler, which libdispatch runs exactly once on the same
/// serial queue after any running callback has returned, calls `DNSServiceRefDeallocate` and then releases the
/// callback context. The processor also cancels itself when `DNSServiceProcessResult` fails or when the context says
/// it ``DNSServiceCallbackContext/isFinished``, e.g. a resolve right after its first result.
final class DNSServiceRefProcessor: @unchecked Sendable {
    // @unchecked Sendable: the only stored property is a `let` dispatch source, and the only thing done with it after
    // `init` is `cancel()`, which libdispatch allows from any thread. The `DNSServiceRef` is used only by the
    // source's event and cancel handlers, which libdispatch runs one at a time on the source's serial queue.

    /// The read source on the ref's socket; its handlers own the ref and the retained callback context.
    private let source: any DispatchSourceRead

    /// Wraps the ref and the retained context so that the dispatch handlers may capture them.
    private struct Owned: @unchecked Sendable {
        // @unchecked Sendable: created before the source starts, then used only by the source's handlers on its
        // serial queue (see the type's comment); never touched from two threads at once.

        /// The ref that the handlers process and finally deallocate.
        let ref: DNSServiceRef
        /// The callback context, for the processing queue.
        let context: any DNSServiceCallbackContext
        /// The callback context as passed to C: retained until the ref is deallocated, then released once.
        let retainedContext: Unmanaged<AnyObject>
    }

    /// Creates a `DNSServiceRef` and starts processing its callbacks.
    ///
    /// `context` is retained until the ref is deallocated, so the C callback can turn the pointer it gets back into
    /// the object with `Unmanaged<Context>.fromOpaque(_:).takeUnretainedValue()`.
    ///
    /// - Parameters:
    ///   - operation: The `dns_sd.h` function that `create` calls, for failures and the queue label.
    ///   - context: The object the C callback gets back as its `context` pointer.
    ///   - create: Calls the `dns_sd.h` function with the given context pointer and stores the new ref.
    /// - Returns: The running processor; cancel it when done.
    /// - Throws: ``DNSServiceFailure`` when `create` fails (e.g. `kDNSServiceErr_Unknown` when avahi-daemon is not
    ///   running) or the ref has no socket.
    static func start(
        operation: String,
        context: some DNSServiceCallbackContext,
        create: (_ context: UnsafeMutableRawPointer, _ ref: inout DNSServiceRef?) -> DNSServiceErrorType
    ) throws(DNSServiceFailure) -> DNSServiceRefProcessor {
        let retainedContext = Unmanaged<AnyObject>.passRetained(context)
        var newRef: DNSServiceRef?
        let code = create(retainedContext.toOpaque(), &newRef)
        guard code == kDNSServiceErr_NoError, let ref = newRef else {
            if let newRef {
                DNSServiceRefDeallocate(newRef)
            }
            retainedContext.release()
            let reported = code == kDNSServiceErr_NoError ? DNSServiceErrorType(kDNSServiceErr_Unknown) : code
            throw DNSServiceFailure(operation: operation, code: reported)
        }
        let socket = DNSServiceRefSockFD(ref)
        guard socket >= 0 else {
            DNSServiceRefDeallocate(ref)
            retainedContext.release()
            throw DNSServiceFailure(operation: "DNSServiceRefSockFD", code: Int32(kDNSServiceErr_BadReference))
        }
        return DNSServiceRefProcessor(
            operation: operation,
            owned: Owned(ref: ref, context: context, retainedContext: retainedContext),
            socket: socket
        )
    }

    /// Sets up and starts the read source.
    ///
    /// - Parameters:
    ///   - operation: For the queue label.
    ///   - owned: The ref and retained context; the source's cancel handler releases them.
    ///   - socket: The ref's socket.
    private init(operation: String, owned: Owned, socket: Int32) {
        let queue = DispatchQueue(label: "PeerConnectivity.DNSSD.\(operation)")
        let source = DispatchSource.makeReadSource(fileDescriptor: socket, queue: queue)
        self.source = source
        // Weak: the source must not keep its processor alive; when the processor goes, `deinit` cancels anyway.
        source.setEventHandler { [weak self] in
            let code = DNSServiceProcessResult(owned.ref)
            if code != kDNSServiceErr_NoError {
                // Avahi does not ask to be polled again after a failed poll: the ref is dead.
                self?.cancel()
                owned.context.processingFailed(DNSServiceFailure(operation: "DNSServiceProcessResult", code: code))
            } else if owned.context.isFinished {
                self?.cancel()
            }
        }
        source.setCancelHandler {
            DNSServiceRefDeallocate(owned.ref)
            owned.retainedContext.release()
        }
        source.activate()
    }

    deinit {
        self.source.cancel()
    }

    /// Stops processing and deallocates the ref (which ends its Avahi thread and D-Bus connection).
    ///
    /// Idempotent, callable from any thread, including from the ref's own callback. Returns at once; a callback
    /// that is running on the processing queue finishes first, and no callback runs after it.
    func cancel() {
        self.source.cancel()
    }
}
