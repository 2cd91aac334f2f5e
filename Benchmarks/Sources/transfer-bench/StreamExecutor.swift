import PeerConnectivity

/// Where both ends of the measured streams run their tasks: the writers in this process, the readers
/// in the child. The writer names each stream after it, so the child's reader runs where the writer does.
enum StreamExecutor: String, Codable, Sendable {
    /// The session's event loop (`Session.taskExecutor`), as an app that wants the most throughput does.
    case session
    /// The default executor (the cooperative pool), as an app that does nothing special.
    case defaultExecutor = "default"

    /// The name of stream `index`, which tells the reader where to run.
    func streamName(_ index: Int) -> String {
        "\(rawValue)-stream-\(index)"
    }

    /// Where the reader of the stream named `streamName` runs.
    init(streamName: String) {
        self = streamName.hasPrefix("\(Self.session.rawValue)-") ? .session : .defaultExecutor
    }

    /// The task executor preference for a task of `session`'s streams; `nil` for the default executor.
    func preference(for session: Session) -> (any TaskExecutor)? {
        self == .session ? session.taskExecutor : nil
    }
}
