import Foundation
import PeerConnectivity
import PeerConnectivityCore

/// What the reflector does with a runner's streams and resources, each in a task of its own.
extension ReflectorService {
    /// Writes a stream's bytes back to its writer on a stream of the same name, as they come.
    static func echo(_ stream: IncomingStream, in session: Session, log: @Sendable (String) -> Void) async {
        let outgoing: OutgoingStream
        do {
            outgoing = try session.startStream(withName: stream.name, toPeer: stream.peer)
        } catch {
            stream.cancel()
            log(
                "stream \"\(LogSafe.escaped(stream.name, limit: 80))\" from runner=\(LogSafe.escaped(stream.peer.displayName)) not echoed: \(error)"
            )
            return
        }
        var bytes = 0
        do {
            for try await chunk in stream {
                try await outgoing.write(chunk)
                bytes += chunk.count
            }
            try outgoing.finish()
            log(
                "stream \"\(LogSafe.escaped(stream.name, limit: 80))\" from runner=\(LogSafe.escaped(stream.peer.displayName)) echoed bytes=\(bytes)"
            )
        } catch {
            outgoing.cancel()
            stream.cancel()
            log(
                "stream \"\(LogSafe.escaped(stream.name, limit: 80))\" from runner=\(LogSafe.escaped(stream.peer.displayName)) failed after \(bytes) bytes: \(error)"
            )
        }
    }

    /// The bytes one-way streams are checked against (made on first use).
    static let pattern = StreamPattern()

    /// Reads a one-way stream, checks every byte against the pattern its name's index gives, and answers
    /// with a ``StreamReceipt``.
    static func receive(_ stream: IncomingStream, in session: Session, log: @Sendable (String) -> Void) async {
        let index = Int(stream.name.dropFirst(StreamTest.oneWayPrefix.count)) ?? 0
        var bytes = 0
        var mismatch: Int?
        var failure: String?
        var seconds: [Int] = []
        var firstByte: UInt64?
        do {
            for try await chunk in stream {
                if mismatch == nil {
                    mismatch = chunk.withUnsafeBytes { pattern.firstMismatch(in: $0, index: index, offset: bytes) }
                        .map { bytes + $0 }
                }
                bytes += chunk.count
                let now = MonotonicClock.now()
                let second = Int((now - (firstByte ?? now)) / 1_000_000_000)
                firstByte = firstByte ?? now
                if seconds.count <= second {
                    seconds.append(contentsOf: repeatElement(0, count: second + 1 - seconds.count))
                }
                seconds[second] += chunk.count
            }
        } catch {
            failure = "\(error)"
        }
        var receipt = StreamReceipt(name: stream.name, bytes: bytes, firstMismatchOffset: mismatch, error: failure)
        receipt.bytesPerSecond = seconds
        log(
            "stream \"\(LogSafe.escaped(stream.name, limit: 80))\" from runner=\(LogSafe.escaped(stream.peer.displayName)) read bytes=\(bytes)"
                + (mismatch.map { " first-mismatch=\($0)" } ?? "") + (failure.map { " failed: \($0)" } ?? "")
        )
        do {
            try await session.send(receipt.encoded(), toPeers: [stream.peer], mode: .reliable)
        } catch {
            log("receipt to runner=\(LogSafe.escaped(stream.peer.displayName)) failed: \(error)")
        }
    }

    /// Removes what a runner's resource made in the receive directory: the file (or the folder received
    /// whole, which arrives in one piece), and the folders made for its path (a folder's file sent as a
    /// resource of its own, `<folder>/<path>`) that it leaves empty, up to the receive directory. A folder
    /// holding something else stays.
    ///
    /// - Parameters:
    ///   - url: where the resource landed, inside `directory`.
    ///   - directory: the receive directory.
    static func removeReceived(_ url: URL, in directory: URL) {
        try? FileManager.default.removeItem(at: url)
        let root = directory.standardizedFileURL.path
        var folder = url.standardizedFileURL.deletingLastPathComponent()
        while folder.path.hasPrefix(root + "/") {
            // rmdir removes an empty folder only, and no symbolic link: what holds anything stays.
            guard rmdir(folder.path) == 0 else { return }
            folder = folder.deletingLastPathComponent()
        }
    }

    /// Hashes a received resource (a file, or a folder's tree), tells its sender the size and SHA-256, and
    /// deletes it with the folders its path made (``removeReceived(_:in:)``).
    static func confirm(
        _ name: String,
        _ result: Result<URL, TransferError>,
        to peer: PeerID,
        in session: Session,
        log: @Sendable (String) -> Void
    ) async {
        let confirmation: ResourceConfirmation
        switch result {
        case .success(let url):
            do {
                if FolderDigest.isFolder(url) {
                    let digest = try FolderDigest(of: url)
                    confirmation = ResourceConfirmation(
                        name: name,
                        size: digest.bytes,
                        sha256: digest.sha256,
                        files: digest.files
                    )
                } else {
                    let digest = try FileDigest(of: url)
                    confirmation = ResourceConfirmation(name: name, size: digest.size, sha256: digest.sha256)
                }
            } catch {
                confirmation = ResourceConfirmation(
                    name: name,
                    size: nil,
                    sha256: nil,
                    error: "reading the file: \(error)"
                )
            }
            removeReceived(url, in: session.configuration.resourceDirectory)
        case .failure(let error):
            confirmation = ResourceConfirmation(name: name, size: nil, sha256: nil, error: "\(error)")
        }
        log(
            "resource \"\(LogSafe.escaped(name, limit: 80))\" from runner=\(LogSafe.escaped(peer.displayName)) "
                + (confirmation.error.map { "failed: \($0)" }
                    ?? "bytes=\(confirmation.size ?? 0)\(confirmation.files.map { " files=\($0)" } ?? "") "
                    + "sha256=\(confirmation.sha256 ?? "")")
        )
        do {
            try await session.send(confirmation.encoded(), toPeers: [peer], mode: .reliable)
        } catch {
            log("confirmation to runner=\(LogSafe.escaped(peer.displayName)) failed: \(error)")
        }
    }

    /// The bulk test's reverse direction: writes stream `bench-reverse-<index>` to the runner, the
    /// pattern's bytes of that index, for the time the request asks (at most a day), then finishes it.
    static func writeReverse(
        _ request: BulkRequest,
        to peer: PeerID,
        in session: Session,
        log: @Sendable (String) -> Void
    ) async {
        let name = "\(BulkRequest.streamPrefix)\(request.index)"
        let deadline = ContinuousClock.now + .milliseconds(min(max(request.milliseconds, 0), 86_400_000))
        var offset = 0
        do {
            let stream = try session.startStream(withName: name, toPeer: peer)
            while ContinuousClock.now < deadline {
                // A slice of the pattern's table: in plaintext the socket writes it where it is.
                let bytes = pattern.buffer(index: request.index, offset: offset, count: StreamTest.writeSize)
                try await stream.write(bytes)
                offset += bytes.readableBytes
            }
            try stream.finish()
            log("stream \"\(name)\" to runner=\(LogSafe.escaped(peer.displayName)) wrote bytes=\(offset)")
        } catch {
            log(
                "stream \"\(name)\" to runner=\(LogSafe.escaped(peer.displayName)) failed after \(offset) bytes: \(error)"
            )
        }
    }
}
