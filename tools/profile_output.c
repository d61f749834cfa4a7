/* profile_output.c - a profile's output file, shared by `ocgc profile`
 * (profile.c) and the CPU window's forms (cpu_window.c): the bytes, or
 * what a writer writes, to -o FILE or to stdout (profile.h).
 *
 * Invariants:
 * - a file is written whole or not at all: a temporary file beside it
 *   (common/afile.h), renamed over it once every byte is out, removed on
 *   any failure;
 * - only common.c and common/afile.c are used: the profiles' writers
 *   (profile.c, cpu_window.c) are above this one, passed in as a
 *   callback;
 * - a failure is one line on stderr and an exit code (TOOL_EXIT_DENIED
 *   when the file may not be written, TOOL_EXIT_ERROR else). */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"
#include "common.h"
#include "profile.h"

int profile_output(const char *path, const unsigned char *bytes, size_t len,
                   void (*write)(FILE *f, void *arg), void *arg)
{
  struct cm_afile af;
  FILE *f = stdout;
  int err, rc = 0;
  if (path != NULL) {
    int fd = -1;
    if ((err = cm_afile_open(&af, path)) != 0 || (fd = dup(af.fd)) < 0 ||
        (f = fdopen(fd, "w")) == NULL) {
      int e = err ? -err : errno;
      tool_say("cannot write %s: %s", path, strerror(e));
      if (fd >= 0) close(fd);
      if (err == 0) cm_afile_abort(&af);
      return e == EACCES || e == EPERM || e == EROFS ? TOOL_EXIT_DENIED : TOOL_EXIT_ERROR;
    }
  }
  if (write != NULL) write(f, arg);
  else fwrite(bytes, 1, len, f);
  if (fflush(f) != 0 || ferror(f)) rc = TOOL_EXIT_ERROR;
  if (path != NULL) {
    const char *what = NULL;
    if (fclose(f) != 0) rc = TOOL_EXIT_ERROR;
    if (rc != 0) cm_afile_abort(&af);
    else if ((err = cm_afile_commit(&af, &what)) != 0) rc = TOOL_EXIT_ERROR;
    if (rc != 0) tool_say("cannot write %s", path);
  } else if (rc != 0) {
    tool_say("cannot write the profile to stdout");
  }
  return rc;
}
