/* dirs.c - the default ring folders (ocgc_default_dir()).
 *
 * The rule is the producer's, runtime_patch/src/ocgc_file.c default_dir():
 * the first of $XDG_RUNTIME_DIR/ocgc (XDG_RUNTIME_DIR an absolute path to a
 * folder owned by the effective uid), /dev/shm/ocgc-EUID (/dev/shm a
 * folder), /tmp/ocgc-EUID.  Change both together.  A reader lists every
 * candidate whose condition holds, in that order: the first is where a
 * program started now with the caller's environment writes, the others
 * where one started without XDG_RUNTIME_DIR (a service, su) falls back to.
 * The environment is read with secure_getenv(), as the producer reads it
 * (caml_secure_getenv), so a setuid caller is not steered by its invoker.
 * It keeps no state: each call looks at the environment and the file
 * system afresh. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocgc/consumer.h"

#define MAX_DEFAULT_DIRS 3

/* A candidate: BASE/ocgc, or BASE/ocgc-EUID in a folder shared by users. */
struct candidate {
  const char *base;
  int per_user;
};

/* The candidates whose condition holds, in order; returns how many. */
static unsigned candidates(struct candidate c[MAX_DEFAULT_DIRS])
{
  const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
  struct stat st;
  unsigned k = 0;
  if (xdg != NULL && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == geteuid())
    c[k++] = (struct candidate){xdg, 0};
  if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)) c[k++] = (struct candidate){"/dev/shm", 1};
  c[k++] = (struct candidate){"/tmp", 1};
  return k;
}

int ocgc_default_dir(unsigned i, char *buf, size_t n)
{
  struct candidate c[MAX_DEFAULT_DIRS];
  int len;
  if (buf == NULL || n == 0) return -EINVAL;
  if (i >= candidates(c)) return -ENOENT;
  if (c[i].per_user) len = snprintf(buf, n, "%s/ocgc-%u", c[i].base, (unsigned)geteuid());
  else len = snprintf(buf, n, "%s/ocgc", c[i].base);
  if (len < 0) return -EIO;
  return (size_t)len >= n ? -ENAMETOOLONG : 0;
}
