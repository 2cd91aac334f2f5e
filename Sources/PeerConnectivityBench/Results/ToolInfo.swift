/// The tool that wrote a result document.
public struct ToolInfo: Codable, Hashable, Sendable {
    /// The version of the benchmark tools (reflector and test-runner), changed with what they measure.
    public static let version = "0.1.0"

    /// The tool's name: "test-runner".
    public var name: String
    /// Its version.
    public var version: String
    /// "release" or "debug": how the tool was compiled (debug builds are several times slower).
    public var build: String

    /// Makes a tool description.
    ///
    /// - Parameters:
    ///   - name: the tool's name.
    ///   - version: its version.
    ///   - build: "release" or "debug".
    public init(name: String = "test-runner", version: String = ToolInfo.version, build: String = ToolInfo.build) {
        self.name = name
        self.version = version
        self.build = build
    }

    /// How this build was compiled: "release" or "debug".
    public static var build: String {
        #if DEBUG
            return "debug"
        #else
            return "release"
        #endif
    }
}
