#define _GNU_SOURCE
#include "CPlatformShims.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

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
