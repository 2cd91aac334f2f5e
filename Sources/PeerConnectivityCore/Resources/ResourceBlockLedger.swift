/// What the receiver of a resource knows about its blocks: which it holds, checked, with their
/// digests; which block the bytes arriving now belong to; and, at END, whether the file is whole.
///
/// Pure: the receiver's I/O shell writes the bytes where ``chunkArrived(length:)`` says, hashes each
/// whole block (beside the writing of the next), and reports the digest with ``blockHashed(_:_:)``;
/// several blocks may wait for their hash at once. Blocks kept from an
/// earlier attempt (resume) start the ledger as held; one the sender sends again replaces its copy.
package struct ResourceBlockLedger: Sendable {
    /// What ``blockHashed(_:)`` decided.
    package enum Verdict: Equatable, Sendable {
        /// The block matches the digest its BLOCK announced: it is held.
        case verified(index: Int)
        /// It does not: the bytes on disk are not the sender's.
        case mismatch(index: Int)
    }

    /// What END means for the resource.
    package enum Outcome: Equatable, Sendable {
        /// Every block is held: the root over `digests` must match the END's.
        case whole(digests: [[UInt8]])
        /// Some blocks were never sent (nor held): the sender broke its word.
        case missing([Int])
    }

    /// How the resource is cut.
    package let layout: ResourceLayout
    private var digests: [[UInt8]?]
    private var current: (index: Int, expected: [UInt8], received: Int)?
    /// Whole blocks waiting for their hash, with the digest their BLOCK announced.
    private var awaitingHash: [Int: [UInt8]] = [:]
    /// The block ``chunkArrived(length:)`` completed last.
    private var lastCompleted: Int?

    /// A ledger for a resource laid out as `layout`, holding the blocks in `kept`.
    ///
    /// - Parameters:
    ///   - layout: the resource's blocks.
    ///   - kept: blocks held from an earlier attempt, checked again since, with their digests.
    package init(layout: ResourceLayout, kept: [Int: [UInt8]] = [:]) {
        self.layout = layout
        self.digests = Array(repeating: nil, count: layout.blockCount)
        for (index, digest) in kept where index < layout.blockCount {
            digests[index] = digest
        }
    }

    /// The blocks held, in order.
    package var heldBlocks: [Int] {
        digests.indices.filter { digests[$0] != nil }
    }

    /// The blocks held with their digests.
    package var heldByIndex: [Int: [UInt8]] {
        var held: [Int: [UInt8]] = [:]
        for index in digests.indices { if let digest = digests[index] { held[index] = digest } }
        return held
    }

    /// The digests of the blocks held, in order (what HAVE's digest is computed over).
    package var heldDigests: [[UInt8]] {
        digests.compactMap { $0 }
    }

    /// The bytes the blocks held hold.
    package var heldBytes: UInt64 {
        layout.bytes(in: heldBlocks)
    }

    /// Whether block `index` is held (checked, from this transfer or an earlier one).
    ///
    /// - Parameter index: a block, below the layout's count.
    /// - Returns: whether it is held.
    package func isHeld(_ index: Int) -> Bool {
        digests[index] != nil
    }

    /// Whether bytes of a block are arriving (a BLOCK came, and not all of its bytes yet).
    package var isInsideBlock: Bool { current != nil }

    /// A BLOCK frame: the bytes that follow are block `index`, whose digest (``BlockHasher``) is `digest`.
    ///
    /// The channel table has checked that the index is within the resource and that the block before
    /// is whole. A block held already is forgotten: its new bytes replace it. A block whose bytes
    /// came whole and wait for their hash cannot come again (a sender sends each block once per
    /// opening): that breaks the transfer.
    ///
    /// - Parameters:
    ///   - index: the block.
    ///   - digest: its digest as the sender computed it.
    /// - Returns: where in the file its bytes go; `nil` when the block is waiting for its hash.
    package mutating func blockStarted(_ index: Int, digest: [UInt8]) -> UInt64? {
        precondition(current == nil, "the channel table lets a block start only after the last one is whole")
        guard awaitingHash[index] == nil else { return nil }
        digests[index] = nil
        current = (index, digest, 0)
        return layout.offset(of: index)
    }

    /// A CHUNK of `length` bytes of the current block.
    ///
    /// - Parameter length: its payload length (the channel table kept it within the block).
    /// - Returns: where in the file to write it, and whether it completes the block (then hash the
    ///   block and call ``blockHashed(_:_:)``).
    package mutating func chunkArrived(length: Int) -> (offset: UInt64, completesBlock: Bool) {
        guard var block = current else {
            preconditionFailure("the channel table lets a chunk come only inside a block")
        }
        let offset = layout.offset(of: block.index) + UInt64(block.received)
        block.received += length
        guard block.received == layout.length(of: block.index) else {
            current = block
            return (offset, false)
        }
        current = nil
        awaitingHash[block.index] = block.expected
        lastCompleted = block.index
        return (offset, true)
    }

    /// Whole block `index` hashed to `digest`.
    ///
    /// - Parameters:
    ///   - index: a block ``chunkArrived(length:)`` completed.
    ///   - digest: the ``BlockHasher`` digest of the bytes written.
    /// - Returns: whether the block is held; `nil` when it no longer waits for this hash (it was sent
    ///   again meanwhile).
    package mutating func blockHashed(_ index: Int, _ digest: [UInt8]) -> Verdict? {
        guard let expected = awaitingHash.removeValue(forKey: index) else { return nil }
        guard digest == expected else { return .mismatch(index: index) }
        digests[index] = digest
        return .verified(index: index)
    }

    /// The block completed last hashed to `digest` (as ``blockHashed(_:_:)``).
    ///
    /// - Parameter digest: the ``BlockHasher`` digest of the bytes written.
    /// - Returns: whether the block is held.
    package mutating func blockHashed(_ digest: [UInt8]) -> Verdict? {
        guard let index = lastCompleted else { preconditionFailure("no block is complete") }
        return blockHashed(index, digest)
    }

    /// The sender's END: whether every block is held.
    package var outcomeAtEnd: Outcome {
        let missing = digests.indices.filter { digests[$0] == nil }
        guard missing.isEmpty else { return .missing(missing) }
        return .whole(digests: digests.map { $0! })
    }
}
