import Foundation

/// How many times slower the code under test runs than in a plain build: 5 under ThreadSanitizer
/// (Scripts/tsan.sh), which makes every memory access and every lock several times dearer; otherwise 1.
///
/// The tests' bounds and waits on time are multiplied by it: under ThreadSanitizer they look for races, not for
/// speed.
let slowdown: Int = dlsym(nil, "__tsan_init") == nil ? 1 : 5

/// The longest a step may take that takes milliseconds on an idle machine: a cancellation or a close crossing
/// loopback, a timer firing, avahi-daemon answering.
///
/// The suite runs in parallel on two CPUs, and a test's tasks wait behind every other test's on the cooperative
/// pool (as many threads as CPUs): such steps were seen to take up to 2.2 s there. Four seconds is still less than
/// the library's 5 s timers (liveness, handshake, resolve), so a step that only happened once one of those fired,
/// or once a transfer had run to its end, is still caught. Times ``slowdown``.
let promptly: Duration = .seconds(4) * slowdown

/// The invitation timeout of tests that are not about it: an invitation over loopback takes milliseconds on an
/// idle machine, and was seen to take more than 5 s with the suite in parallel on two CPUs. Times ``slowdown``.
let invitationTimeout: Duration = .seconds(20) * slowdown
