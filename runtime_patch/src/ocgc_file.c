/* ocgc_file.c - the producer's ring file: where it lives, how it is made,
 * and what happens to it at fork and exit.
 *
 * Invariants:
 * - <dir>/<pid>.events appears only complete: it is built under a private
 *   temporary name (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) in a folder opened
 *   with O_NOFOLLOW and owned by the effective user, then renamed into place.
 * - Any failure leaves the program running with the ring off and exactly one
 *   line on stderr; nothing is ever written outside the folder.
 * - A forked child never writes into its parent's mapping: the child handler
 *   unmaps it, and the child's own file is created on its first event, so a
 *   fork followed by exec leaves no file behind.
 * - At normal exit: RING_STOP, state EXITED, file removed unless
 *   OCAML_RUNTIME_EVENTS_PRESERVE is set.
 * Called only from the mutator thread with the runtime lock held, except the
 * fork and exit handlers, which run where the C library runs them. */

#define CAML_INTERNALS
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "caml/config.h"
#include "caml/ocgc.h"
#include "caml/osdeps.h"
#include "caml/version.h"
#include "ocgc_clock.h"
#include "ocgc_file.h"
#include "ocgc_ring.h"

#define DEFAULT_RING_LOG2 16 /* OCaml 5's default: 64 Ki words, 512 KiB */
#define MIN_RING_LOG2 10
#define MAX_RING_LOG2 28

int caml_ocgc_enabled = 0;
struct caml_ocgc_file caml_ocgc_file;

static struct {
  char dir[PATH_MAX];
  unsigned ring_log2;
  int preserve;
  int handlers_installed;
} cfg;

/* The one line a failure prints. */
static void complain(const char *what, const char *dir, int err)
{
  const char *why = strerror(err);
  if (err == EPERM || err == ELOOP || err == ENOTDIR)
    why = "it must be a folder of yours, not a symbolic link";
  else if (err == EEXIST)
    why = "something that is not a ring file stands where the ring goes";
  else if (err == 0)
    why = "invalid setting";
  fprintf(stderr, "ocgc: %s %s: %s; GC events are off for this process\n",
          what, dir, why);
}

/* OCAMLRUNPARAM=e=N (or CAMLRUNPARAM), as in OCaml 5; the 4.13 parser skips
 * letters it does not know, so both can read the same variable. */
static unsigned ring_log2_from_env(void)
{
  const char *p = caml_secure_getenv("OCAMLRUNPARAM");
  unsigned v = DEFAULT_RING_LOG2;
  if (p == NULL) p = caml_secure_getenv("CAMLRUNPARAM");
  for (; p != NULL && *p != '\0'; p++) {
    if (p[0] == 'e' && p[1] == '=') {
      char *end;
      unsigned long n = strtoul(p + 2, &end, 10);
      if (end != p + 2 && n >= MIN_RING_LOG2 && n <= MAX_RING_LOG2)
        v = (unsigned)n;
      else
        fprintf(stderr, "ocgc: OCAMLRUNPARAM e=%.*s is outside %d..%d; "
                "using e=%d\n", (int)strcspn(p + 2, ","), p + 2, MIN_RING_LOG2,
                MAX_RING_LOG2, DEFAULT_RING_LOG2);
    }
    p += strcspn(p, ",");
    if (*p == '\0') break;
  }
  return v;
}

/* The default folder: private, per user, on tmpfs, so that the writer never
 * waits for a disk. */
static int default_dir(char *out, size_t n)
{
  const char *xdg = caml_secure_getenv("XDG_RUNTIME_DIR");
  struct stat st;
  int len;
  if (xdg != NULL && xdg[0] == '/' && stat(xdg, &st) == 0 &&
      S_ISDIR(st.st_mode) && st.st_uid == geteuid())
    len = snprintf(out, n, "%s/ocgc", xdg);
  else if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
    len = snprintf(out, n, "/dev/shm/ocgc-%u", (unsigned)geteuid());
  else
    len = snprintf(out, n, "/tmp/ocgc-%u", (unsigned)geteuid());
  if (len < 0 || (size_t)len >= n) return -1;
  if (mkdir(out, 0700) != 0 && errno != EEXIST) return -1;
  return 0;
}

/* Make [dir] absolute (the program may chdir before it exits, and the file
 * is removed by path) and drop trailing slashes (with one, the kernel
 * follows a final symbolic link even under O_NOFOLLOW).  Returns 0 or an
 * errno. */
static int normalize_dir(const char *dir, char *out, size_t n)
{
  size_t len;
  int w;
  if (dir[0] == '/') {
    w = snprintf(out, n, "%s", dir);
  } else {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL) return errno;
    w = snprintf(out, n, "%s/%s", cwd, dir);
  }
  if (w < 0 || (size_t)w >= n) return ENAMETOOLONG;
  len = strlen(out);
  while (len > 1 && out[len - 1] == '/') out[--len] = '\0';
  return 0;
}

/* Open the folder without following a link and check that it is ours. */
static int open_dir(const char *dir)
{
  struct stat st;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0) { int e = errno; close(fd); errno = e; return -1; }
  if (st.st_uid != geteuid()) { close(fd); errno = EPERM; return -1; }
  return fd;
}

static void read_small_file(const char *path, char *buf, size_t n)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t got = -1;
  buf[0] = '\0';
  if (fd < 0) return;
  got = read(fd, buf, n - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
}

/* Field 22 of /proc/self/stat: start time in clock ticks after boot. */
static uint64_t own_start_time(void)
{
  char buf[1024];
  char *p;
  int field;
  read_small_file("/proc/self/stat", buf, sizeof buf);
  p = strrchr(buf, ')');
  if (p == NULL) return 0;
  for (field = 2; *p != '\0' && field < 22; p++)
    if (*p == ' ') field++;
  return strtoull(p, NULL, 10);
}

/* The program's name: argv[0], or the script of ocamlrun_ocgc. */
static void own_program(char *out, size_t n)
{
  char buf[4096];
  const char *name = buf, *base;
  size_t len;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
  if (fd >= 0) close(fd);
  if (got <= 0) { out[0] = '\0'; return; }
  buf[got] = '\0';
  base = strrchr(name, '/');
  base = base ? base + 1 : name;
  if (strncmp(base, "ocamlrun", 8) == 0) {
    const char *arg = name + strlen(name) + 1;
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

/* Fill the new (zeroed) mapping: header, extension, names. */
static void fill_file(char *map, uint64_t ring_words, uint64_t ext_size)
{
  struct ocgc_wire_header *h = (struct ocgc_wire_header *)map;
  struct ocgc_wire_ext *x = (struct ocgc_wire_ext *)(map + OCGC_WIRE_HEADER_SIZE);
  struct timespec mono, real;
  char bootid[64];
  unsigned i;

  h->version = OCGC_WIRE_VERSION;
  h->max_domains = 1;
  h->ring_header_size_bytes = sizeof(struct ocgc_wire_ring_header);
  h->ring_size_bytes = ring_words * 8;
  h->ring_size_elements = ring_words;
  h->headers_offset = OCGC_WIRE_HEADER_SIZE + ext_size;
  h->data_offset = h->headers_offset + sizeof(struct ocgc_wire_ring_header);
  h->custom_events_offset = h->data_offset + h->ring_size_bytes;

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
  x->start_time = own_start_time();
  read_small_file("/proc/sys/kernel/random/boot_id", bootid, sizeof bootid);
  bootid[strcspn(bootid, "\n")] = '\0';
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
  x->rings_offset = OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext);
  x->totals_offset = x->rings_offset + sizeof(struct ocgc_wire_ext_ring);

  for (i = 0; i < caml_ocgc_user_event_count; i++)
    copy_str(map + h->custom_events_offset + (uint64_t)i * OCGC_WIRE_USER_NAME_LEN,
             OCGC_WIRE_USER_NAME_LEN, caml_ocgc_user_event_names[i]);
}

/* Create, fill and publish <dir>/<pid>.events.  Returns 0 or an errno. */
static int create_file(void)
{
  uint64_t ring_words = UINT64_C(1) << cfg.ring_log2;
  uint64_t ext_size = ocgc_wire_ext_size(1);
  uint64_t file_size = OCGC_WIRE_HEADER_SIZE + ext_size +
                       sizeof(struct ocgc_wire_ring_header) + ring_words * 8 +
                       (uint64_t)OCGC_WIRE_USER_EVENTS * OCGC_WIRE_USER_NAME_LEN;
  char tmp[40], final[32];
  struct ocgc_wire_header *h;
  char *map;
  int dfd, fd, err;
  pid_t pid = getpid();

  dfd = open_dir(cfg.dir);
  if (dfd < 0) return errno;
  snprintf(tmp, sizeof tmp, ".%d.events.tmp", (int)pid);
  snprintf(final, sizeof final, "%d.events", (int)pid);
  /* A leftover of an earlier process with our pid: remove it (unlinkat never
   * follows a link, it removes the link itself). */
  (void)unlinkat(dfd, tmp, 0);
  fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) { err = errno; close(dfd); return err; }
  /* posix_fallocate, not ftruncate: on a full tmpfs a sparse file would
   * fault with SIGBUS on first write instead of failing here. */
  err = posix_fallocate(fd, 0, (off_t)file_size);
  if (err != 0) goto fail_unlink;
  map = mmap(NULL, file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) { err = errno; goto fail_unlink; }
  close(fd);
  fd = -1;
  fill_file(map, ring_words, ext_size); /* a new file (O_EXCL) reads as zeroes */
  /* A stale file of an earlier process with our pid is replaced; a link or
   * anything else planted there is refused (rename would only replace the
   * link itself, but nobody legitimate puts one there). */
  {
    struct stat st;
    if (fstatat(dfd, final, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISREG(st.st_mode)) {
      err = EEXIST;
      munmap(map, file_size);
      goto fail_unlink;
    }
  }
  if (renameat(dfd, tmp, dfd, final) != 0) {
    err = errno;
    munmap(map, file_size);
    goto fail_unlink;
  }
  close(dfd);

  h = (struct ocgc_wire_header *)map;
  memset(&caml_ocgc_ring, 0, sizeof caml_ocgc_ring);
  caml_ocgc_ring.size = ring_words;
  caml_ocgc_ring.mask = ring_words - 1;
  caml_ocgc_ring.rh = (struct ocgc_wire_ring_header *)(map + h->headers_offset);
  caml_ocgc_ring.er = (struct ocgc_wire_ext_ring *)(map + OCGC_WIRE_HEADER_SIZE +
                                                    sizeof(struct ocgc_wire_ext));
  caml_ocgc_ring.data = (uint64_t *)(map + h->data_offset);

  caml_ocgc_file.map = map;
  caml_ocgc_file.map_size = file_size;
  caml_ocgc_file.ext = (struct ocgc_wire_ext *)(map + OCGC_WIRE_HEADER_SIZE);
  caml_ocgc_file.totals =
      (struct ocgc_wire_totals *)(map + caml_ocgc_file.ext->totals_offset);
  caml_ocgc_file.pid = pid;
  caml_ocgc_file.lazy = 0;
  snprintf(caml_ocgc_file.path, sizeof caml_ocgc_file.path, "%s/%s", cfg.dir,
           final);
  return 0;

fail_unlink:
  if (fd >= 0) close(fd);
  (void)unlinkat(dfd, tmp, 0);
  close(dfd);
  return err;
}

static void at_exit(void)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  if (f->map == NULL || f->pid != getpid()) return;
  caml_ocgc_stop();
  caml_ocgc_enabled = 0;
  if (!cfg.preserve) (void)unlink(f->path);
}

static void in_child(void)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  if (f->map == NULL && !f->lazy) return; /* the ring was never on */
  if (f->map != NULL) {
    /* Only our address space loses the parent's pages. */
    munmap(f->map, f->map_size);
    memset(&caml_ocgc_ring, 0, sizeof caml_ocgc_ring);
    f->map = NULL;
    f->ext = NULL;
    f->totals = NULL;
  }
  /* Our parent, even if it never made its own file (a double fork). */
  f->parent_pid = getppid();
  f->lazy = 1;
}

int caml_ocgc_file_reopen(void)
{
  int err;
  caml_ocgc_file.lazy = 0;
  err = create_file();
  if (err != 0) {
    complain("cannot create the forked child's ring in", cfg.dir, err);
    caml_ocgc_enabled = 0;
    return 0;
  }
  caml_ocgc_started((uint64_t)caml_ocgc_file.parent_pid);
  return 1;
}

void caml_ocgc_init(void)
{
  const char *off = caml_secure_getenv("OCGC_DISABLE");
  const char *dir = caml_secure_getenv("OCAML_RUNTIME_EVENTS_DIR");
  int err;

  if (off != NULL && off[0] != '\0' && strcmp(off, "0") != 0) return;
  caml_ocgc_clock_init();
  cfg.ring_log2 = ring_log2_from_env();
  cfg.preserve = caml_secure_getenv("OCAML_RUNTIME_EVENTS_PRESERVE") != NULL;
  if (dir != NULL && dir[0] != '\0') {
    err = normalize_dir(dir, cfg.dir, sizeof cfg.dir);
    if (err != 0) {
      complain("cannot use the ring folder", dir, err);
      return;
    }
  } else if (default_dir(cfg.dir, sizeof cfg.dir) != 0) {
    complain("cannot make the ring folder", cfg.dir, errno);
    return;
  }
  err = create_file();
  if (err != 0) {
    complain("cannot create the ring in", cfg.dir, err);
    return;
  }
  if (!cfg.handlers_installed) {
    cfg.handlers_installed = 1;
    pthread_atfork(NULL, NULL, in_child);
    atexit(at_exit);
  }
  caml_ocgc_enabled = 1;
  caml_ocgc_started(0);
}
