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
        Data("test-runner \(runName) \(test.rawValue)\(reconnects ? " \(reconnectionWord)" : "")".utf8)
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
