import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

/// The receiving end of a resource or of a folder received whole: what the session needs to report it
/// and start it.
protocol IncomingResource: IncomingTransfer {
    /// Its progress, which the application sees.
    var progress: Progress { get }
    /// Starts it once the session has recorded it: answers HAVE and widens the window.
    func start()
}

extension IncomingResource {
    /// Answers the OPEN: counts `resumed` bytes (held from an earlier transfer) as done in the progress,
    /// sends `have`, and widens the window to `window`, or to `size` if that is less: a file within the
    /// first window (a folder's small file sent alone) costs no CREDIT frame, nor the wake of the event
    /// loop that sends it.
    func answerOpen(
        _ have: Frame.Have,
        resumed: UInt64,
        on channel: UInt32,
        of connection: Connection,
        window: Int,
        size: UInt64
    ) {
        if resumed > 0 {
            progress.completedUnitCount = Int64(clamping: resumed)
            progress.setUserInfoObject(NSNumber(value: resumed), forKey: .resumedByteCountKey)
        }
        connection.sendControl(.have(channel: channel, have))
        let widening = min(window, Int(clamping: size)) - WireProtocol.initialChannelWindow
        if widening > 0 { connection.grantCredit(widening, on: channel) }
    }
}
