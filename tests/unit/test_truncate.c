/* test_truncate.c - a ring file truncated at any moment, under a host with
 * no SIGBUS handler: every read fails cleanly (OCGC_E_TRUNCATED or, once
 * the file is grown back as zeros, OCGC_E_CORRUPT), never a fault, because
 * libocgc maps only sealed tmpfs memfds and copies every word of any other
 * file (words.c); and libocgc changes no signal disposition of its host.
 * (the totals seqlock read in source.c was a load
 * from the mapping, and a truncation between its fstat() and the load
 * killed a host without a handler.) */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringgen.h"
#include "testutil.h"

/* The child [pid] (which _exits with a step number on failure) passed. */
static void ck_child_ok(pid_t pid)
{
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child failed (%s %d)", WIFSIGNALED(status) ? "signal" : "status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* A plain ring file with one ring and a few events, unlinked; *path gets
 * its name while it exists. */
static int make_ring(struct rg_file *f, char *path, size_t n)
{
  const char *dir = getenv("TMPDIR");
  unsigned i;
  int fd;
  snprintf(path, n, "%s/ocgc-trunc-XXXXXX", dir != NULL && *dir ? dir : "/tmp");
  if ((fd = mkstemp(path)) < 0) return -1;
  close(fd);
  unlink(path);
  if (rg_create(f, path, 1, 1, 1024) != 0) return -1;
  for (i = 0; i < 10; i++)
    rg_write1(f, 0, OCGC_EV_HEADER(3, 0, OCGC_RT_LIFECYCLE, OCGC_LC_RING_START), 1000 + i, 1);
  return 0;
}

/* Whether [fd]'s file is mapped in this process. */
static int mapped_here(int fd)
{
  struct stat st;
  char line[512];
  FILE *m;
  int found = 0;
  if (fstat(fd, &st) != 0 || (m = fopen("/proc/self/maps", "r")) == NULL) return -1;
  while (fgets(line, sizeof line, m) != NULL) {
    unsigned long ino;
    unsigned maj, min;
    if (sscanf(line, "%*s %*s %*s %x:%x %lu", &maj, &min, &ino) == 3 && ino == st.st_ino &&
        makedev(maj, min) == st.st_dev)
      found = 1;
  }
  fclose(m);
  return found;
}

/* A plain file is never mapped (so no load from it can fault); a sealed
 * memfd, whose pages stay, is. */
START_TEST(only_sealed_files_are_mapped)
{
  char path[4096];
  struct rg_file f;
  struct ocgc_source *s = NULL;
  struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);
  char fdpath[64];
  int fd;
  ck_assert_int_eq(make_ring(&f, path, sizeof path), 0);
  ck_assert_int_eq(ocgc_source_open_path(path, NULL, &s), 0);
  unlink(path);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  /* rg_create's own mapping is the writer's: drop it first. */
  fd = dup(f.fd);
  rg_close(&f);
  ck_assert_int_eq(mapped_here(fd), 0);
  ocgc_source_close(s);
  close(fd);

  /* The same bytes in a memfd sealed against shrinking. */
  {
    int mfd = memfd_create("ocgc-trunc", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    uint64_t size = rg_file_size(1, 1, 1024);
    char *img = calloc(1, size);
    ck_assert_int_ge(mfd, 0);
    ck_assert_ptr_nonnull(img);
    rg_fill(img, 1, 1, 1024);
    ck_assert_int_eq(pwrite(mfd, img, size, 0), (ssize_t)size);
    free(img);
    ck_assert_int_eq(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", mfd);
    ck_assert_int_eq(ocgc_source_open_path(fdpath, NULL, &s), 0);
    ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
    ck_assert_int_eq(mapped_here(mfd), 1);
    ocgc_source_close(s);
    close(mfd);
  }
}
END_TEST

/* Opening and reading a ring changes no signal disposition. */
START_TEST(library_takes_no_signal)
{
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char path[4096];
    struct sigaction before[NSIG], now;
    struct ocgc_source *src = NULL;
    struct ocgc_cursor *c = NULL;
    struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);
    struct rg_file f;
    int sig;
    /* (A sanitizer may have handlers of its own: compare, do not assume.) */
    for (sig = 1; sig < NSIG; sig++) sigaction(sig, NULL, &before[sig]);
    if (make_ring(&f, path, sizeof path) != 0) _exit(3);
    if (ocgc_source_open_path(path, NULL, &src) != 0) _exit(4);
    unlink(path);
    if (ocgc_source_totals(src, &tot) != 0 || ocgc_cursor_new(src, NULL, &c) != 0 ||
        ocgc_cursor_poll(c, 0) < 0)
      _exit(5);
    for (sig = 1; sig < NSIG; sig++) {
      if (sigaction(sig, NULL, &now) != 0) continue;
      if (now.sa_flags != before[sig].sa_flags || now.sa_handler != before[sig].sa_handler)
        _exit(6);
    }
    ocgc_cursor_free(c);
    ocgc_source_close(src);
    rg_close(&f);
    _exit(0);
  }
  ck_child_ok(pid);
}
END_TEST

/* ---- a truncation racing every read ---------------------------------------------- */

struct toggler {
  int fd;
  off_t size;
  size_t keep;                /* bytes rewritten after each cut: to the rings' end */
  unsigned cut;               /* where the file is cut to */
  volatile int stop;
  unsigned long toggles;      /* written by the thread, read after join */
};

static void *toggle(void *arg)
{
  struct toggler *t = arg;
  const struct timespec pause = {0, 20000};
  char *image = malloc(t->keep);
  /* The header and the rings are rewritten after each cut, so that reads
   * that miss the cut find a valid ring; a short pause leaves them time to. */
  if (image == NULL || pread(t->fd, image, t->keep, 0) != (ssize_t)t->keep) {
    free(image);
    return NULL;
  }
  while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) {
    if (ftruncate(t->fd, t->cut) != 0 || ftruncate(t->fd, t->size) != 0 ||
        pwrite(t->fd, image, t->keep, 0) != (ssize_t)t->keep)
      break;
    t->toggles++;
    nanosleep(&pause, NULL);
  }
  free(image);
  return NULL;
}

/* Every entry point, in a loop, while another thread cuts the file and
 * grows it back as fast as it can; SIGBUS has its default action, so a
 * single load from a cut page ends the child.  The loop ends after a number
 * of rounds that saw the cut (not after a time), so it checks the same on a
 * slow machine as on a fast one. */
START_TEST(racing_truncation_never_faults)
{
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char path[4096];
    struct rg_file f;
    struct ocgc_source *s = NULL;
    struct toggler t;
    pthread_t th;
    unsigned long rounds, ok = 0, cut = 0;
    signal(SIGBUS, SIG_DFL);
    alarm(600); /* a hang ends as a failure */
    if (make_ring(&f, path, sizeof path) != 0) _exit(3);
    if (ocgc_source_open_path(path, NULL, &s) != 0) _exit(4);
    unlink(path);
    memset(&t, 0, sizeof t);
    t.fd = f.fd;
    t.size = (off_t)f.size;
    t.keep = f.hdr->data_offset + f.hdr->ring_size_bytes;
    t.cut = _i == 0 ? 0 : 64; /* nothing left, or the header's first words only */
    if (pthread_create(&th, NULL, toggle, &t) != 0) _exit(5);
    for (rounds = 0; rounds < 2000000 && (cut < 2000 || ok < 200); rounds++) {
      struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
      struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);
      struct ocgc_gc_config cfg = {.sz = sizeof cfg};
      struct ocgc_cursor *c = NULL;
      uint64_t w;
      int e[5], k, any_cut = 0, all_ok = 1;
      e[0] = ocgc_source_info(s, &info);
      e[1] = ocgc_source_totals(s, &tot);
      e[2] = ocgc_source_gc_config(s, &cfg);
      e[3] = ocgc_source_written(s, 0, &w);
      e[4] = ocgc_cursor_new(s, NULL, &c);
      if (e[4] == 0) e[4] = ocgc_cursor_poll(c, 0) < 0 ? OCGC_E_TRUNCATED : 0;
      ocgc_cursor_free(c);
      (void)ocgc_source_user_name(s, 3);
      for (k = 0; k < 5; k++) {
        /* Only these: a cut file, or one grown back as zeros. */
        if (e[k] != 0 && e[k] != OCGC_E_TRUNCATED && e[k] != OCGC_E_CORRUPT && e[k] != -EAGAIN)
          _exit(6);
        if (e[k] == OCGC_E_TRUNCATED) any_cut = 1;
        if (e[k] != 0) all_ok = 0;
      }
      cut += any_cut;
      ok += all_ok;
    }
    __atomic_store_n(&t.stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    ocgc_source_close(s);
    rg_close(&f);
    /* The race was run: reads saw the cut, and reads got through. */
    if (cut < 2000 || ok < 200) {
      fprintf(stderr, "rounds %lu: %lu cut, %lu whole, %lu toggles\n", rounds, cut, ok,
              t.toggles);
      _exit(7);
    }
    _exit(0);
  }
  ck_child_ok(pid);
}
END_TEST

static Suite *truncate_suite(void)
{
  Suite *s = suite_create("truncate");
  TCase *tc = tcase_create("truncate");
  tcase_set_timeout(tc, 0);
  tcase_add_test(tc, only_sealed_files_are_mapped);
  tcase_add_test(tc, library_takes_no_signal);
  tcase_add_loop_test(tc, racing_truncation_never_faults, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(truncate_suite);
