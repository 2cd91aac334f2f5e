import Crypto
import Dispatch
import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization
import SystemPackage

/// The receiving end of one resource: writes its chunks to a hidden partial file, hashes them, and
/// when END arrives checks the length and the SHA-256, then links the file to its final name.
///
/// Disk work runs on a serial queue of its own, never on the event loop; each chunk written gives
/// its length back to the sender's window, so at most the window waits in memory. Whatever ends the
/// transfer (END, a RESET from either side, the connection closing) ends it once: `onFinish` is
/// called exactly once, and on failure the partial file is removed.
final class ResourceReceiver: InboundTransfer, Sendable {
    private struct State {
        var descriptor: SystemPackage.FileDescriptor?
        var partialPath: String?
        var hasher = SHA256()
        var received: UInt64 = 0
        var finished = false
        /// Bytes written and not yet given back to the sender; an eighth of the window makes a batch.
        var credit: CreditBatch
        /// What the file asks of the page cache as it grows.
        var writeBehind = WriteBehind()
    }

    let name: String
    let peer: PeerID
    var endsAtEnd: Bool { false }
    let progress: Progress
    private let rawName: [UInt8]
    private let size: UInt64
    private let connection: Connection
    private let channel: UInt32
    private let directory: URL
    private let window: Int
    private let queue: DispatchQueue
    private let state: Mutex<State>
    private let onFinish: @Sendable (Result<URL, TransferError>) -> Void

    init(
        open: Frame.Open,
        peer: PeerID,
        connection: Connection,
        directory: URL,
        window: Int,
        onFinish: @escaping @Sendable (Result<URL, TransferError>) -> Void
    ) {
        self.name = String(decoding: open.name, as: UTF8.self)
        self.rawName = open.name
        self.peer = peer
        self.size = open.size
        self.connection = connection
        self.channel = open.channel
        self.directory = directory
        self.window = window
        self.state = Mutex(State(credit: CreditBatch(size: window / 8)))
        self.onFinish = onFinish
        self.progress = Progress(totalUnitCount: Int64(clamping: open.size))
        self.queue = DispatchQueue(label: "PeerConnectivity.resource.\(open.channel)")
        progress.cancellationHandler = { [weak self] in self?.cancel() }
    }

    /// Creates the partial file and widens the window to ``Session/Configuration/resourceWindow``.
    func start() {
        queue.async { [self] in
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let path = directory.appendingPathComponent(".partial-\(UUID().uuidString)").path
                let descriptor: SystemPackage.FileDescriptor
                do {
                    descriptor = try SystemPackage.FileDescriptor.open(
                        SystemPackage.FilePath(path),
                        .writeOnly,
                        options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                        permissions: [.ownerReadWrite]
                    )
                } catch {
                    throw POSIXFailure("open \(path)", (error as? SystemPackage.Errno) ?? .ioError)
                }
                let open = state.withLock { state -> Bool in
                    guard !state.finished else { return false }
                    state.descriptor = descriptor
                    state.partialPath = path
                    return true
                }
                guard open else {
                    try? descriptor.close()
                    Platform.unlink(path)
                    return
                }
                connection.grantCredit(window - WireProtocol.initialChannelWindow, on: channel)
            } catch {
                fail(.failed(peer: peer, name: name, detail: "\(error)"), resetCode: .failed)
            }
        }
    }

    // MARK: - From the connection (event loop)

    func received(_ bytes: ByteBuffer) {
        queue.async { [self] in
            do {
                let grant = try state.withLock { state throws -> Int? in
                    guard !state.finished, let descriptor = state.descriptor else { return nil }
                    guard state.received + UInt64(bytes.readableBytes) <= size else {
                        throw TransferError.sizeMismatch(peer: peer, name: name, detail: "more than \(size) bytes")
                    }
                    try bytes.withUnsafeReadableBytes { buffer in
                        state.hasher.update(bufferPointer: buffer)
                        try Self.writeAll(buffer, to: descriptor)
                    }
                    state.received += UInt64(bytes.readableBytes)
                    Self.advise(state.writeBehind.wrote(upTo: state.received), descriptor: descriptor)
                    return state.credit.took(bytes.readableBytes)
                }
                guard let grant else { return }
                progress.completedUnitCount += Int64(bytes.readableBytes)
                if grant > 0 { connection.grantCredit(grant, on: channel) }
            } catch let error as TransferError {
                fail(error, resetCode: .sizeMismatch)
            } catch let failure as POSIXFailure where failure.code == .noSpace || failure.code == .diskQuotaExceeded {
                // The sender learns why (RESET no space), not only that something failed.
                fail(.failed(peer: peer, name: name, detail: "writing: \(failure)"), resetCode: .noSpace)
            } catch {
                fail(.failed(peer: peer, name: name, detail: "writing: \(error)"), resetCode: .failed)
            }
        }
    }

    func ended(digest: [UInt8]?) {
        queue.async { [self] in
            let outcome = state.withLock { state -> Result<(String, [UInt8]), TransferError>? in
                guard !state.finished, let path = state.partialPath else { return nil }
                guard state.received == size else {
                    let detail = "\(state.received) bytes received, \(size) announced"
                    return .failure(.sizeMismatch(peer: peer, name: name, detail: detail))
                }
                return .success((path, Array(state.hasher.finalize())))
            }
            switch outcome {
            case .none:
                return
            case .failure(let error):
                fail(error, resetCode: .sizeMismatch)
            case .success(let (path, computed)):
                guard computed == digest else {
                    fail(.digestMismatch(peer: peer, name: name), resetCode: .digestMismatch)
                    return
                }
                do {
                    let url = try place(path)
                    guard finishOnce() else { return }
                    connection.sendControl(.done(channel: channel))
                    onFinish(.success(url))
                } catch {
                    fail(.failed(peer: peer, name: name, detail: "\(error)"), resetCode: .failed)
                }
            }
        }
    }

    func failed(_ error: TransferError) {
        queue.async { [self] in
            guard finishOnce() else { return }
            onFinish(.failure(error))
        }
    }

    /// This side cancels (its `Progress`): the sender gets a cancelled error, this side too.
    func cancel() {
        queue.async { [self] in
            fail(.cancelled(peer: peer, name: name), resetCode: .cancelled)
        }
    }

    // MARK: - On the queue

    /// Ends the transfer with `error`, tells the sender (RESET), removes the partial file.
    private func fail(_ error: TransferError, resetCode: ChannelResetCode) {
        guard finishOnce() else { return }
        connection.resetInboundChannel(channel, resetCode)
        onFinish(.failure(error))
    }

    /// Marks the transfer finished, closes the file and removes it if it was not placed;
    /// `false` if it had already finished.
    private func finishOnce() -> Bool {
        let (first, descriptor, partial) = state.withLock { state -> (Bool, SystemPackage.FileDescriptor?, String?) in
            guard !state.finished else { return (false, nil, nil) }
            state.finished = true
            defer {
                state.descriptor = nil
                state.partialPath = nil
            }
            return (true, state.descriptor, state.partialPath)
        }
        try? descriptor?.close()
        if let partial { Platform.unlink(partial) }
        if first { progress.cancellationHandler = nil }
        return first
    }

    /// Links the partial file to the first free candidate name (a path below the directory for a name
    /// with "/", see ``ResourcePlacement``); never replaces an existing file.
    private func place(_ partial: String) throws -> URL {
        try ResourcePlacement.place(partial, named: rawName, in: directory)
    }

    /// Asks the page cache what ``WriteBehind`` advises. Advice only: a failure is ignored, as it
    /// changes nothing but what stays cached.
    private static func advise(_ advice: WriteBehind.Advice, descriptor: SystemPackage.FileDescriptor) {
        if let range = advice.startWriteback {
            Platform.adviseNotNeeded(descriptor.rawValue, offset: range.offset, length: range.length)
        }
        if let range = advice.dropFromCache {
            Platform.adviseNotNeeded(descriptor.rawValue, offset: range.offset, length: range.length)
        }
    }

    private static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: SystemPackage.FileDescriptor) throws {
        var written = 0
        do {
            while written < buffer.count {
                written += try descriptor.write(UnsafeRawBufferPointer(rebasing: buffer[written...]))
            }
        } catch {
            throw POSIXFailure("write", (error as? SystemPackage.Errno) ?? .ioError)
        }
    }
}

/// A failed system call, with its errno.
struct POSIXFailure: Error, CustomStringConvertible {
    let call: String
    let code: SystemPackage.Errno

    init(_ call: String, _ code: SystemPackage.Errno) {
        self.call = call
        self.code = code
    }

    var description: String { "\(call): \(code)" }
}
