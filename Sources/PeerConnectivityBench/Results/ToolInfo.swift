import PeerConnectivity

/// The tool that wrote a result document, and what it was built from.
public struct ToolInfo: Codable, Hashable, Sendable {
    /// The version of the benchmark tools (reflector and test-runner), changed with what they measure.
    public static let version = "0.2.0"

    /// The tool's name: "test-runner".
    public var name: String
    /// Its version.
    public var version: String
    /// "release" or "debug": how the tool was compiled (debug builds are several times slower).
    public var build: String
    /// Whether Swift's run-time exclusivity checks ran in this build: false for the release builds of
    /// `Scripts/build-tools.sh`, which turns them off in every module (a third of a round trip's instructions
    /// in SwiftNIO's loop); nil in documents written before it was recorded.
    public var exclusivityChecks: Bool?
    /// The PeerConnectivity library's version (``PeerConnectivity/LibraryVersion/current``); nil in
    /// documents written before it was recorded.
    public var libraryVersion: String?
    /// The wire protocol version.
    public var wireProtocol: Int?
    /// The git commit it was built from ("+changes" when the checkout differed from it); nil when it did
    /// not run from a checkout.
    public var commit: String?

    /// Makes a tool description; the library version and commit are this build's.
    ///
    /// - Parameters:
    ///   - name: the tool's name.
    ///   - version: its version.
    ///   - build: "release" or "debug".
    ///   - exclusivityChecks: whether the run-time exclusivity checks ran; by default this build's.
    ///   - commit: the commit; by default this build's, with "+changes" when the checkout differs (which
    ///     asks `git status` once).
    public init(
        name: String = "test-runner",
        version: String = ToolInfo.version,
        build: String = ToolInfo.build,
        exclusivityChecks: Bool = ToolInfo.exclusivityChecks,
        commit: String? = SourceRevision.current
    ) {
        self.name = name
        self.version = version
        self.build = build
        self.exclusivityChecks = exclusivityChecks
        self.libraryVersion = LibraryVersion.current
        self.wireProtocol = LibraryVersion.wireProtocol
        self.commit = commit
    }

    /// How this build was compiled: "release" or "debug".
    public static var build: String {
        #if DEBUG
            return "debug"
        #else
            return "release"
        #endif
    }

    /// Whether this build runs Swift's run-time exclusivity checks: `Scripts/build-tools.sh` defines
    /// `PEER_CONNECTIVITY_UNCHECKED_EXCLUSIVITY` where it turns them off.
    public static var exclusivityChecks: Bool {
        #if PEER_CONNECTIVITY_UNCHECKED_EXCLUSIVITY
            return false
        #else
            return true
        #endif
    }

    /// One line for `--version`: "test-runner 0.2.0 (PeerConnectivity 0.9.0, wire protocol 2, release,
    /// commit 4102378c9f1a)", with "exclusivity checks off" after the build where they are.
    public var versionLine: String {
        let library = libraryVersion.map { "PeerConnectivity \($0), " } ?? ""
        let wire = wireProtocol.map { "wire protocol \($0), " } ?? ""
        let checks = exclusivityChecks == false ? ", exclusivity checks off" : ""
        return "\(name) \(version) (\(library)\(wire)\(build)\(checks), commit \(commit ?? "unknown"))"
    }
}
