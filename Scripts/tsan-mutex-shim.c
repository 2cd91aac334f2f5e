// Makes ThreadSanitizer see the Synchronization module's Mutex on Linux; preloaded by Scripts/tsan.sh.
//
// Mutex locks and unlocks with an atomic compare-exchange when it is free, which ThreadSanitizer sees (the code is
// inlined into ours, and instrumented). When it is contended, the waiter sleeps in the kernel (FUTEX_LOCK_PI) and
// is given the lock by the owner's FUTEX_UNLOCK_PI, in _lockSlow and _unlockSlow of libswiftSynchronization.so,
// which is not instrumented: no happens-before edge, and every access under a lock that was ever contended is
// reported as a race. These wrappers add the edges (acquire after _lockSlow, release before _unlockSlow) on the
// address of the lock word, the one its atomics use, and call the real functions.
//
// Each is a Swift method of _MutexHandle (its self, borrowed, in the swiftself register: clang's swift_context).
// The ThreadSanitizer entry points are weak: a process without it (a shell, avahi-browse) loads this and runs as before.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>

#define SWIFTCC __attribute__((swiftcall))
#define SELF __attribute__((swift_context))

extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFTCC void (*LockSlow)(uint32_t, void *SELF);
typedef SWIFTCC bool (*TryLockSlow)(void *SELF);
typedef SWIFTCC void (*UnlockSlow)(void *SELF);

SWIFTCC void lock_slow(uint32_t thread, void *SELF handle) __asm__(LOCK_SLOW);
SWIFTCC bool try_lock_slow(void *SELF handle) __asm__(TRY_LOCK_SLOW);
SWIFTCC void unlock_slow(void *SELF handle) __asm__(UNLOCK_SLOW);

SWIFTCC void lock_slow(uint32_t thread, void *SELF handle) {
    static LockSlow real;
    if (!real) real = (LockSlow)dlsym(RTLD_NEXT, LOCK_SLOW);
    real(thread, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

SWIFTCC bool try_lock_slow(void *SELF handle) {
    static TryLockSlow real;
    if (!real) real = (TryLockSlow)dlsym(RTLD_NEXT, TRY_LOCK_SLOW);
    bool locked = real(handle);
    if (locked && __tsan_acquire) __tsan_acquire(handle);
    return locked;
}

SWIFTCC void unlock_slow(void *SELF handle) {
    static UnlockSlow real;
    if (!real) real = (UnlockSlow)dlsym(RTLD_NEXT, UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(handle);
    real(handle);
}
