import Foundation

/// The checkout's top folder: the nearest folder above `file` that holds `Package.swift`.
///
/// For the project's tests that read its own files (the docs, the committed results, the fuzz corpus), wherever
/// in the test tree they stand.
///
/// - Parameter file: a source file of the checkout; the caller's by default.
/// - Returns: the folder, or `/` when none holds a `Package.swift`.
package func repositoryRoot(of file: String = #filePath) -> URL {
    var folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    while folder.path != "/" {
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            return folder
        }
        folder = folder.deletingLastPathComponent()
    }
    return folder
}
