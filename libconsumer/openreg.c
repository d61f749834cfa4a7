/* openreg.c - open a file a target names, and nothing else (openreg.h).
 *
 * Invariant: nothing is opened for reading before fstat(2) has found it a
 * regular file (and the expected inode): the first open is O_PATH, which
 * runs no open of the file system or driver, and the reopen goes through
 * /proc/self/fd/N, a magic link to the inode checked, so no path is
 * resolved twice (nothing can be swapped in between). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_PATH */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "openreg.h"

/* openat2(2)'s ABI (Linux 5.6), declared here for older headers. */
struct openreg_how {
  unsigned long long flags, mode, resolve;
};
#define OPENREG_RESOLVE_NO_MAGICLINKS 0x02
#define OPENREG_RESOLVE_NO_SYMLINKS 0x04
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* An O_PATH descriptor of [path], resolved as [how] says. */
static int open_path(int dirfd, const char *path, enum ocgc_openreg_how how)
{
  int fd;
  if (how == OCGC_OPENREG_NO_LINKS) {
    struct openreg_how oh = {O_PATH | O_CLOEXEC | O_NOFOLLOW, 0,
                             OPENREG_RESOLVE_NO_SYMLINKS | OPENREG_RESOLVE_NO_MAGICLINKS};
    fd = (int)syscall(SYS_openat2, dirfd, path, &oh, sizeof oh);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd;
    /* No openat2 (before 5.6), or a seccomp filter that denies it: the
     * last component at least is no link. */
    return openat(dirfd, path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  }
  return openat(dirfd, path, O_PATH | O_CLOEXEC);
}

static int is_it(const struct stat *st, dev_t dev, ino_t ino)
{
  return S_ISREG(st->st_mode) && (dev == 0 || st->st_dev == dev) && (ino == 0 || st->st_ino == ino);
}

int ocgc_open_regular(int dirfd, const char *path, enum ocgc_openreg_how how, dev_t dev, ino_t ino)
{
  char self[64];
  struct stat st;
  int pfd, fd, err;
  if ((pfd = open_path(dirfd, path, how)) < 0) return -errno;
  if (fstat(pfd, &st) != 0) {
    err = -errno;
    close(pfd);
    return err;
  }
  if (S_ISLNK(st.st_mode)) { /* O_NOFOLLOW on a link gives the link itself */
    close(pfd);
    return -ELOOP;
  }
  if (!is_it(&st, dev, ino)) {
    close(pfd);
    return OCGC_E_NORING;
  }
  snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
  fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  err = fd < 0 ? -errno : 0;
  close(pfd);
  if (fd < 0) return err;
  /* The same inode, unless /proc itself lies: checked all the same. */
  if (fstat(fd, &st) != 0 || !is_it(&st, dev, ino)) {
    close(fd);
    return OCGC_E_NORING;
  }
  return fd;
}
