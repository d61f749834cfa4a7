/* serve_textfile.c - `ocgc serve --textfile PATH`: the exposition written
 * to a file for node_exporter's textfile collector (serve.h).
 *
 * Invariants: PATH is replaced atomically: the text goes to a new file in
 * PATH's own folder (so rename(2) cannot cross file systems), named with a
 * leading '.' and no ".prom" (the collector reads only *.prom files, so it
 * never reads a half-written one), flushed to disk, then renamed over
 * PATH (common/afile.h, the rule of every file ocgc replaces: its mode is
 * 0666 less the umask, so node_exporter, another user, reads it under the
 * unit's UMask=0022); a reader sees the old file or the new one, whole.  A
 * write that fails (a full disk, a folder that is not there or not
 * writable) leaves the old file as it was and no temporary file behind,
 * and is said once on stderr until a write succeeds again. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "common.h"
#include "serve.h"

/* Write [b] to [fd] whole: 0, or -errno. */
static int write_all(int fd, const char *s, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    if (w == 0) return -EIO;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The text of [b] to [fd], inflated a piece at a time: 0, or -errno. */
static int write_body(int fd, struct serve_body *b)
{
  struct serve_body_reader *r = serve_body_reader_new(b);
  char buf[65536];
  long n;
  int err = 0;
  if (r == NULL) return -ENOMEM;
  while (err == 0 && (n = serve_body_read(r, buf, sizeof buf)) != 0)
    err = n < 0 ? -EIO : write_all(fd, buf, (size_t)n);
  serve_body_reader_free(r);
  return err;
}

/* Replace [path] by [b] (common/afile.h): 0, or -errno (and [what]
 * names the step). */
static int replace(const char *path, struct serve_body *b, const char **what)
{
  struct cm_afile f;
  int err;
  *what = "create a file in the folder of";
  if ((err = cm_afile_open(&f, path)) != 0) return err;
  *what = "write";
  if ((err = write_body(f.fd, b)) == 0) return cm_afile_commit(&f, what);
  cm_afile_abort(&f);
  return err;
}

int serve_textfile_write(struct serve_textfile *t, struct serve_body *b)
{
  const char *what = "write";
  int err = b->failed ? -ENOMEM : replace(t->path, b, &what);
  if (err == 0) {
    if (t->failing) tool_say("--textfile %s: written again", t->path);
    t->failing = 0;
    return 0;
  }
  if (err != t->failing)
    tool_say("cannot %s %s: %s (the file keeps what it had; trying again every interval)",
             what, t->path, strerror(-err));
  t->failing = err;
  return err;
}

void serve_textfile_remove(struct serve_textfile *t)
{
  if (unlink(t->path) != 0 && errno != ENOENT)
    tool_say("cannot remove %s: %s", t->path, strerror(errno));
}
