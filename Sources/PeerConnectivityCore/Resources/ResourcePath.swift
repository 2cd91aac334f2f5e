/// The safe relative path a received resource or folder is placed at, from the name its sender gave it
/// (untrusted bytes). Pure: ``components`` says where, the receiver's placing makes it so.
///
/// A name without "/" is one file name, made safe by ``ResourceFileName/sanitized(_:)``. A name with "/"
/// is a relative path (a file of a folder, or a folder's name): it is split on "/"; empty, "." and ".."
/// components are dropped (a path never climbs); every other component is made safe as a file name is.
/// A name that leaves nothing ("", ".", "..", "/", "../..") becomes "resource", so a folder of such a
/// name lands in a folder of its own inside the receive directory, never at its root. More than
/// ``maximumDepth`` components, or a path longer than ``maximumPathLength`` bytes, is refused.
package struct ResourcePath: Sendable, Equatable {
    /// The most components a path keeps, a folder's own name included.
    package static let maximumDepth = 32

    /// The longest path made, in UTF-8 bytes, its components joined by "/".
    package static let maximumPathLength = 1024

    /// Why a name cannot be placed.
    package struct Refusal: Error, Hashable, CustomStringConvertible {
        /// What is wrong, in a sentence.
        package let description: String

        /// A refusal saying `description`.
        package init(description: String) {
            self.description = description
        }
    }

    /// The path's components, one a step, never empty: each a safe file name, none "." or "..".
    package let components: [String]

    /// The safe path for `raw`.
    ///
    /// - Parameter raw: the name as sent.
    /// - Throws: ``Refusal`` when the path is deeper than ``maximumDepth`` or longer than
    ///   ``maximumPathLength``.
    package init(_ raw: [UInt8]) throws(Refusal) {
        guard raw.contains(UInt8(ascii: "/")) else {
            components = [ResourceFileName.sanitized(raw)]
            return
        }
        let kept = raw.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
            .filter { $0.elementsEqual([0x2E]) == false && $0.elementsEqual([0x2E, 0x2E]) == false }
        guard kept.count <= Self.maximumDepth else {
            throw Refusal(
                description: "the path has \(kept.count) components, at most \(Self.maximumDepth) are taken"
            )
        }
        let components = kept.isEmpty ? ["resource"] : kept.map { ResourceFileName.sanitized(Array($0)) }
        let length = components.reduce(components.count - 1) { $0 + $1.utf8.count }
        guard length <= Self.maximumPathLength else {
            throw Refusal(
                description: "the path is \(length) bytes long, at most \(Self.maximumPathLength) are taken"
            )
        }
        self.components = components
    }
}
