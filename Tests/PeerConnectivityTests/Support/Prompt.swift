/// The longest a step may take that takes milliseconds on an idle machine: a cancellation or a close crossing
/// loopback, a timer firing, avahi-daemon answering.
///
/// The suite runs in parallel on two CPUs, and a test's tasks wait behind every other test's on the cooperative
/// pool (as many threads as CPUs): such steps were seen to take up to 2.2 s there. Four seconds is still less than
/// the library's 5 s timers (liveness, handshake, resolve), so a step that only happened once one of those fired,
/// or once a transfer had run to its end, is still caught.
let promptly: Duration = .seconds(4)

/// The invitation timeout of tests that are not about it: an invitation over loopback takes milliseconds on an
/// idle machine, and was seen to take more than 5 s with the suite in parallel on two CPUs.
let invitationTimeout: Duration = .seconds(20)
