/* test_counters.c - the counters' table (OCGC_COUNTER_FIELDS) and the
 * rules that loop over it: every monotone count grows by ocgc_counters_growth
 * (interval.c) and never goes back in a watch (watch.c read_counters), the
 * rest being the newer's.
 *
 * The watch's case forks a "producer" child that keeps a ring file made by
 * ringgen mapped (so the watch finds it in the child's maps, as it finds a
 * patched runtime's); the test, which made the file before the fork and
 * keeps its own shared mapping, then rewrites the totals as a lying
 * producer would.  The child dies with the test (PR_SET_PDEATHSIG, and an
 * alarm as a backstop). */
#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "ocgc/consumer.h"
#include "ringgen.h"
#include "testutil.h"

/* Field 22 of /proc/PID/stat (the start time), as the producer reads it. */
static uint64_t proc_start_time(pid_t pid)
{
  char path[64], buf[1024];
  ssize_t got;
  char *p;
  int fd, field;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return 0;
  got = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
  p = strrchr(buf, ')');
  if (p == NULL) return 0;
  for (field = 2; *p != '\0' && field < 22; p++)
    if (*p == ' ') field++;
  return strtoull(p, NULL, 10);
}

/* The boot id without its newline, as the producer reads it. */
static void self_boot_id(char *out, size_t n)
{
  ssize_t got;
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  out[0] = '\0';
  if (fd < 0) return;
  got = read(fd, out, n - 1);
  close(fd);
  out[got > 0 ? got : 0] = '\0';
  out[strcspn(out, "\n")] = '\0';
}

/* The growth of every monotone count is newer minus older (0 when the
 * newer is less), and every other field is the newer's: the table's kinds,
 * field by field, as a caller reads them. */
START_TEST(growth_by_kind)
{
  struct ocgc_counters o = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_counters n = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_counters g = OCGC_OPTS_INIT(struct ocgc_counters);
  unsigned k;
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    o.collections[k] = 10 + k, n.collections[k] = 20 + 3 * k;
    o.event_collections[k] = 5, n.event_collections[k] = 7 + k;
  }
  o.major_cycles = 3, n.major_cycles = 4;
  o.forced_majors = 2, n.forced_majors = 5;
  o.allocated_bytes = 100, n.allocated_bytes = 1100;
  o.promoted_bytes = 50, n.promoted_bytes = 40; /* went back: no growth */
  o.direct_major_bytes = 8, n.direct_major_bytes = 24;
  o.gc_time_ns = 1000, n.gc_time_ns = 1500;
  o.pauses = 7, n.pauses = 9;
  o.events_seen = 30, n.events_seen = 90;
  o.events_lost = 1, n.events_lost = 4;
  o.time_ns = 1, n.time_ns = 2;
  o.heap_bytes = 4096, n.heap_bytes = 2048;
  o.top_heap_bytes = 8192, n.top_heap_bytes = 8192;
  o.live_bytes = 999, n.live_bytes = 333;
  o.first_event_ns = 11, n.first_event_ns = 12;
  o.last_event_ns = 21, n.last_event_ns = 22;
  o.exact = 0, n.exact = 1;
  o.lost_exact = 1, n.lost_exact = 0;
  o.pause_rule = 0, n.pause_rule = 1;
  ocgc_counters_growth(&o, &n, &g);
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    ck_assert_uint_eq(g.collections[k], 10 + 2 * k);
    ck_assert_uint_eq(g.event_collections[k], 2 + k);
  }
  ck_assert_uint_eq(g.major_cycles, 1);
  ck_assert_uint_eq(g.forced_majors, 3);
  ck_assert_uint_eq(g.allocated_bytes, 1000);
  ck_assert_uint_eq(g.promoted_bytes, 0);
  ck_assert_uint_eq(g.direct_major_bytes, 16);
  ck_assert_uint_eq(g.gc_time_ns, 500);
  ck_assert_uint_eq(g.pauses, 2);
  ck_assert_uint_eq(g.events_seen, 60);
  ck_assert_uint_eq(g.events_lost, 3);
  ck_assert_uint_eq(g.time_ns, 2);
  ck_assert_uint_eq(g.heap_bytes, 2048);
  ck_assert_uint_eq(g.top_heap_bytes, 8192);
  ck_assert_uint_eq(g.live_bytes, 333);
  ck_assert_uint_eq(g.first_event_ns, 12);
  ck_assert_uint_eq(g.last_event_ns, 22);
  ck_assert_int_eq(g.exact, 1);
  ck_assert_int_eq(g.lost_exact, 0);
  ck_assert_int_eq(g.pause_rule, 1);
  ck_assert_uint_eq(g.sz, sizeof g);
}
END_TEST

/* The producer's side of the lie: totals as an honest one would write them
 * at [n] (every figure grows with it). */
static void set_totals(struct ocgc_wire_totals *t, uint64_t n)
{
  t->seq += 1; /* odd while written: readers retry */
  __atomic_thread_fence(__ATOMIC_RELEASE);
  t->minor_collections = 10 * n;
  t->major_slices = 5 * n;
  t->major_collections = 2 * n;
  t->forced_major_collections = n;
  t->compactions = n;
  t->minor_words = 1000 * n;
  t->promoted_words = 100 * n;
  t->direct_major_words = 10 * n;
  t->gc_time_ns = 1000000 * n;
  t->heap_words = 4096 * n;
  t->top_heap_words = 4096 * n;
  __atomic_thread_fence(__ATOMIC_RELEASE);
  t->seq += 1;
}

/* A producer whose totals go back (a lie: they only grow) does not make a
 * watch's counters go back, any of them: forced_majors among them, which
 * the watch's own list of figures once missed (a reader then saw forced
 * majors reset, and a rate out of nothing). */
START_TEST(watch_counters_never_less)
{
  char *dir = tu_mkdtemp(), tmpname[4096], final[4096], boot[64];
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct ocgc_counters before;
  struct ocgc_watch *w;
  const struct ocgc_watched *p;
  struct rg_file f;
  struct pollfd pl;
  pid_t parent = getpid(), pid;
  int fds[2];
  char ok = 0;
  unsigned k;

  snprintf(tmpname, sizeof tmpname, "%s/.ring.tmp", dir);
  ck_assert_int_eq(rg_create(&f, tmpname, 1, 1, 1024), 0);
  set_totals(f.totals, 5);
  rg_write1(&f, 0, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED), 100, 8);
  ck_assert_int_eq(pipe(fds), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) { /* the producer: its identity in the file, then the file in place */
    char r = 'R';
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    alarm(120);
    f.ext->pid = (uint64_t)getpid();
    f.ext->start_time = proc_start_time(getpid());
    self_boot_id(boot, sizeof boot);
    memset(f.ext->boot_id, 0, sizeof f.ext->boot_id);
    memcpy(f.ext->boot_id, boot, strlen(boot) < 39 ? strlen(boot) : 39);
    snprintf(final, sizeof final, "%s/%d.events", dir, (int)getpid());
    if (rename(tmpname, final) != 0) r = 'E';
    if (write(fds[1], &r, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  pl.fd = fds[0];
  pl.events = POLLIN;
  ck_assert_msg(poll(&pl, 1, 10000) == 1, "the producer never got ready");
  ck_assert_int_eq(read(fds[0], &ok, 1), 1);
  ck_assert_int_eq(ok, 'R');

  ck_assert_int_eq(ocgc_watch_new(&o, &w), 0);
  ck_assert_int_eq(ocgc_watch_add_pid(w, pid), 0);
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_nonnull(p->snap);
  ck_assert_int_eq(p->counters.exact, 1); /* from the totals */
  ck_assert_uint_eq(p->counters.forced_majors, 5);
  ck_assert_uint_eq(p->counters.major_cycles, 10);
  before = p->counters;

  set_totals(f.totals, 2); /* the lie */
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(p->counters.forced_majors, before.forced_majors);
  ck_assert_uint_eq(p->counters.major_cycles, before.major_cycles);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    ck_assert_uint_eq(p->counters.collections[k], before.collections[k]);
  ck_assert_uint_eq(p->counters.allocated_bytes, before.allocated_bytes);
  ck_assert_uint_eq(p->counters.promoted_bytes, before.promoted_bytes);
  ck_assert_uint_eq(p->counters.direct_major_bytes, before.direct_major_bytes);
  ck_assert_uint_eq(p->counters.gc_time_ns, before.gc_time_ns);
  ck_assert_uint_ge(p->counters.pauses, before.pauses);
  /* a gauge follows the producer, down too */
  ck_assert_uint_eq(p->counters.heap_bytes, 2 * 4096 * 8);

  set_totals(f.totals, 7); /* honest again: the counters follow */
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(p->counters.forced_majors, 7);
  ck_assert_uint_eq(p->counters.major_cycles, 14);

  ocgc_watch_free(w);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  close(fds[0]);
  rg_close(&f);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

static Suite *counters_suite(void)
{
  Suite *s = suite_create("counters");
  TCase *tc = tcase_create("growth");
  tcase_add_test(tc, growth_by_kind);
  suite_add_tcase(s, tc);
  tc = tcase_create("watch");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, watch_counters_never_less);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(counters_suite);
