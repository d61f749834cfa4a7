/* ocgc_stale.c - at process start, remove from the user's ring folder what
 * dead processes left behind: a process killed by a signal, by _exit or
 * abort, or replaced by exec never runs the exit handler.  The rule of
 * what is gone is written once, in docs/design.md, "Which ring entries are
 * gone" (libocgc's ring scan, libconsumer/rings.c, follows it too); this
 * file is its point 6 for the sweep.
 *
 * A folder may be shared by pid namespaces (a container's bind mount), and
 * a pid means a process only in its own: an entry is judged by its pid
 * only if it says it is of our namespace (ocgc_entries.h), and never
 * removed unless it is proved dead from here.  What is removed, and only
 * that:
 * - .ocgc-ring.<ns>.<P>, a memfd ring's identity link, of our namespace,
 *   whose target no longer names P's ring memfd: its mapping went with an
 *   exit, exec or kill, or the pid now belongs to another program;
 * - <P>.events, an alias link to an identity link that is gone (it leads
 *   nowhere, for anyone, whoever made it);
 * - <P>.events, a regular ocgc ring in state RUNNING whose process is gone:
 *   another boot, no process P, or a process P with another start time;
 * - .ocgc-tmp.<ns>.<P> (an entry being made) and .ocgc-sweep.<ns>.<P> (this
 *   sweep's aside name), of our namespace, when no process P exists.
 * Never a live process's ring, never another namespace's entry, never a
 * ring in state EXITED (kept on purpose with OCAML_RUNTIME_EVENTS_PRESERVE),
 * never a link of an earlier producer (/proc/P/fd/N: whose P, it does not
 * say), never anything else (stock OCaml 5 files carry no identity), never
 * our own pid's names.
 * An entry is moved to a private name, judged stale again there, and only
 * then unlinked: a process that reuses the pid and publishes its ring
 * meanwhile keeps it (an inode number proves nothing: a removed link's
 * number may be reused by the next entry made).  The folder belongs to the
 * user (ocgc_file.c checks), so no other user can plant entries here.
 * At most SWEEP_MAX entries are looked at per start, so a huge folder costs
 * a bounded time.
 * Known gap: a regular-file ring (a producer without memfd) says its pid
 * but not its namespace, so one of another namespace whose pid is not
 * ours reads as dead. */

#define CAML_INTERNALS
#define _GNU_SOURCE /* renameat2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ocgc/wire.h"
#include "ocgc_entries.h"
#include "ocgc_proc.h"
#include "ocgc_stale.h"

#define SWEEP_MAX 4096

/* What an entry is, by its name. */
enum entry_kind { E_OTHER, E_EVENTS, E_RING, E_TMP, E_SWEEP };

/* The kind of [name] and its pid; E_OTHER for names of another namespace. */
static enum entry_kind entry_kind(const char *name, unsigned long self_ns, pid_t *p)
{
  static const struct { const char *kind; enum entry_kind k; } hidden[] = {
    {OCGC_DIR_KIND_RING, E_RING}, {OCGC_DIR_KIND_TMP, E_TMP}, {OCGC_DIR_KIND_SWEEP, E_SWEEP}};
  unsigned long ns;
  char *end;
  long v;
  unsigned i;
  if (name[0] == '.') {
    for (i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
      if (caml_ocgc_entry_parse(name, hidden[i].kind, &ns, p))
        return self_ns != 0 && ns == self_ns ? hidden[i].k : E_OTHER;
    return E_OTHER;
  }
  if (*name < '1' || *name > '9') return E_OTHER;
  v = strtol(name, &end, 10);
  if (v <= 0 || v > 0x3fffffff || strcmp(end, OCGC_DIR_EVENTS_SUFFIX) != 0) return E_OTHER;
  *p = (pid_t)v;
  return E_EVENTS;
}

static int process_gone(pid_t p)
{
  return kill(p, 0) != 0 && errno == ESRCH;
}

/* An alias <P>.events whose identity link is gone. */
static int dangling_alias(int dfd, const char *name)
{
  char text[CAML_OCGC_ENTRY_MAX];
  struct stat st;
  unsigned long ns;
  pid_t q;
  ssize_t n = readlinkat(dfd, name, text, sizeof text - 1);
  if (n <= 0) return 0;
  text[n] = '\0';
  return caml_ocgc_entry_parse(text, OCGC_DIR_KIND_RING, &ns, &q) &&
         fstatat(dfd, text, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
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

/* Whether the entry [name] (of kind [k], process [p]) is what a dead
 * process left: see the top of the file. */
static int is_stale(int dfd, const char *name, enum entry_kind k, pid_t p, const struct stat *st)
{
  switch (k) {
  case E_RING:
    return S_ISLNK(st->st_mode) && caml_ocgc_ring_link_state(dfd, name, p) == CAML_OCGC_LINK_DEAD;
  case E_EVENTS:
    if (S_ISLNK(st->st_mode)) return dangling_alias(dfd, name);
    return S_ISREG(st->st_mode) && dead_running_ring(dfd, name, p);
  case E_TMP:
  case E_SWEEP:
    return (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)) && process_gone(p);
  default:
    return 0;
  }
}

/* Move [name] aside, judge it again there (the name may have been taken
 * over meanwhile by a new process with pid [p], even by an entry with the
 * same inode number as the one judged), and unlink it; if it is not stale
 * now, put it back.  The aside name is judged as [name] was: an alias's
 * text is relative to the folder, not to its own name. */
static int remove_if_stale(int dfd, const char *name, enum entry_kind k, pid_t p,
                           const char *aside)
{
  struct stat st;
  (void)unlinkat(dfd, aside, 0);
  if (renameat(dfd, name, dfd, aside) != 0) return 0;
  if (fstatat(dfd, aside, &st, AT_SYMLINK_NOFOLLOW) == 0 && is_stale(dfd, aside, k, p, &st)) {
    (void)unlinkat(dfd, aside, 0);
    return 1;
  }
#if defined(SYS_renameat2) && defined(RENAME_NOREPLACE)
  if (syscall(SYS_renameat2, dfd, aside, dfd, name, RENAME_NOREPLACE) == 0) return 0;
#endif
  /* Newer still: one of the two had to yield; leave the aside one. */
  return 0;
}

/* One entry of the folder: judge it, and remove it if stale. */
static void sweep_entry(int dfd, const char *name, pid_t self, unsigned long ns,
                        const char *aside)
{
  struct stat st;
  pid_t p = 0;
  enum entry_kind k = entry_kind(name, ns, &p);
  if (k == E_OTHER || p == self) return;
  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (!is_stale(dfd, name, k, p, &st)) return;
  if (k == E_SWEEP) {
    (void)unlinkat(dfd, name, 0); /* a dead sweep's: no one's ring */
  } else if (remove_if_stale(dfd, name, k, p, aside) && k == E_RING) {
    /* Its alias now leads nowhere: gone too, whatever the order the
     * folder lists them in. */
    char alias[32];
    snprintf(alias, sizeof alias, "%d" OCGC_DIR_EVENTS_SUFFIX, (int)p);
    if (fstatat(dfd, alias, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        is_stale(dfd, alias, E_EVENTS, p, &st))
      remove_if_stale(dfd, alias, E_EVENTS, p, aside);
  }
}

/* The kernel's directory record (getdents64(2)). */
struct dirent64_rec {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

/* The folder is read through [dfd] itself, with getdents64, not through a
 * DIR of a dup of it: five system calls fewer at every start.  The
 * descriptor's offset is left at the end, which the *at calls that follow
 * do not use. */
void caml_ocgc_sweep_stale(int dfd, pid_t self, unsigned long ns)
{
  char aside[CAML_OCGC_ENTRY_MAX];
  /* long, for the records' 8-byte alignment */
  long buf[4096 / sizeof(long)];
  int seen = 0;
  long n;

  caml_ocgc_entry_name(aside, sizeof aside, OCGC_DIR_KIND_SWEEP, ns, self);
  while (seen < SWEEP_MAX && (n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
    long at = 0;
    while (at < n && seen++ < SWEEP_MAX) {
      const struct dirent64_rec *e = (const struct dirent64_rec *)((char *)buf + at);
      /* The kernel's records are well formed; a length that would not
       * move on ends the read rather than loop. */
      if (e->reclen == 0 || e->reclen > n - at) return;
      sweep_entry(dfd, e->name, self, ns, aside);
      at += e->reclen;
    }
  }
}
