import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

/// The receiving end of a resource or of a folder received whole (a ``BlockReceiver``): what the
/// session needs to report it and start it.
protocol IncomingResource: IncomingTransfer {
    /// Its progress, which the application sees.
    var progress: Progress { get }
    /// Starts it once the session has recorded it: answers HAVE and widens the window.
    func start()
}
