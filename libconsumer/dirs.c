/* dirs.c - the default ring folders (ocgc_default_dir()).
 *
 * The rule is the producer's, runtime_patch/src/ocgc_start.c default_dir():
 * the first of $XDG_RUNTIME_DIR/ocgc (XDG_RUNTIME_DIR an absolute path to a
 * folder owned by the effective uid), /dev/shm/ocgc-EUID (/dev/shm a
 * folder), /tmp/ocgc-EUID.  Change both together.  A reader lists every
 * candidate whose condition holds, in that order: the first is where a
 * program started now with the caller's environment writes, the others
 * where one started without XDG_RUNTIME_DIR (a service, su) falls back to.
 * The environment is read with secure_getenv(), as the producer reads it
 * (caml_secure_getenv), so a setuid caller is not steered by its invoker.
 * Other users' folders of the same rule in the shared bases (/dev/shm,
 * /tmp: ocgc-UID) that the caller may not read are counted
 * (dirs_closed_others(), for `ocgc ls` to say what it cannot show); their
 * bases are anyone's to fill, so that count reads a bounded number of
 * entries.  It keeps no state: each call looks at the environment and the
 * file system afresh. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirs.h"
#include "ocgc/consumer.h"

#define MAX_DEFAULT_DIRS 3
#define MAX_BASE_ENTRIES 65536 /* of a shared base (/tmp), read to count others' folders */

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

/* Whether [name] is ocgc-UID for a UID other than [me]. */
static int others_name(const char *name, uid_t me)
{
  unsigned long uid;
  char *end;
  if (strncmp(name, "ocgc-", 5) != 0 || name[5] < '0' || name[5] > '9') return 0;
  errno = 0;
  uid = strtoul(name + 5, &end, 10);
  return *end == '\0' && errno == 0 && uid != (unsigned long)me;
}

/* Folders ocgc-UID of other users in [base] that we may not open. */
static uint64_t closed_in(const char *base, uid_t me)
{
  DIR *d = opendir(base);
  struct dirent *de;
  unsigned long seen = 0;
  uint64_t n = 0;
  if (d == NULL) return 0;
  while (seen++ < MAX_BASE_ENTRIES && (de = readdir(d)) != NULL) {
    struct stat st;
    int fd;
    if (!others_name(de->d_name, me)) continue;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid == me)
      continue;
    fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) close(fd);
    else if (errno == EACCES || errno == EPERM) n++;
  }
  closedir(d);
  return n;
}

uint64_t dirs_closed_others(void)
{
  struct candidate c[MAX_DEFAULT_DIRS];
  unsigned k, n = candidates(c);
  uint64_t closed = 0;
  for (k = 0; k < n; k++)
    if (c[k].per_user) closed += closed_in(c[k].base, geteuid());
  return closed;
}
