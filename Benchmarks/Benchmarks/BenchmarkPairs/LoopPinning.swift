import Foundation
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the pairs' event loops run. On one host the scheduler puts the two ends of a round trip on one core
/// in some runs and on two in others, and a 64-byte round trip took about 25 or 70 µs by where they landed.
/// With `PIN=split` and two CPUs or more, loop `i` of a group runs on CPU `i` (the second group of a pair from
/// CPU 1), so each end has a core of its own, as on two hosts and as the loopback scripts pin their servers and
/// clients with it; unset or `none`, the scheduler places them. Linux only; elsewhere nothing is pinned.
package enum LoopPinning {
    /// Whether loops are pinned in this process.
    package static let isOn: Bool = {
        #if os(Linux)
            ProcessInfo.processInfo.environment["PIN"] == "split" && ProcessInfo.processInfo.activeProcessorCount >= 2
        #else
            false
        #endif
    }()

    /// Pins NIO's shared group, whose loops the peers of a process take in turn: a pair's two peers, made one
    /// after the other, take two loops and so two CPUs. Done once a process.
    package static func pinSharedGroup() async {
        let already = sharedPinned.withLock { done in
            defer { done = true }
            return done
        }
        guard isOn, !already else { return }
        await pin(MultiThreadedEventLoopGroup.singleton, from: 0)
    }

    /// Pins `group`'s loop `i` to CPU `first + i`, wrapping around the CPUs.
    ///
    /// - Parameters:
    ///   - group: the loops.
    ///   - first: the CPU of its first loop.
    package static func pin(_ group: any EventLoopGroup, from first: Int) async {
        guard isOn else { return }
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        for (index, loop) in group.makeIterator().enumerated() {
            let cpu = (first + index) % min(cpus, maskBits)
            try? await loop.submit { pinCurrentThread(to: cpu) }.get()
        }
    }

    private static let sharedPinned = Mutex(false)

    /// The CPUs glibc's `cpu_set_t` can name.
    private static let maskBits = 1_024

    /// glibc's `sched_setaffinity`, looked up at run time: its header declares it only for `_GNU_SOURCE`,
    /// which Swift's Glibc module does not define.
    private typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32

    private static func pinCurrentThread(to cpu: Int) {
        #if os(Linux)
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "sched_setaffinity") else { return }
            let setAffinity = unsafeBitCast(symbol, to: SetAffinity.self)
            // glibc's cpu_set_t; pid 0 is the calling thread.
            var mask = [UInt64](repeating: 0, count: maskBits / 64)
            mask[cpu / 64] |= 1 << UInt64(cpu % 64)
            _ = mask.withUnsafeBytes { setAffinity(0, $0.count, $0.baseAddress!) }
        #endif
    }
}
