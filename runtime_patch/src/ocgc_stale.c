/* ocgc_stale.c - at process start, remove from the user's ring folder what
 * dead processes left behind: a process killed by a signal, by _exit or
 * abort, or replaced by exec never runs the exit handler.
 *
 * What is removed, and only that:
 * - <P>.events, a symbolic link to /proc/<P>/fd/<n> (a memfd ring), when no
 *   process P exists: the memory went with it, the link leads nowhere;
 * - <P>.events, a regular ocgc ring in state RUNNING whose process is gone:
 *   another boot, no process P, or a process P with another start time;
 * - .<P>.events.tmp, a ring being made, when no process P exists;
 * - .ocgc-sweep.<P>, this sweep's own aside name, when no process P exists.
 * Never a live process's ring, never a ring in state EXITED (kept on
 * purpose with OCAML_RUNTIME_EVENTS_PRESERVE), never anything else (stock
 * OCaml 5 files carry no identity), never our own pid's names.
 * An entry is moved to a private name, judged stale again there, and only
 * then unlinked: a process that reuses the pid and publishes its ring
 * meanwhile keeps it (an inode number proves nothing: a removed link's
 * number may be reused by the next entry made).  The folder belongs to the
 * user (ocgc_file.c checks), so no other user can plant entries here.
 * At most SWEEP_MAX entries are looked at per start, so a huge folder costs
 * a bounded time. */

#define CAML_INTERNALS
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ocgc_file.h"

#define SWEEP_MAX 4096

/* Entry names: "<P>.events" (tmp = 0) or ".<P>.events.tmp" (tmp = 1).
 * Returns P, or 0 for any other name. */
static pid_t ring_name(const char *name, int *tmp)
{
  const char *p = name, *suffix;
  char *end;
  long v;
  *tmp = *p == '.';
  if (*tmp) p++;
  if (*p < '1' || *p > '9') return 0;
  v = strtol(p, &end, 10);
  if (v <= 0 || v > 0x3fffffff) return 0;
  suffix = *tmp ? OCGC_EVENTS_SUFFIX ".tmp" : OCGC_EVENTS_SUFFIX;
  return strcmp(end, suffix) == 0 ? (pid_t)v : 0;
}

static int process_gone(pid_t p)
{
  return kill(p, 0) != 0 && errno == ESRCH;
}

/* A regular ring of ours, in state RUNNING, whose process no longer runs. */
static int dead_running_ring(int dfd, const char *name, pid_t p)
{
  struct ocgc_wire_ext x;
  char boot[64];
  ssize_t got;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  got = pread(fd, &x, sizeof x, OCGC_WIRE_HEADER_SIZE);
  close(fd);
  if (got != (ssize_t)sizeof x || x.magic != OCGC_EXT_MAGIC) return 0;
  if (x.state != OCGC_STATE_RUNNING || x.pid != (uint64_t)p) return 0;
  x.boot_id[sizeof x.boot_id - 1] = '\0';
  caml_ocgc_boot_id(boot, sizeof boot);
  if (boot[0] != '\0' && strcmp(boot, x.boot_id) != 0) return 1;
  return process_gone(p) || caml_ocgc_start_time(p) != x.start_time;
}

/* Whether the entry [name] (of process [p]; [tmp]: a temporary name) is
 * what a dead process left: see the top of the file. */
static int is_stale(int dfd, const char *name, pid_t p, int tmp, const struct stat *st)
{
  if (tmp) return (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)) && process_gone(p);
  if (S_ISLNK(st->st_mode)) return caml_ocgc_is_ring_link(dfd, name, p) && process_gone(p);
  if (S_ISREG(st->st_mode)) return dead_running_ring(dfd, name, p);
  return 0;
}

/* Move [name] aside, judge it again there (the name may have been taken
 * over meanwhile by a new process with pid [p], even by an entry with the
 * same inode number as the one judged), and unlink it; if it is not stale
 * now, put it back. */
static void remove_if_stale(int dfd, const char *name, pid_t p, int tmp, pid_t self)
{
  char aside[64];
  struct stat st;
  snprintf(aside, sizeof aside, ".ocgc-sweep.%d", (int)self);
  (void)unlinkat(dfd, aside, 0);
  if (renameat(dfd, name, dfd, aside) != 0) return;
  if (fstatat(dfd, aside, &st, AT_SYMLINK_NOFOLLOW) == 0 && is_stale(dfd, aside, p, tmp, &st)) {
    (void)unlinkat(dfd, aside, 0);
    return;
  }
#if defined(SYS_renameat2) && defined(RENAME_NOREPLACE)
  if (syscall(SYS_renameat2, dfd, aside, dfd, name, RENAME_NOREPLACE) == 0) return;
#endif
  /* Newer still: one of the two had to yield; leave the aside one. */
}

void caml_ocgc_sweep_stale(int dfd, pid_t self)
{
  int fd = dup(dfd), seen = 0;
  DIR *d;
  struct dirent *e;

  if (fd < 0) return;
  d = fdopendir(fd);
  if (d == NULL) { close(fd); return; }
  while (seen++ < SWEEP_MAX && (e = readdir(d)) != NULL) {
    struct stat st;
    int tmp;
    pid_t p = ring_name(e->d_name, &tmp);
    if (p == 0 && strncmp(e->d_name, ".ocgc-sweep.", 12) == 0) {
      long q = strtol(e->d_name + 12, NULL, 10);
      if (q > 0 && q != self && process_gone((pid_t)q)) (void)unlinkat(dfd, e->d_name, 0);
      continue;
    }
    if (p == 0 || p == self) continue;
    if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (is_stale(dfd, e->d_name, p, tmp, &st)) remove_if_stale(dfd, e->d_name, p, tmp, self);
  }
  closedir(d);
}
