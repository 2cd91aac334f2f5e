import CDNSSD
import NIOCore
import NIOPosix
import Synchronization

/// A host's addresses from DNS-SD itself: its A and AAAA records by `DNSServiceQueryRecord`, so that a
/// peer found by browsing can be dialled without nss-mdns in /etc/nsswitch.conf. (Avahi's compatibility
/// layer has no `DNSServiceGetAddrInfo`.)
package enum DNSServiceAddressQuery {
    /// How long to wait for more records after the first, unless both families have answered: RFC 8305's
    /// "Resolution Delay".
    package static let settleDelay = Duration.milliseconds(50)

    /// Asks for the host's A and AAAA records, on every interface, and returns what arrives: every
    /// address once both families have answered, or ``settleDelay`` after the first answer, or at `timeout`.
    ///
    /// Both `DNSServiceRef`s (in Avahi's compatibility layer, each a thread and a D-Bus connection) are
    /// deallocated as soon as the answer is complete, on timeout, and when the calling task is cancelled.
    ///
    /// - Parameters:
    ///   - host: the host name the service resolved to, e.g. "p2pa.local.".
    ///   - port: the port to put in the addresses.
    ///   - timeout: how long to wait for a first record.
    /// - Returns: the addresses, in the order they arrived (a link-local IPv6 address scoped to the interface
    ///   its record came from); empty when nothing answered in time.
    /// - Throws: ``DNSServiceFailure`` when the queries cannot be made (avahi-daemon not running), or
    ///   `CancellationError`.
    package static func addresses(of host: String, port: Int, timeout: Duration) async throws -> [SocketAddress] {
        try Task.checkCancellation()
        let context = AddressQueryContext(port: port)
        var processors: [DNSServiceRefProcessor] = []
        defer { for processor in processors { processor.cancel() } }
        for type in [kDNSServiceType_AAAA, kDNSServiceType_A] {
            processors.append(
                try DNSServiceRefProcessor.start(operation: "DNSServiceQueryRecord", context: context) { pointer, ref in
                    DNSServiceQueryRecord(
                        &ref,
                        0,
                        0,
                        host,
                        UInt16(type),
                        UInt16(kDNSServiceClass_IN),
                        queryRecordReply,
                        pointer
                    )
                }
            )
        }
        do {
            return try await context.result.value(
                timeout: timeout,
                timeoutFailure: DNSServiceFailure.timedOut(operation: "DNSServiceQueryRecord")
            )
        } catch let failure as DNSServiceFailure where failure.isTimeout {
            return context.answers
        }
    }
}

/// What the query callbacks of both records report to.
private final class AddressQueryContext: DNSServiceCallbackContext {
    private struct State {
        var answers: [SocketAddress] = []
        var ipv4 = false
        var ipv6 = false
        var settling: Scheduled<Void>?
    }

    /// The addresses, once complete.
    let result = DNSServicePendingResult<[SocketAddress]>()
    private let port: Int
    private let state = Mutex(State())

    init(port: Int) {
        self.port = port
    }

    /// The addresses so far.
    var answers: [SocketAddress] { state.withLock { $0.answers } }

    var isFinished: Bool { result.isCompleted }

    func processingFailed(_ failure: DNSServiceFailure) {
        result.fail(failure)
    }

    /// A record arrived: keep its address, and finish when both families have answered, else
    /// ``DNSServiceAddressQuery/settleDelay`` after the first.
    func answered(_ bytes: [UInt8], interface: UInt32) {
        guard let address = Platform.socketAddress(bytes: bytes, port: port, interface: interface) else { return }
        let complete = state.withLock { state -> [SocketAddress]? in
            guard !state.answers.contains(address) else { return nil }
            state.answers.append(address)
            if address.protocol == .inet6 { state.ipv6 = true } else { state.ipv4 = true }
            if state.ipv4 && state.ipv6 {
                state.settling?.cancel()
                return state.answers
            }
            if state.settling == nil {
                let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(
                    in: TimeAmount(DNSServiceAddressQuery.settleDelay)
                ) { [weak self] in
                    guard let self else { return }
                    self.result.succeed(self.answers)
                }
                state.settling = timer
            }
            return nil
        }
        if let complete { result.succeed(complete) }
    }
}

/// The `DNSServiceQueryRecordReply` callback; `context` is a retained ``AddressQueryContext``.
private func queryRecordReply(
    _ ref: DNSServiceRef?,
    _ flags: DNSServiceFlags,
    _ interfaceIndex: UInt32,
    _ errorCode: DNSServiceErrorType,
    _ fullName: UnsafePointer<CChar>?,
    _ type: UInt16,
    _ recordClass: UInt16,
    _ length: UInt16,
    _ data: UnsafeRawPointer?,
    _ ttl: UInt32,
    _ context: UnsafeMutableRawPointer?
) {
    guard let context else { return }
    let queryContext = Unmanaged<AddressQueryContext>.fromOpaque(context).takeUnretainedValue()
    guard errorCode == kDNSServiceErr_NoError else {
        queryContext.result.fail(DNSServiceFailure(operation: "DNSServiceQueryRecord", code: errorCode))
        return
    }
    // Records going away (no Add flag) say nothing about where to connect now.
    guard flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0, let data, length == 4 || length == 16 else { return }
    queryContext.answered(Array(UnsafeRawBufferPointer(start: data, count: Int(length))), interface: interfaceIndex)
}
