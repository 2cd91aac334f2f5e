#ifndef PEERCONNECTIVITY_CPLATFORMSHIMS_H
#define PEERCONNECTIVITY_CPLATFORMSHIMS_H
// System calls that Swift's Glibc module does not expose, wrapped for PeerConnectivityTransport's
// Platform (docs/ARCHITECTURE.md: the C library is reached from one place).

/// Renames `from` (relative to the directory `fromDirectory`, or the working directory with
/// AT_FDCWD) to `to` in the directory `toDirectory`, atomically, and never replaces what `to` names:
/// `renameat2(RENAME_NOREPLACE)` on Linux, `renameatx_np(RENAME_EXCL)` on Darwin.
///
/// Returns 0, or -1 with errno set: EEXIST when `to` is taken; EINVAL or ENOSYS when the file system
/// or the system cannot rename without replacing (the caller then links and unlinks instead).
int pc_rename_noreplace(int fromDirectory, const char *from, int toDirectory, const char *to);

/// Opens `path`, relative to the directory `directory`, resolving it in one step with no symbolic
/// link followed anywhere on it and nothing outside `directory` reached (`openat2` with
/// RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS, Linux 5.6 and later). `flags` are open(2)'s.
///
/// Returns the descriptor, or -1 with errno set: ELOOP for a symbolic link on the path, EXDEV for a
/// path that would leave `directory`, ENOENT or ENOTDIR as openat(2) sets them; ENOSYS (or EPERM
/// under a filter that refuses the call) where the system lacks it, and the caller then walks the
/// path one component at a time.
int pc_open_beneath(int directory, const char *path, int flags);

#endif
