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
    /// (the responsiveness test's load) with a word "not-sent-lowat=BYTES", followed by "unsent-gate=off" when
    /// only the kernel is to bound them (`gatesUnsentBytes` false), and to run `congestionControl` on the
    /// runner's connection with a word "congestion=NAME", after the test's.
    ///
    /// - Parameters:
    ///   - runName: the run's name.
    ///   - test: the test it runs.
    ///   - reconnects: whether its session resumes links.
    ///   - notSentLowWatermark: the bytes, or nil to ask nothing.
    ///   - congestionControl: the congestion control's name (`-C`), or nil to ask nothing.
    ///   - gatesUnsentBytes: whether the reflector's streams also wait while its kernel holds
    ///     `notSentLowWatermark` unsent.
    /// - Returns: the context's bytes.
    public static func context(
        runName: String,
        test: TestKind,
        reconnects: Bool,
        notSentLowWatermark: Int?,
        congestionControl: String? = nil,
        gatesUnsentBytes: Bool = true
    ) -> Data {
        let lowWatermark = notSentLowWatermark.map { " \(lowWatermarkWord)\($0)" } ?? ""
        let gate = notSentLowWatermark != nil && !gatesUnsentBytes ? " \(unsentGateWord)off" : ""
        let congestion = congestionControl.map { " \(congestionWord)\($0)" } ?? ""
        return Data(
            ("test-runner \(runName) \(test.rawValue)\(lowWatermark)\(gate)\(congestion)"
                + (reconnects ? " \(reconnectionWord)" : "")).utf8
        )
    }

    /// The word before the bytes a runner asks the reflector's unsent bytes to be bounded to.
    public static let lowWatermarkWord = "not-sent-lowat="

    /// The word before "off" when a runner asks the reflector to leave its unsent bytes to the kernel alone.
    public static let unsentGateWord = "unsent-gate="

    /// The word before the congestion control a runner asks the reflector to run.
    public static let congestionWord = "congestion="

    /// The unsent bytes a runner's invitation asks for, within 4 KiB...64 MiB (the library's least); nil when it asks nothing,
    /// whatever the run's name.
    ///
    /// - Parameter context: the context of an invitation.
    /// - Returns: the bytes.
    public static func notSentLowWatermark(in context: Data) -> Int? {
        guard let word = askedWord(lowWatermarkWord, in: context), let bytes = Int(word) else { return nil }
        return min(max(bytes, 4 << 10), 64 << 20)
    }

    /// The congestion control a runner's invitation asks for: a name of 1 to 15 lowercase letters, digits,
    /// `_` or `-`; nil when it asks none or the name is not one, whatever the run's name.
    ///
    /// - Parameter context: the context of an invitation.
    /// - Returns: the name.
    public static func congestionControl(in context: Data) -> String? {
        guard let name = askedWord(congestionWord, in: context), isCongestionControlName(name) else { return nil }
        return name
    }

    /// Whether the reflector's streams to a runner also wait while its kernel holds the asked low watermark
    /// unsent: true unless the runner's invitation asks "unsent-gate=off", whatever the run's name.
    ///
    /// - Parameter context: the context of an invitation.
    /// - Returns: false when it asks the gate off.
    public static func gatesUnsentBytes(in context: Data) -> Bool {
        askedWord(unsentGateWord, in: context) != "off"
    }

    /// Whether `name` can name a congestion control: 1 to 15 lowercase letters, digits, `_` or `-`, as the
    /// kernel's names are.
    ///
    /// - Parameter name: a name.
    public static func isCongestionControlName(_ name: String) -> Bool {
        (1...15).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                $0 == 0x5F || $0 == 0x2D || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0)
            }
    }

    /// What follows `prefix` in the words the context asks with, when it is a test-runner's: read from its end
    /// in the order they are written (low watermark, its gate, congestion control, reconnection), up to the test's
    /// word, so that a run's name cannot ask.
    private static func askedWord(_ prefix: String, in context: Data) -> String? {
        let text = String(decoding: context, as: UTF8.self)
        guard text.hasPrefix("test-runner ") else { return nil }
        var words = text.split(separator: " ").dropFirst()
        if words.last == Substring(reconnectionWord) { words.removeLast() }
        var asked: [Substring] = []
        for word in [congestionWord, unsentGateWord, lowWatermarkWord] where words.last?.hasPrefix(word) == true {
            asked.append(words.removeLast())
        }
        guard words.count >= 2, let test = words.last, TestKind(rawValue: String(test)) != nil else { return nil }
        return asked.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
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
