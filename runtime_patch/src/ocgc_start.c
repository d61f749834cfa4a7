/* ocgc_start.c - the producer's start, inside the runtime's (caml/ocgc.h's
 * caml_ocgc_init): the environment read once (OCGC_DISABLE, OCGC_TSC,
 * OCGC_IDS, OCGC_PHASES, OCAMLRUNPARAM's e=, OCAML_RUNTIME_EVENTS_DIR and
 * _PRESERVE, OCGC_MEMPROF), the ring folder chosen and made, dead
 * processes' entries swept (ocgc_stale.c), the first file made
 * (ocgc_file.c), the fork and exit handlers installed (ocgc_lifecycle.c),
 * and the hooks turned on.  The top of the producer: nothing calls into it
 * but the runtime.
 *
 * Invariants:
 * - A setting out of its range is said in one line and its default kept;
 *   a folder that cannot be used turns the ring off, with one line
 *   (caml_ocgc_complain), and the program runs on.
 * - The folder is made absolute before anything is made in it (the program
 *   may chdir before it exits, and the file is removed by path).
 * - The hooks are turned on (caml_ocgc_enabled) only once the file is
 *   published and the handlers are installed; allocation sampling only with
 *   a file to keep its table in.
 * Called once, from the runtime's start, on the mutator thread. */

#define CAML_INTERNALS
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "caml/config.h"
#include "caml/ocgc.h"
#include "caml/osdeps.h"
#include "ocgc_clock.h"
#include "ocgc_entries.h"
#include "ocgc_file.h"
#include "ocgc_hooks.h"
#include "ocgc_lifecycle.h"
#include "ocgc_memprof.h"
#include "ocgc_ring.h"
#include "ocgc_stale.h"

#define DEFAULT_RING_LOG2 16 /* OCaml 5's default: 64 Ki words, 512 KiB */
#define MIN_RING_LOG2 10
#define MAX_RING_LOG2 28

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
 * waits for a disk.  Readers find it by the same rule, in libocgc's
 * ocgc_default_dir() (libconsumer/dirs.c): change both together. */
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

/* One line to stderr, as it is (a setting the runtime did not take). */
static void say_line(const char *line)
{
  (void)!write(STDERR_FILENO, line, strlen(line));
}

/* OCGC_IDS: "5.2" (the default) or "5.3", the numbering of phase ids for
 * readers built on OCaml 5.3 or later; anything else is said once and
 * the default kept (the ring is as useful either way). */
static void ids_from_env(void)
{
  const char *ids = caml_secure_getenv("OCGC_IDS");
  if (ids == NULL || ids[0] == '\0' || strcmp(ids, "5.2") == 0) return;
  if (strcmp(ids, "5.3") == 0) {
    caml_ocgc_ids53 = 1;
    return;
  }
  say_line("ocgc: OCGC_IDS must be 5.2 or 5.3: writing OCaml 5.2's ids\n");
}

/* OCGC_PHASES: 0, 1 (the default) or 2, which sub-phase spans are written
 * (caml_ocgc_set_phases); anything else is said once and the default kept. */
static void phases_from_env(void)
{
  const char *v = caml_secure_getenv("OCGC_PHASES");
  caml_ocgc_file_cfg.phases_level = 1;
  if (v != NULL && v[0] >= '0' && v[0] <= '2' && v[1] == '\0')
    caml_ocgc_file_cfg.phases_level = v[0] - '0';
  else if (v != NULL && v[0] != '\0')
    say_line("ocgc: OCGC_PHASES must be 0, 1 or 2: using 1\n");
  caml_ocgc_set_phases(caml_ocgc_file_cfg.phases_level);
}

/* OCGC_TSC=0: time every event with the clock, never with the TSC. */
static int tsc_allowed(void)
{
  const char *v = caml_secure_getenv("OCGC_TSC");
  return !(v != NULL && strcmp(v, "0") == 0);
}

void caml_ocgc_init(void)
{
  const char *off = caml_secure_getenv("OCGC_DISABLE");
  const char *dir = caml_secure_getenv("OCAML_RUNTIME_EVENTS_DIR");
  struct caml_ocgc_file_cfg *cfg = &caml_ocgc_file_cfg;
  int err, dfd;

  if (off != NULL && off[0] != '\0' && strcmp(off, "0") != 0) return;
  caml_ocgc_clock_init(tsc_allowed());
  ids_from_env();
  phases_from_env();
  cfg->ring_log2 = ring_log2_from_env();
  cfg->preserve = caml_secure_getenv("OCAML_RUNTIME_EVENTS_PRESERVE") != NULL;
  if (dir != NULL && dir[0] != '\0') {
    err = normalize_dir(dir, cfg->dir, sizeof cfg->dir);
    if (err != 0) {
      caml_ocgc_complain("cannot use the ring folder", dir, err, 0);
      return;
    }
  } else if (default_dir(cfg->dir, sizeof cfg->dir) != 0) {
    caml_ocgc_complain("cannot make the ring folder", cfg->dir, errno, 0);
    return;
  }
  dfd = caml_ocgc_open_dir(cfg->dir);
  if (dfd < 0) {
    err = errno;
  } else {
    unsigned long ns = caml_ocgc_pidns();
    /* At process start, not in a forked child's first collection. */
    caml_ocgc_sweep_stale(dfd, getpid(), ns);
    err = caml_ocgc_file_create(dfd, ns);
    close(dfd);
  }
  if (err != 0) {
    caml_ocgc_complain("cannot create the ring in", cfg->dir, err, 0);
    return;
  }
  caml_ocgc_lifecycle_install();
  __atomic_store_n(&caml_ocgc_enabled, 1, __ATOMIC_RELAXED);
  caml_ocgc_started(0, caml_ocgc_now());
  /* sampling only with a file to keep its table in */
  caml_ocgc_mp_init(caml_secure_getenv("OCGC_MEMPROF"), caml_secure_getenv("OCGC_MEMPROF_RECYCLE"));
}
