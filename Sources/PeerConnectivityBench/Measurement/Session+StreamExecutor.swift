import PeerConnectivity

extension Session {
    /// Where the tools read and write their bulk streams: on the session's event loop (``Session/taskExecutor``),
    /// where a chunk is queued or taken without waking another thread; on the default executor when the session
    /// bounds its unsent bytes (`notSentLowWatermark`, the responsiveness test's load flows).
    ///
    /// With a low watermark a stream's queue holds 16 KiB, so a writer on the event loop and its drains take two
    /// of the loop's tasks for every 16 KiB, and a message on a session of the same loop waited behind them: on
    /// one 2-vCPU host the responsiveness test's probes took 15-19 ms in the download phase against 0.6-1.3 ms with
    /// the streams on the default executor (`results/responsiveness-loopback-2026-12-02/`).
    var streamExecutor: (any TaskExecutor)? {
        configuration.notSentLowWatermark == nil ? taskExecutor : nil
    }
}
