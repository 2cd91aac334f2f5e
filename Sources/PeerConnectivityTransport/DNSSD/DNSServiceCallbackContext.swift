/// The object a `dns_sd.h` callback gets back as its `context` pointer, as ``DNSServiceRefProcessor`` sees it.
protocol DNSServiceCallbackContext: AnyObject, Sendable {
    /// Whether the ref has nothing more to report. ``DNSServiceRefProcessor`` checks this after every
    /// `DNSServiceProcessResult` and deallocates the ref once it is `true`.
    var isFinished: Bool { get }

    /// Called on the polling thread when `DNSServiceProcessResult` fails; the ref is deallocated right after.
    ///
    /// - Parameter failure: The failure.
    func processingFailed(_ failure: DNSServiceFailure)
}
