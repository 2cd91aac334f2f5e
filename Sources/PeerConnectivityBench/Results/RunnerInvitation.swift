import Foundation

/// The context a test-runner sends with its invitation: "test-runner NAME TEST", followed by
/// " reconnection" when its session resumes links (`--interrupt-at`). The reflector logs it, and gives
/// its session for the runner reconnection only when the runner asks: on a link whose peer does not
/// resume, a session with reconnection still sends its reliable messages through the resend ledger,
/// which moves the data test's figures.
public enum RunnerInvitation {
    /// The last word of the context of a runner whose session resumes links.
    public static let reconnectionWord = "reconnection"

    /// A runner's invitation context.
    ///
    /// - Parameters:
    ///   - runName: the run's name.
    ///   - test: the test it runs.
    ///   - reconnects: whether its session resumes links.
    /// - Returns: the context's bytes.
    public static func context(runName: String, test: TestKind, reconnects: Bool) -> Data {
        context(runName: runName, test: test, reconnects: reconnects, notSentLowWatermark: nil)
    }

    /// A runner's invitation context, asking the reflector to bound its unsent bytes to `notSentLowWatermark`
    /// (the responsiveness test's load) with a word "not-sent-lowat=BYTES" after the test's.
    ///
    /// - Parameters:
    ///   - runName: the run's name.
    ///   - test: the test it runs.
    ///   - reconnects: whether its session resumes links.
    ///   - notSentLowWatermark: the bytes, or nil to ask nothing.
    /// - Returns: the context's bytes.
    public static func context(runName: String, test: TestKind, reconnects: Bool, notSentLowWatermark: Int?) -> Data {
        let lowWatermark = notSentLowWatermark.map { " \(lowWatermarkWord)\($0)" } ?? ""
        return Data(
            "test-runner \(runName) \(test.rawValue)\(lowWatermark)\(reconnects ? " \(reconnectionWord)" : "")".utf8
        )
    }

    /// The word before the bytes a runner asks the reflector's unsent bytes to be bounded to.
    public static let lowWatermarkWord = "not-sent-lowat="

    /// The unsent bytes a runner's invitation asks for, within 16 KiB...64 MiB; nil when it asks nothing. The
    /// word is one of the last two, whatever the run's name.
    ///
    /// - Parameter context: the context of an invitation.
    /// - Returns: the bytes.
    public static func notSentLowWatermark(in context: Data) -> Int? {
        let text = String(decoding: context, as: UTF8.self)
        guard text.hasPrefix("test-runner ") else { return nil }
        let word = text.split(separator: " ").suffix(2).first { $0.hasPrefix(lowWatermarkWord) }
        guard let bytes = word.flatMap({ Int($0.dropFirst(lowWatermarkWord.count)) }) else { return nil }
        return min(max(bytes, 16 << 10), 64 << 20)
    }

    /// Whether a runner's invitation context asks for reconnection. Its last word is the test's otherwise,
    /// whatever the run's name.
    ///
    /// - Parameter context: the context of an invitation.
    /// - Returns: true when it is a test-runner's and ends with ``reconnectionWord``.
    public static func asksForReconnection(_ context: Data) -> Bool {
        let text = String(decoding: context, as: UTF8.self)
        return text.hasPrefix("test-runner ") && text.hasSuffix(" \(reconnectionWord)")
    }
}
