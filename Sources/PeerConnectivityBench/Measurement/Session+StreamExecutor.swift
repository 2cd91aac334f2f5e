import PeerConnectivity

extension Session {
    /// Where the tools read and write their bulk streams: on the session's event loop (``Session/taskExecutor``),
    /// where a chunk is queued or taken without waking another thread; on the default executor when the session
    /// bounds its unsent bytes (`notSentLowWatermark`, the responsiveness test's load flows).
    ///
    /// With a low watermark a stream's queue holds no more than the watermark (16 KiB by default), so a writer on
    /// the event loop and its drains take two of the loop's tasks for every 16 KiB, and the probes on the loop's
    /// other sessions wait longer behind them: on one 2-vCPU host's loopback the download phase's probes took
    /// 0.65-0.69 ms at their median with the load's streams on the default executor, 0.78-1.30 ms with them on
    /// the event loop (`results/responsiveness-loopback-2026-12-02/`).
    var streamExecutor: (any TaskExecutor)? {
        configuration.notSentLowWatermark == nil ? taskExecutor : nil
    }
}
