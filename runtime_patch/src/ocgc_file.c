/* ocgc_file.c - the producer's ring file: how it is made, published and
 * withdrawn, in the folder and with the settings ocgc_start.c chose
 * (caml_ocgc_file_cfg).  When that happens is not its business: the start
 * (ocgc_start.c) and the fork and exit handlers (ocgc_lifecycle.c) call
 * in; what the writers see of the file is ocgc_writer.h's state, which it
 * fills.
 *
 * Invariants:
 * - The ring is a sealed memfd (no truncate(2), by anyone, can take its
 *   pages from under the writer), whose pages are committed as they are
 *   written, at most up to the names in use (~520 KiB for the default
 *   ring), and published as two links (names:
 *   ocgc_entries.h): the identity .ocgc-ring.<ns>.<pid> ->
 *   /proc/<pid>/map_files/<start>-<end>, which leads to this mapping or to
 *   nothing (after exec, exit or a kill), never to another file, and the
 *   alias <pid>.events -> .ocgc-ring.<ns>.<pid> that stock readers open,
 *   unless another pid namespace's live alias holds that name.  Without
 *   memfd, a regular file <pid>.events as OCaml 5 makes it, committed at
 *   once up to the names in use (posix_fallocate: a full tmpfs would turn
 *   a later write into SIGBUS), but for the allocation profile's rows past
 *   CAML_OCGC_FALLBACK_MP_ROWS, a hole the producer never writes
 *   (caml_ocgc_file.mp_rows).
 * - The memfd's descriptor number is the program's to take: it is closed
 *   (in a forked child) only once fstat(2) proves it is still the ring's
 *   inode (caml_ocgc_fd_is_ring), and forgotten when it is not.
 * - Every entry appears only complete: it is made under a private
 *   temporary name (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) in a folder
 *   opened with O_NOFOLLOW and owned by the effective user, then renamed
 *   into place.
 * - Any failure leaves the program running with the ring off and exactly one
 *   line on stderr (caml_ocgc_complain); nothing is ever written outside
 *   the folder.
 * - Withdrawn at exit, once the exit handler has written the ring's end:
 *   the alias (or file) is removed, or with OCAML_RUNTIME_EVENTS_PRESERVE
 *   replaced by a regular file holding the ring, and then the identity
 *   link: each only if it is still the entry we published (what a link
 *   says, a file's device and inode): whoever removed or replaced it
 *   meanwhile keeps what is there.
 * Called from the mutator thread with the runtime lock held (the start, a
 * forked child's first event), or from the fork handlers
 * (caml_ocgc_fd_is_ring) and the exit handler (caml_ocgc_file_withdraw),
 * where the C library runs them (ocgc_lifecycle.c). */

#define CAML_INTERNALS
#define _GNU_SOURCE /* memfd, F_ADD_SEALS, fallocate */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "caml/config.h"
#include "caml/version.h"
#include "ocgc_clock.h"
#include "ocgc_entries.h"
#include "ocgc_file.h"
#include "ocgc_memprof.h"
#include "ocgc_names.h"
#include "ocgc_place.h"
#include "ocgc_proc.h"
#include "ocgc_ring.h"
#include "ocgc_writer.h"

struct caml_ocgc_file_cfg caml_ocgc_file_cfg;

/* The one line a failure prints, in one write(2).  A forked child makes its
 * file inside its first collection, with the runtime lock held: there it
 * writes only if stderr can take the line now, rather than block the
 * program on a full pipe. */
void caml_ocgc_complain(const char *what, const char *dir, int err, int must_not_block)
{
  const char *why = strerror(err);
  char line[PATH_MAX + 256];
  int len;
  if (err == EPERM || err == ELOOP || err == ENOTDIR)
    why = "it must be a folder of yours, not a symbolic link";
  else if (err == EEXIST)
    why = "something that is not a ring file stands where the ring goes";
  else if (err == 0)
    why = "invalid setting";
  len = snprintf(line, sizeof line, "ocgc: %s %s: %s; GC events are off for this process\n",
                 what, dir, why);
  if (len <= 0) return;
  if ((size_t)len >= sizeof line) len = (int)sizeof line - 1;
  if (must_not_block) {
    struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};
    if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLOUT)) return;
  }
  (void)!write(STDERR_FILENO, line, (size_t)len);
}

/* Open the folder without following a link and check that it is ours. */
int caml_ocgc_open_dir(const char *dir)
{
  struct stat st;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0) { int e = errno; close(fd); errno = e; return -1; }
  if (st.st_uid != geteuid()) { close(fd); errno = EPERM; return -1; }
  return fd;
}

/* The program's name: argv[0], or the script of ocamlrun_ocgc.  glibc
 * keeps argv[0] (program_invocation_name); /proc/self/cmdline, three
 * system calls, is read only for the script's name. */
static void own_program(char *out, size_t n)
{
  char buf[4096];
  const char *name = program_invocation_name, *base, *arg;
  size_t len;
  int fd;
  ssize_t got;
  if (name == NULL) name = "";
  base = strrchr(name, '/');
  base = base ? base + 1 : name;
  if (strncmp(base, "ocamlrun", 8) == 0) {
    fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    got = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (got <= 0) { out[0] = '\0'; return; }
    buf[got] = '\0';
    name = buf;
    arg = name + strlen(name) + 1;
    while (arg < buf + got && arg[0] == '-') arg += strlen(arg) + 1;
    if (arg < buf + got) {
      name = arg;
      base = strrchr(name, '/');
      base = base ? base + 1 : name;
    }
  }
  len = strlen(base);
  if (len >= n) len = n - 1;
  memcpy(out, base, len);
  out[len] = '\0';
}

static void copy_str(char *dst, size_t n, const char *src)
{
  size_t len = strlen(src);
  if (len >= n) len = n - 1;
  memcpy(dst, src, len);
  dst[len] = '\0';
}

/* Where the extension block's records go: the one ring's right after the
 * fixed part, the totals after it. */
#define EXT_RING_OFFSET ((uint64_t)OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext))
#define TOTALS_OFFSET (EXT_RING_OFFSET + sizeof(struct ocgc_wire_ext_ring))
#define MP_OFFSET (TOTALS_OFFSET + sizeof(struct ocgc_wire_totals))

/* Fill the new (zeroed) mapping: header (a copy of [geometry]), extension,
 * names. */
static void fill_file(char *map, const struct ocgc_wire_header *geometry, uint64_t ext_size)
{
  struct ocgc_wire_header *h = (struct ocgc_wire_header *)map;
  struct ocgc_wire_ext *x = (struct ocgc_wire_ext *)(map + OCGC_WIRE_HEADER_SIZE);
  struct timespec mono, real;
  char bootid[64];
  unsigned i;

  *h = *geometry;

  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  x->magic = OCGC_EXT_MAGIC;
  x->ext_version = OCGC_EXT_VERSION;
  x->ext_size = ext_size;
#ifdef NATIVE_CODE
  x->flags = OCGC_EXT_NATIVE;
#else
  x->flags = OCGC_EXT_BYTECODE;
#endif
  x->pid = (uint64_t)getpid();
  x->start_time = caml_ocgc_start_time(getpid());
  caml_ocgc_boot_id(bootid, sizeof bootid);
  copy_str(x->boot_id, sizeof x->boot_id, bootid);
  x->created_ns = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
  x->realtime_offset_ns =
      ((int64_t)real.tv_sec - (int64_t)mono.tv_sec) * 1000000000 +
      ((int64_t)real.tv_nsec - (int64_t)mono.tv_nsec);
  x->state = OCGC_STATE_RUNNING;
  copy_str(x->ocaml_version, sizeof x->ocaml_version, OCAML_VERSION_STRING);
  copy_str(x->ocgc_version, sizeof x->ocgc_version, OCGC_PRODUCER_VERSION);
  own_program(x->program, sizeof x->program);
  x->cause_slots = OCGC_CAUSE_SLOTS;
  x->kind_count = OCGC_KIND_COUNT;
  x->rings_offset = EXT_RING_OFFSET;
  x->totals_offset = TOTALS_OFFSET;
  x->ids = caml_ocgc_ids53 ? OCGC_EXT_IDS_53 : OCGC_EXT_IDS_52;
  x->flags |= (uint64_t)(OCGC_EXT_PHASES_NONE + caml_ocgc_file_cfg.phases_level)
              << OCGC_EXT_PHASES_SHIFT;
  /* the clock bits: as events are timed now, and from then on by the
   * clock (caml_ocgc_clock_flags, through use_file's pointer) */
  x->flags |= (uint64_t)(caml_ocgc_clock.tsc_ok && caml_ocgc_clock.tsc_checked
                             ? OCGC_EXT_CLOCK_TSC
                             : OCGC_EXT_CLOCK_MONOTONIC)
              << OCGC_EXT_CLOCK_SHIFT;

  for (i = 0; i < CAML_OCGC_UEV_COUNT; i++)
    copy_str(map + geometry->custom_events_offset + (uint64_t)i * OCGC_WIRE_USER_NAME_LEN,
             OCGC_WIRE_USER_NAME_LEN, caml_ocgc_user_event_names[i]);
}

/* ---- the ring's memory ---------------------------------------------------------- */

/* What the writer may touch: everything up to the name table, and the
 * names it registers; the rest of the name table stays a hole that nobody
 * writes.  A file in the folder commits it at once (make_tmpfile); a
 * memfd as it is written. */
static uint64_t commit_size(const struct ocgc_wire_header *h)
{
  uint64_t names = (uint64_t)CAML_OCGC_UEV_COUNT * OCGC_WIRE_USER_NAME_LEN;
  uint64_t end = h->custom_events_offset + names;
  return (end + 4095) & ~UINT64_C(4095);
}

/* The ring lives in a sealed memfd: memory that no truncate(2), by anyone,
 * root included, can take from under the writer (a truncated shared file
 * turns the next write into SIGBUS).  Nothing is committed up front: a
 * memfd's pages come as the program's heap pages do, when first written
 * (its kernel mount has no size limit, so a lack of memory there is the
 * OOM killer's, as for the heap, never SIGBUS), and a short program pays
 * for the few pages it writes, not for the whole ring (committing 520 KiB
 * and freeing it at exit was most of what the ring added to a process's
 * life: benchmarks/lifetime.sh).  Returns the fd, or -1 with errno. */
static int make_memfd(pid_t pid, uint64_t size)
{
  char name[48];
  int fd, err;
#ifdef SYS_memfd_create
  snprintf(name, sizeof name, OCGC_MEMFD_NAME_PREFIX "%d" OCGC_DIR_EVENTS_SUFFIX, (int)pid);
  fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
#else
  (void)name; (void)pid;
  errno = ENOSYS;
  fd = -1;
#endif
  if (fd < 0) return -1;
  /* 0600 like a ring file: /proc/<pid>/fd/<n> checks the mode too. */
  if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)size) != 0) goto fail;
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) goto fail;
  return fd;
fail:
  err = errno;
  close(fd);
  errno = err;
  return -1;
}

/* Where there is no memfd (an old kernel, a seccomp filter): a file in the
 * folder under the temporary name, as OCaml 5 does, committed at once up to
 * the names in use (posix_fallocate, so a full tmpfs fails here, not with
 * SIGBUS later), but for the profile's rows past the first
 * CAML_OCGC_FALLBACK_MP_ROWS, which are never written (a hole).
 * Returns the fd, or -1 with errno. */
static int make_tmpfile(int dfd, const char *tmp, uint64_t size, uint64_t commit,
                        uint64_t rows_end, uint64_t rings)
{
  int err, fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  err = posix_fallocate(fd, 0, (off_t)rows_end);
  if (err == 0) err = posix_fallocate(fd, (off_t)rings, (off_t)(commit - rings));
  if (err == 0 && ftruncate(fd, (off_t)size) != 0) err = errno;
  if (err != 0) {
    close(fd);
    (void)unlinkat(dfd, tmp, 0);
    errno = err;
    return -1;
  }
  return fd;
}

/* ---- publication ------------------------------------------------------------------- */

/* What stands at the alias <pid>.events, for a memfd ring whose identity
 * link is [ident]. */
enum alias_state {
  ALIAS_FREE,     /* nothing */
  ALIAS_STALE,    /* a regular file (a ring of an earlier process with our
                     pid), our own alias, or an alias whose identity link is
                     gone: it leads nowhere, for anyone */
  ALIAS_TAKEN,    /* another live alias (a namespace with a process of our
                     pid number), or a link we cannot judge (an earlier
                     producer's): left alone */
  ALIAS_PLANTED   /* anything else: refused */
};

static enum alias_state alias_state(int dfd, const char *final, const char *ident)
{
  char text[CAML_OCGC_ENTRY_MAX];
  struct stat st;
  unsigned long ns;
  pid_t p;
  ssize_t n;
  if (fstatat(dfd, final, &st, AT_SYMLINK_NOFOLLOW) != 0) return ALIAS_FREE;
  if (S_ISREG(st.st_mode)) return ALIAS_STALE;
  if (!S_ISLNK(st.st_mode)) return ALIAS_PLANTED;
  n = readlinkat(dfd, final, text, sizeof text - 1);
  if (n <= 0) return ALIAS_TAKEN;
  text[n] = '\0';
  if (strcmp(text, ident) == 0) return ALIAS_STALE;
  if (caml_ocgc_entry_parse(text, OCGC_DIR_KIND_RING, &ns, &p))
    return fstatat(dfd, text, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT ? ALIAS_STALE
                                                                                : ALIAS_TAKEN;
  return strncmp(text, "/proc/", 6) == 0 ? ALIAS_TAKEN : ALIAS_PLANTED;
}

/* Put [name] in place from the temporary [tmp]: never over an entry that
 * appeared since it was judged free. */
static int put_in_place(int dfd, const char *tmp, const char *name, int replace)
{
#if defined(SYS_renameat2) && defined(RENAME_NOREPLACE)
  if (!replace) {
    if (syscall(SYS_renameat2, dfd, tmp, dfd, name, RENAME_NOREPLACE) == 0) return 0;
    if (errno != ENOSYS && errno != EINVAL) return errno;
  }
#endif
  return renameat(dfd, tmp, dfd, name) == 0 ? 0 : errno;
}

/* Publish a memfd ring: its identity link [ident] -> [link] (the
 * mapping's entry in /proc/<pid>/map_files: it leads to this mapping, or
 * after exec, exit or a kill to nothing, never to another file, as a
 * descriptor's number would once the program or the image it execs opens
 * something else), then the alias [final] -> [ident], the name stock
 * readers open.  Readers with CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE
 * (root) follow both to the memory; others get EPERM, and libocgc reaches
 * the ring through the process instead.  The alias is left out, and the
 * ring still published, where another namespace's live alias stands.
 * Returns 0 or an errno; *aliased says whether the alias is ours. */
static int publish_link(int dfd, const char *tmp, const char *final, const char *ident,
                        const char *link, int *aliased)
{
  enum alias_state a;
  int err;
  *aliased = 0;
  /* Each link is made in place where its name is free, the common case:
   * two system calls in all, where the careful way below takes six. */
  if (symlinkat(link, dfd, ident) != 0) {
    if (errno != EEXIST) return errno;
    /* An identity of our namespace and pid is an earlier process's. */
    (void)unlinkat(dfd, tmp, 0);
    if (symlinkat(link, dfd, tmp) != 0) return errno;
    if ((err = put_in_place(dfd, tmp, ident, 1)) != 0) goto fail;
  }
  if (symlinkat(ident, dfd, final) == 0) {
    *aliased = 1;
    return 0;
  }
  if (errno != EEXIST) { err = errno; goto fail_ident; }
  a = alias_state(dfd, final, ident);
  if (a == ALIAS_PLANTED) { err = EEXIST; goto fail_ident; }
  if (a == ALIAS_TAKEN) return 0;
  (void)unlinkat(dfd, tmp, 0);
  if (symlinkat(ident, dfd, tmp) != 0) { err = errno; goto fail_ident; }
  err = put_in_place(dfd, tmp, final, a == ALIAS_STALE);
  if (err == EEXIST) return (void)unlinkat(dfd, tmp, 0), 0; /* taken meanwhile */
  if (err != 0) goto fail_ident;
  *aliased = 1;
  return 0;
fail_ident:
  (void)unlinkat(dfd, ident, 0);
fail:
  (void)unlinkat(dfd, tmp, 0);
  return err;
}

/* Without a memfd: rename the temporary file into place.  A stale ring of
 * an earlier process with our pid (a regular file) is replaced; anything
 * else planted there is refused.  Returns 0 or an errno. */
static int publish_file(int dfd, const char *tmp, const char *final)
{
  struct stat st;
  int err;
  if (fstatat(dfd, final, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
    (void)unlinkat(dfd, tmp, 0);
    return EEXIST;
  }
  if ((err = put_in_place(dfd, tmp, final, 1)) != 0) (void)unlinkat(dfd, tmp, 0);
  return err;
}

/* The ring is published: others may write into the mapping from now on, so
 * every pointer comes from our own copy of the layout, never from the file. */
static void use_file(char *map, const struct ocgc_wire_header *geometry, uint64_t file_size,
                     int memfd, pid_t pid)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  caml_ocgc_ring_attach(map, geometry, EXT_RING_OFFSET);
  f->map = map;
  f->map_size = file_size;
  f->commit_size = commit_size(geometry);
  f->is_memfd = memfd >= 0;
  f->mp_rows = memfd >= 0 ? OCGC_MP_ROWS : CAML_OCGC_FALLBACK_MP_ROWS;
  f->memfd = memfd;
  f->ext = (struct ocgc_wire_ext *)(map + OCGC_WIRE_HEADER_SIZE);
  f->totals = (struct ocgc_wire_totals *)(map + TOTALS_OFFSET);
  f->mp = (struct ocgc_wire_mp *)(map + MP_OFFSET);
  f->pid = pid;
  f->lazy = 0;
  caml_ocgc_clock.flags = &f->ext->flags;
  caml_ocgc_mp_attach(f->mp, caml_ocgc_now());
}

/* Create, fill and publish the ring in the folder [dfd], for a process of
 * the pid namespace [pidns].  Returns 0 or an errno. */
int caml_ocgc_file_create(int dfd, unsigned long pidns)
{
  uint64_t ring_words = UINT64_C(1) << caml_ocgc_file_cfg.ring_log2;
  uint64_t ext_size = ocgc_wire_ext_size(1);
  struct ocgc_wire_header geometry;
  uint64_t file_size = ocgc_wire_layout(&geometry, 1, ring_words, ext_size);
  struct caml_ocgc_file *f = &caml_ocgc_file;
  char tmp[CAML_OCGC_ENTRY_MAX], final[32];
  char *map;
  int fd, memfd, err, aliased = 0;
  pid_t pid = getpid();

  geometry.version = OCGC_WIRE_VERSION;
  f->pidns = pidns;
  caml_ocgc_entry_name(tmp, sizeof tmp, OCGC_DIR_KIND_TMP, f->pidns, pid);
  caml_ocgc_entry_name(f->ident, sizeof f->ident, OCGC_DIR_KIND_RING, f->pidns, pid);
  snprintf(final, sizeof final, "%d" OCGC_DIR_EVENTS_SUFFIX, (int)pid);
  fd = memfd = make_memfd(pid, file_size);
  if (fd < 0) {
    /* A leftover of an earlier process with our pid: remove it (unlinkat
     * never follows a link, it removes the link itself).  publish_link
     * does so for a memfd ring. */
    (void)unlinkat(dfd, tmp, 0);
    fd = make_tmpfile(dfd, tmp, file_size, commit_size(&geometry),
                      MP_OFFSET + sizeof(struct ocgc_wire_mp) +
                          (uint64_t)CAML_OCGC_FALLBACK_MP_ROWS * sizeof(struct ocgc_wire_mp_row),
                      geometry.headers_offset);
  }
  if (fd < 0) return errno;
  map = caml_ocgc_place_map(file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    err = errno;
    close(fd);
    if (memfd < 0) (void)unlinkat(dfd, tmp, 0);
    return err;
  }
  {
    struct stat st;
    /* The mapping holds this inode, so its number names no other file
     * while we live (a removed link's number, on the other hand, may be
     * reused at once): it is how the memfd's descriptor is told from a
     * file of the program's that took its number, and our file's name
     * from another's. */
    if (fstat(fd, &st) != 0) st.st_dev = 0, st.st_ino = 0;
    f->file_dev = st.st_dev;
    f->file_ino = st.st_ino;
  }
  if (memfd < 0) close(fd);
  fill_file(map, &geometry, ext_size); /* new memory reads as zeroes */
  if (memfd < 0)
    err = publish_file(dfd, tmp, final);
  else if (caml_ocgc_map_link(f->link, sizeof f->link, map, file_size) != 0)
    err = ENAMETOOLONG;
  else
    err = publish_link(dfd, tmp, final, f->ident, f->link, &aliased);
  if (err != 0) {
    munmap(map, file_size);
    if (memfd >= 0) close(memfd);
    return err;
  }
  use_file(map, &geometry, file_size, memfd, pid);
  f->aliased = aliased;
  return 0;
}

/* Whether the link [name] in [dfd] says [want]. */
static int link_says(int dfd, const char *name, const char *want)
{
  char text[CAML_OCGC_ENTRY_MAX];
  ssize_t n = readlinkat(dfd, name, text, sizeof text);
  return n > 0 && (size_t)n == strlen(want) && memcmp(text, want, (size_t)n) == 0;
}

/* Whether [name] in [dfd] is still the entry we published: whoever
 * removed or replaced it (a cleanup script, a user) keeps what is there.
 * Our links are told by what they say (a new file may get the inode number
 * of a removed link): the alias names our identity, the identity our
 * mapping; our file is told by its inode, which our mapping holds. */
static int own_entry(int dfd, const char *name)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  struct stat st;
  /* readlinkat fails on anything but a link: no fstatat needed first */
  if (f->is_memfd) return f->aliased && link_says(dfd, name, f->ident);
  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
  return S_ISREG(st.st_mode) && st.st_dev == f->file_dev && st.st_ino == f->file_ino;
}

/* Remove a memfd ring's identity link, if it is still ours. */
static void remove_ident(int dfd)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  if (f->is_memfd && link_says(dfd, f->ident, f->link)) (void)unlinkat(dfd, f->ident, 0);
}

/* Whether descriptor [fd] is still our ring's memfd.  The program owns its
 * descriptor table: it may close ours (a daemon closing 3..1023,
 * close_range, dup2 over it) and open a file of its own under the number,
 * which we must never close.  Our mapping holds the memfd's inode, so no
 * other file has its device and inode while we live. */
int caml_ocgc_fd_is_ring(int fd)
{
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
         st.st_dev == caml_ocgc_file.file_dev && st.st_ino == caml_ocgc_file.file_ino;
}

/* OCAML_RUNTIME_EVENTS_PRESERVE with a memfd ring: the memory goes with the
 * process, so leave a regular file in its place holding the final ring
 * (the profile's rows not taken and the name table's unused part stay
 * holes: reading them from the memfd would commit them).  It replaces our
 * link, or takes the name if it is free; never another file put there
 * meanwhile. */
static void preserve_copy(struct caml_ocgc_file *f, int dfd)
{
  char tmp[CAML_OCGC_ENTRY_MAX], final[32];
  uint64_t done = 0;
  struct stat st;
  int fd, err = 0;
  caml_ocgc_entry_name(tmp, sizeof tmp, OCGC_DIR_KIND_TMP, f->pidns, f->pid);
  snprintf(final, sizeof final, "%d" OCGC_DIR_EVENTS_SUFFIX, (int)f->pid);
  if (fstatat(dfd, final, &st, AT_SYMLINK_NOFOLLOW) == 0 && !own_entry(dfd, final)) {
    caml_ocgc_complain("not keeping the ring: another file took its name in",
                       caml_ocgc_file_cfg.dir, EEXIST, 0);
    return;
  }
  (void)unlinkat(dfd, tmp, 0);
  fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) err = errno;
  {
    /* the rows in use: the overflow row and the stacks */
    uint64_t rows_end = MP_OFFSET + sizeof(struct ocgc_wire_mp) +
                        (uint64_t)caml_ocgc_mp_rows_used() * sizeof(struct ocgc_wire_mp_row);
    uint64_t rings = OCGC_WIRE_HEADER_SIZE + ocgc_wire_ext_size(1);
    while (err == 0 && done < f->commit_size) {
      ssize_t n;
      if (done >= rows_end && done < rings) done = rings; /* a hole */
      n = pwrite(fd, f->map + done,
                 (size_t)((done < rows_end ? rows_end : f->commit_size) - done), (off_t)done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) err = n < 0 ? errno : EIO;
      else done += (uint64_t)n;
    }
  }
  if (err == 0 && ftruncate(fd, (off_t)f->map_size) != 0) err = errno;
  if (fd >= 0 && close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && renameat(dfd, tmp, dfd, final) != 0) err = errno;
  if (err != 0) {
    (void)unlinkat(dfd, tmp, 0);
    caml_ocgc_complain("cannot keep the ring in", caml_ocgc_file_cfg.dir, err, 0);
  }
}

void caml_ocgc_file_withdraw(void)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  const struct caml_ocgc_file_cfg *cfg = &caml_ocgc_file_cfg;
  char final[32];
  int dfd;
  if (cfg->preserve && !f->is_memfd) return; /* the file itself stays */
  dfd = caml_ocgc_open_dir(cfg->dir);
  if (dfd < 0) {
    if (cfg->preserve) caml_ocgc_complain("cannot keep the ring in", cfg->dir, errno, 0);
    return;
  }
  snprintf(final, sizeof final, "%d" OCGC_DIR_EVENTS_SUFFIX, (int)f->pid);
  if (cfg->preserve) preserve_copy(f, dfd);
  else if (own_entry(dfd, final)) (void)unlinkat(dfd, final, 0);
  remove_ident(dfd); /* after the alias: an alias never leads to nothing */
  close(dfd);
}
