import Foundation

/// How many times slower the code under test runs than in a plain build: 5 under ThreadSanitizer
/// (Scripts/tsan.sh), which makes every memory access and every lock several times dearer; otherwise 1.
///
/// The tests' bounds and waits on time, and the suites' time limits (guards against a hang), are multiplied by it:
/// under ThreadSanitizer they look for races, not for speed.
let slowdown: Int = dlsym(nil, "__tsan_init") == nil ? 1 : 5

/// The longest a step may take that takes milliseconds on an idle machine: a cancellation or a close crossing
/// loopback, a timer firing, avahi-daemon answering.
///
/// The suite runs in parallel on two CPUs, and a test's tasks wait behind every other test's on the cooperative
/// pool (as many threads as CPUs): such steps were seen to take up to 2.2 s there, more with a build beside the
/// suite. A test that must tell such a step from one of the library's timers (liveness, handshake, resolve: 5 s by
/// default) sets that timer well above this, so that the bound can be generous and still tell them apart. Times
/// ``slowdown``.
let promptly: Duration = .seconds(15) * slowdown

/// How long a test waits for something that comes on its own (a message over loopback, a state change, avahi-daemon
/// finding a service) before it counts as not coming. The wait ends as soon as it comes, so only a test that fails
/// waits for all of it: generous, for the suite in parallel on two CPUs with a build beside it, which held such steps
/// for over 10 s. Times ``slowdown``.
let waitLimit: Duration = .seconds(30) * slowdown

/// The invitation timeout of tests that are not about it: an invitation over loopback takes milliseconds on an
/// idle machine, and was seen to take more than 10 s with the suite in parallel on two CPUs and a build beside it
/// (a TLS handshake, then an application's certificate decision). Times ``slowdown``.
let invitationTimeout: Duration = .seconds(30) * slowdown
