import CDNSSD

/// One-shot `DNSServiceResolve`: from an instance name to host, port and TXT record.
package enum DNSServiceResolution {
    /// Resolves a browsed instance with flags 0 on the interface it was seen on.
    ///
    /// The `DNSServiceRef` (in Avahi's compatibility layer a thread and a D-Bus connection) is deallocated right
    /// after the first result, on failure, on timeout, and when the calling task is cancelled.
    ///
    /// - Parameters:
    ///   - instance: The instance, as `DNSServiceBrowse` reported it.
    ///   - timeout: How long to wait for an answer.
    /// - Returns: The first answer.
    /// - Throws: ``DNSServiceFailure`` when `DNSServiceResolve` fails or its callback reports an error (at once,
    ///   with ``DNSServiceFailure/isDaemonNotRunning``, when avahi-daemon is not running), a failure with
    ///   ``DNSServiceFailure/isTimeout`` when no answer comes within `timeout`, or `CancellationError`.
    package static func resolve(_ instance: DNSServiceInstance, timeout: Duration) async throws -> ResolvedService {
        try Task.checkCancellation()
        let context = ResolveContext()
        let processor = try DNSServiceRefProcessor.start(operation: "DNSServiceResolve", context: context) {
            contextPointer,
            ref in
            DNSServiceResolve(
                &ref,
                0,
                instance.interfaceIndex,
                instance.name,
                instance.type,
                instance.domain,
                resolveReply,
                contextPointer
            )
        }
        // The processor deallocates the ref itself right after the first result; this covers timeout and
        // cancellation.
        defer { processor.cancel() }
        return try await context.result.value(
            timeout: timeout,
            timeoutFailure: DNSServiceFailure.timedOut(operation: "DNSServiceResolve")
        )
    }
}

/// What the resolve callback reports to.
private final class ResolveContext: DNSServiceCallbackContext {
    /// The first answer or failure.
    let result = DNSServicePendingResult<ResolvedService>()

    /// Creates a context.
    init() {}

    /// Whether the resolve has an outcome, so its ref can go.
    var isFinished: Bool {
        self.result.isCompleted
    }

    /// Fails the resolve when `DNSServiceProcessResult` fails.
    ///
    /// - Parameter failure: The failure.
    func processingFailed(_ failure: DNSServiceFailure) {
        self.result.fail(failure)
    }
}

/// The `DNSServiceResolveReply` callback; `context` is a retained ``ResolveContext``.
private func resolveReply(
    _ ref: DNSServiceRef?,
    _ flags: DNSServiceFlags,
    _ interfaceIndex: UInt32,
    _ errorCode: DNSServiceErrorType,
    _ fullName: UnsafePointer<CChar>?,
    _ hostTarget: UnsafePointer<CChar>?,
    _ port: UInt16,
    _ txtLength: UInt16,
    _ txtRecord: UnsafePointer<UInt8>?,
    _ context: UnsafeMutableRawPointer?
) {
    guard let context else {
        return
    }
    let resolveContext = Unmanaged<ResolveContext>.fromOpaque(context).takeUnretainedValue()
    guard errorCode == kDNSServiceErr_NoError else {
        resolveContext.result.fail(DNSServiceFailure(operation: "DNSServiceResolve", code: errorCode))
        return
    }
    let txt = txtRecord.map { Array(UnsafeBufferPointer(start: $0, count: Int(txtLength))) } ?? []
    resolveContext.result.succeed(
        ResolvedService(
            hostTarget: hostTarget.map { String(cString: $0) } ?? "",
            port: UInt16(bigEndian: port),
            txtRecord: txt,
            interfaceIndex: interfaceIndex
        )
    )
}
