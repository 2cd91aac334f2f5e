import Foundation

/// The git commit the running tool was built from, when it runs from a checkout (`swift run`, or
/// `.build/<configuration>/<tool>` inside the repository): the first folder above the executable that
/// holds `.git`.
public enum SourceRevision {
    /// The commit, 12 hex digits, read from `.git` (no process started); nil outside a checkout.
    public static let commit: String? = checkout.flatMap(readHead)

    /// The commit, with "+changes" when tracked files differ from it (asked of `git status`, once); nil
    /// outside a checkout. What a result document records.
    public static let current: String? = commit.map { commit in
        guard let checkout, let changes = git(["status", "--porcelain", "--untracked-files=no"], in: checkout) else {
            return commit
        }
        return changes.isEmpty ? commit : commit + "+changes"
    }

    /// The checkout the executable lives in.
    private static let checkout: URL? = {
        var folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(".git").path) { return folder }
            folder.deleteLastPathComponent()
        }
        return nil
    }()

    /// HEAD's commit from the files: a detached HEAD, a loose ref, or packed-refs.
    private static func readHead(_ checkout: URL) -> String? {
        let git = checkout.appendingPathComponent(".git")
        func text(_ path: String) -> String? {
            (try? String(contentsOf: git.appendingPathComponent(path), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let head = text("HEAD") else { return nil }
        guard head.hasPrefix("ref: ") else { return String(head.prefix(12)) }
        let reference = String(head.dropFirst(5))
        if let loose = text(reference) { return String(loose.prefix(12)) }
        let packed = text("packed-refs") ?? ""
        for line in packed.split(separator: "\n") where line.hasSuffix(" " + reference) {
            return String(line.prefix(12))
        }
        return nil
    }

    private static func git(_ arguments: [String], in folder: URL) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", folder.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
