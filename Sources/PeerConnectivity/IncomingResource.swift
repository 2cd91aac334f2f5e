import Foundation

/// The receiving end of a resource or of a folder received whole: what the session needs to report it
/// and start it.
protocol IncomingResource: InboundTransfer {
    /// Its progress, which the application sees.
    var progress: Progress { get }
    /// Starts it once the session has recorded it: answers HAVE and widens the window.
    func start()
}
