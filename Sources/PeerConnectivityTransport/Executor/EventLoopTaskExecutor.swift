import NIOCore

/// Runs Swift tasks on a NIO event loop, so a task that consumes a connection's events and sends on it
/// stays on the thread that does the connection's I/O: no hop to the cooperative pool and back.
package final class EventLoopTaskExecutor: TaskExecutor {
    /// The event loop the jobs run on.
    package let eventLoop: any EventLoop

    package init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
