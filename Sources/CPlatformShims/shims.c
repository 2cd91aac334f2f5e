#define _GNU_SOURCE
#include "CPlatformShims.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif

int pc_rename_noreplace(int fromDirectory, const char *from, int toDirectory, const char *to) {
#if defined(__linux__) && defined(RENAME_NOREPLACE)
    return renameat2(fromDirectory, from, toDirectory, to, RENAME_NOREPLACE);
#elif defined(__APPLE__)
    return renameatx_np(fromDirectory, from, toDirectory, to, RENAME_EXCL);
#else
    (void)fromDirectory; (void)from; (void)toDirectory; (void)to;
    errno = ENOSYS;
    return -1;
#endif
}

int pc_open_beneath(int directory, const char *path, int flags) {
#if defined(__linux__) && defined(SYS_openat2) && defined(RESOLVE_BENEATH)
    struct open_how how = {
        .flags = (unsigned long long)flags,
        .mode = 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, directory, path, &how, sizeof(how));
#else
    (void)directory; (void)path; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}
