import ServiceLifecycle

extension ReflectorService: Service {
    /// Serves until a graceful shutdown (swift-service-lifecycle's `ServiceGroup`, on SIGTERM or SIGINT
    /// in the `reflector` tool) or the task's cancellation, then stops: advertising ends, every runner is
    /// told goodbye (its transfers end with it), the raw echo server closes, and a resource directory of
    /// its own is removed with whatever partial files it held. Starts the reflector first unless
    /// ``start()`` was called already.
    ///
    /// - Throws: what ``start()`` throws.
    public func run() async throws {
        if !isStarted { try await start() }
        try? await gracefulShutdown()
        let (serving, served) = runnerCounts
        log("stopping: goodbye to \(serving) runners")
        await stop()
        log("stopped after serving \(served) runners")
    }
}
