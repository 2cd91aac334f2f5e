import CDNSSD
import Foundation
import Synchronization

/// Drives the callbacks of one `DNSServiceRef` and owns it until it is cancelled.
///
/// Avahi's compatibility layer runs one thread per `DNSServiceRef`; that thread writes to the ref's socket
/// (`DNSServiceRefSockFD`) when results are waiting, and `DNSServiceProcessResult` then runs the callbacks on the
/// calling thread. One thread per ref `poll`s that socket and a wake-up socket, and calls `DNSServiceProcessResult`
/// when the socket is readable, so the callbacks of one ref never run concurrently.
///
/// A libdispatch read source would be the obvious tool, but on Linux tearing read sources down while others are set
/// up corrupts libdispatch's epoll bookkeeping and crashes the process in `_dispatch_event_loop_drain`
/// (swift-corelibs-libdispatch#949; seen here in the test suite). A blocking `poll` registers nothing there.
///
/// ``cancel()`` writes to the wake-up socket; the polling thread then leaves its loop and, on that same thread, after
/// any running callback has returned, calls `DNSServiceRefDeallocate` and releases the callback context. The processor also cancels itself when `DNSServiceProcessResult` fails or when the context says
/// it ``DNSServiceCallbackContext/isFinished``, e.g. a resolve right after its first result.
final class DNSServiceRefProcessor: @unchecked Sendable {
    // @unchecked Sendable: the stored properties are the wake-up socket's sending end (written once, by the first cancel(),
    // guarded by the atomic flag; closed in deinit) and an atomic flag. The `DNSServiceRef` is used only by the
    // polling thread.

    /// The write end of the wake-up socket: one byte written here ends the polling thread.
    private let wakeWrite: Int32
    private let cancelled = Atomic<Bool>(false)

    /// Wraps the ref and the retained context so that the polling thread may capture them.
    private struct Owned: @unchecked Sendable {
        // @unchecked Sendable: created before the polling thread starts, then used only by that thread (see the
        // type's comment); never touched from two threads at once.

        /// The ref that the polling thread processes and finally deallocates.
        let ref: DNSServiceRef
        /// The callback context, for the polling thread.
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
    ///   - operation: The `dns_sd.h` function that `create` calls, for failures and the thread's name.
    ///   - context: The object the C callback gets back as its `context` pointer.
    ///   - create: Calls the `dns_sd.h` function with the given context pointer and stores the new ref.
    /// - Returns: The running processor; cancel it when done.
    /// - Throws: ``DNSServiceFailure`` when `create` fails (e.g. `kDNSServiceErr_Unknown` when avahi-daemon is not
    ///   running) or the ref has no socket.
    /// Avahi's compatibility layer prints a three-line banner to standard error at the first call of each
    /// process ("*** WARNING *** The program ... uses the Apple Bonjour compatibility layer of Avahi"),
    /// unless AVAHI_COMPAT_NOWARN is set. It says nothing a user of this library can act on; set it
    /// once, before the first call, unless the environment sets it already.
    private static let quietCompatibilityLayer: Void = {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
    }()

    static func start(
        operation: String,
        context: some DNSServiceCallbackContext,
        create: (_ context: UnsafeMutableRawPointer, _ ref: inout DNSServiceRef?) -> DNSServiceErrorType
    ) throws(DNSServiceFailure) -> DNSServiceRefProcessor {
        _ = quietCompatibilityLayer
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
        return try DNSServiceRefProcessor(
            operation: operation,
            owned: Owned(ref: ref, context: context, retainedContext: retainedContext),
            socket: socket
        )
    }

    /// Starts the polling thread, which owns the ref from now on.
    ///
    /// - Parameters:
    ///   - operation: For the thread's name.
    ///   - owned: The ref and retained context; the polling thread releases them when it ends.
    ///   - socket: The ref's socket.
    /// - Throws: when the wake-up socket cannot be made (the ref is deallocated first).
    private init(operation: String, owned: Owned, socket: Int32) throws(DNSServiceFailure) {
        // A socket pair, not a pipe: the polling thread closes its end when it finishes by itself
        // (a resolve's first result), and a later wake-up sent with MSG_NOSIGNAL then fails with EPIPE
        // instead of raising SIGPIPE, which would kill the process.
        guard let wakeEnds = Platform.makeWakePair() else {
            DNSServiceRefDeallocate(owned.ref)
            owned.retainedContext.release()
            throw DNSServiceFailure(operation: "socketpair", code: Int32(kDNSServiceErr_NoMemory))
        }
        let wakeRead = wakeEnds.read
        wakeWrite = wakeEnds.write
        let thread = Thread {
            Self.poll(owned: owned, socket: socket, wake: wakeRead)
            Platform.close(wakeRead)
        }
        thread.name = "PeerConnectivity.DNSSD.\(operation)"
        thread.start()
    }

    /// The polling thread: processes each result as its socket becomes readable, until the
    /// context is finished, processing fails, or ``cancel()`` writes to the wake-up socket; then
    /// deallocates the ref, on this same thread, so no callback can run after it.
    private static func poll(owned: Owned, socket: Int32, wake: Int32) {
        defer {
            DNSServiceRefDeallocate(owned.ref)
            owned.retainedContext.release()
        }
        while true {
            guard let ready = Platform.waitReadable(socket, wake) else {
                owned.context.processingFailed(
                    DNSServiceFailure(operation: "poll", code: Int32(kDNSServiceErr_Unknown))
                )
                return
            }
            if ready.second { return }
            guard ready.first else { continue }
            let code = DNSServiceProcessResult(owned.ref)
            if code != kDNSServiceErr_NoError {
                // Avahi does not ask to be polled again after a failed poll: the ref is dead.
                owned.context.processingFailed(DNSServiceFailure(operation: "DNSServiceProcessResult", code: code))
                return
            }
            if owned.context.isFinished { return }
        }
    }

    deinit {
        cancel()
        Platform.close(wakeWrite)
    }

    /// Stops processing; the polling thread deallocates the ref. Idempotent, from any thread.
    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Platform.wake(wakeWrite)
    }
}
