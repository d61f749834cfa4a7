/* afile.c - a file replaced whole (afile.h says the rule).
 *
 * Invariants: between open and commit or abort, the temporary file is
 * ours alone (mkostemp: a new name, O_EXCL); after either, it is gone
 * (renamed or unlinked) and every descriptor of it closed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"

int cm_afile_open(struct cm_afile *f, const char *path)
{
  const char *slash = strrchr(path, '/');
  int dirlen = slash ? (int)(slash - path + 1) : 0;
  size_t n = strlen(path) + 16;
  mode_t mask;
  memset(f, 0, sizeof *f);
  f->fd = -1;
  if ((f->path = strdup(path)) == NULL || (f->tmp = malloc(n)) == NULL) {
    cm_afile_abort(f);
    return -ENOMEM;
  }
  snprintf(f->tmp, n, "%.*s.%s.XXXXXX", dirlen, path, path + dirlen);
  if ((f->fd = mkostemp(f->tmp, O_CLOEXEC)) < 0) {
    int e = errno;
    free(f->tmp);
    f->tmp = NULL; /* nothing made: nothing to remove */
    cm_afile_abort(f);
    return -e;
  }
  /* mkostemp makes it 0600: an ordinary output honours the umask. */
  mask = umask(0);
  umask(mask);
  if (fchmod(f->fd, 0666 & ~mask) != 0) {
    int e = errno;
    cm_afile_abort(f);
    return -e;
  }
  return 0;
}

int cm_afile_commit(struct cm_afile *f, const char **what)
{
  int err = 0;
  if (what != NULL) *what = "write";
  if (f->fd < 0) return -EBADF;
  if (fsync(f->fd) != 0) err = -errno;
  if (close(f->fd) != 0 && err == 0) err = -errno;
  f->fd = -1;
  if (err == 0 && what != NULL) *what = "rename a new file onto";
  if (err == 0 && rename(f->tmp, f->path) != 0) err = -errno;
  if (err == 0) {
    free(f->tmp); /* renamed: nothing left to remove */
    f->tmp = NULL;
  }
  cm_afile_abort(f);
  return err;
}

void cm_afile_abort(struct cm_afile *f)
{
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  if (f->tmp != NULL) unlink(f->tmp);
  free(f->tmp);
  free(f->path);
  f->tmp = f->path = NULL;
}
