/* test_watch.c - libocgc's watch (watch.c, ocgc/watch.h) on real
 * processes (children.c): a process followed and let go when gone, given
 * twice; each ring's drain schedule (a ring that fills is drained sooner,
 * an idle one later, within OCGC_WATCH_POLL_MIN_NS..MAX_NS); the back-off
 * of a ring whose drain stays stuck on a held seqlock (stale, left alone
 * 100 ms, doubled at each stuck read); counters that never go back when a
 * producer's totals do; the bounds of opts.all (max_processes,
 * max_per_user): the refused process counted, remembered, and watched
 * once a slot is free; a failing ring evicted for a new one.
 *
 * The schedule and back-off cases drive ocgc_watch_poll() with the
 * clock's own time (the watch times its reads with it), sleeping until
 * the turn it gives; what they assert are lower bounds of time, which a
 * loaded machine only makes longer. */

#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "children.h"
#include "common/clock.h"
#include "ocgc/consumer.h"
#include "procfs.h"
#include "testutil.h"

static char *tmp;

static void setup(void)
{
  tmp = tu_mkdtemp();
}

static void teardown(void)
{
  tu_rmtree(tmp);
  free(tmp);
  tmp = NULL;
}

/* ---- following a process ----------------------------------------------------------------- */

struct watch_seen { int added, gone, gone_pid; uint64_t gone_events; };

static void on_added(const struct ocgc_watched *w, void *ctx)
{
  (void)w;
  ((struct watch_seen *)ctx)->added++;
}

static void on_gone(const struct ocgc_watched *w, void *ctx)
{
  struct watch_seen *n = ctx;
  n->gone++;
  n->gone_pid = w->pid;
  n->gone_events = w->counters.events_seen;
}

/* What a watch exposes of the producer it follows (ringgen's: N_EVENTS
 * events, program "ringgen"), in both formats. */
static void watch_exposes(const struct ocgc_watch *w, pid_t pid)
{
  static struct tu_buf b;
  struct ocgc_expo e;
  char want[128];
  memset(&b, 0, sizeof b);
  ocgc_expo_init(&e, tu_buf_put, &b, OCGC_EXPO_TEXT);
  ocgc_watch_expose(w, &e);
  ocgc_expo_finish(&e);
  snprintf(want, sizeof want, "\nocgc_ring_events_total{pid=\"%d\",program=\"ringgen\"} %d\n",
           (int)pid, N_EVENTS);
  ck_assert_msg(strstr(b.s, want) != NULL, "no '%s' in:\n%s", want, b.s);
  ck_assert_ptr_nonnull(strstr(b.s, "# TYPE ocaml_runtime_info gauge\n"));
  ck_assert_ptr_null(strstr(b.s, "# EOF"));
  memset(&b, 0, sizeof b);
  ocgc_expo_init(&e, tu_buf_put, &b, OCGC_EXPO_OPENMETRICS);
  ocgc_watch_expose(w, &e);
  ocgc_expo_finish(&e);
  ck_assert_msg(strstr(b.s, want) != NULL, "no '%s' in:\n%s", want, b.s);
  ck_assert_ptr_nonnull(strstr(b.s, "# TYPE ocgc_ring_events counter\n"));
  ck_assert_ptr_nonnull(strstr(b.s, "# TYPE ocaml_runtime info\n"));
  ck_assert_uint_ge(b.n, 7);
  ck_assert_str_eq(b.s + b.n - 6, "# EOF\n");
}

/* A watch follows a live producer given by pid (once, however often it is
 * given), reads its ring whole at a refresh with its identity and /proc
 * figures, and lets it go, with its last figures told, once it is
 * killed. */
START_TEST(watch_follows_and_lets_go)
{
  struct child c = start(tmp, P_OK);
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  struct ocgc_proc_ident id;
  struct watch_seen n = {0};
  struct ocgc_watch *w;
  const struct ocgc_watched *p;
  pid_t pid;

  o.on_added = on_added;
  o.on_gone = on_gone;
  o.ctx = &n;
  ck_assert_int_eq(ocgc_watch_new(&o, &w), 0);
  ck_assert_int_eq(ocgc_watch_add_pid(w, c.pid), 0);
  ck_assert_int_eq(ocgc_watch_add_pid(w, c.pid), 0);
  ck_assert_int_eq(ocgc_watch_add_pid(w, dead_pid()), -ESRCH);
  ck_assert_int_eq(n.added, 1);
  p = ocgc_watch_next(w, NULL);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_null(ocgc_watch_next(w, p));
  ck_assert_ptr_null(p->snap); /* nothing read whole yet */

  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(p->pid, c.pid);
  ck_assert_int_eq(ocgc_proc_ident(c.pid, &id), 0);
  ck_assert_uint_eq(p->start_ticks, id.start_time);
  ck_assert_uint_eq(p->proc.start_ticks, id.start_time);
  ck_assert_uint_eq(p->uid, getuid());
  ck_assert_ptr_nonnull(p->snap);
  ck_assert_int_eq(p->info.has_ext, 1);
  ck_assert_uint_eq(p->counters.events_seen, N_EVENTS);
  ck_assert_uint_eq(ocgc_watched_events(p), N_EVENTS);
  ck_assert_int_eq(p->stale, 0);
  ck_assert_uint_ge(p->proc.threads, 1);
  ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
  ck_assert_uint_eq(st.processes, 1);
  ck_assert_uint_eq(st.errors, 0);
  ck_assert_uint_ge(st.polls, 1);
  watch_exposes(w, c.pid);

  pid = c.pid;
  stop(&c);
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  ck_assert_ptr_null(ocgc_watch_next(w, NULL));
  ck_assert_int_eq(n.gone, 1);
  ck_assert_int_eq(n.gone_pid, pid);
  ck_assert_uint_eq(n.gone_events, N_EVENTS);
  ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
  ck_assert_uint_eq(st.processes, 0);
  ocgc_watch_free(w);
}
END_TEST

/* Every process told added is told gone, also one that went before any
 * refresh read it whole (an agent keeping its own list of the watched
 * processes, as serve's /debug/pprof, must not keep it for ever). */
START_TEST(watch_tells_every_going)
{
  struct child c = start(tmp, P_OK);
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct watch_seen n = {0};
  struct ocgc_watch *w;
  pid_t pid = c.pid;
  o.on_added = on_added;
  o.on_gone = on_gone;
  o.ctx = &n;
  ck_assert_int_eq(ocgc_watch_new(&o, &w), 0);
  ck_assert_int_eq(ocgc_watch_add_pid(w, c.pid), 0);
  ck_assert_int_eq(n.added, 1);
  ck_assert_ptr_null(ocgc_watch_next(w, NULL)->snap); /* never read whole */
  stop(&c);
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  ck_assert_ptr_null(ocgc_watch_next(w, NULL));
  ck_assert_int_eq(n.gone, 1);
  ck_assert_int_eq(n.gone_pid, pid);
  ocgc_watch_free(w);
}
END_TEST

/* Options and outputs are read by the library's one rule; a process's
 * figures are the kernel's, and a pid with no process has none. */
START_TEST(watch_opts_and_figures)
{
  struct {
    struct ocgc_watch_opts o;
    uint64_t future;
  } big;
  struct ocgc_process_figures f = OCGC_OPTS_INIT(struct ocgc_process_figures);
  struct ocgc_proc_ident id;
  struct ocgc_watch *w = NULL;
  size_t small = sizeof(size_t);

  memset(&big, 0, sizeof big);
  big.o.sz = sizeof big;
  big.future = 1;
  ck_assert_int_eq(ocgc_watch_new(&big.o, &w), -EINVAL);
  ck_assert_ptr_null(w);
  ck_assert_int_eq(ocgc_watch_new(NULL, &w), 0);
  ck_assert_ptr_null(ocgc_watch_next(w, NULL));
  ck_assert_int_eq(ocgc_watch_stats(w, NULL), -EINVAL);
  {
    /* A caller built before unknown_release (and on_unknown_release):
     * its options taken, its stats filled up to its sz and not past. */
    struct ocgc_watch_stats old;
    struct ocgc_watch_opts oo = OCGC_OPTS_INIT(struct ocgc_watch_opts);
    struct ocgc_watch *w2 = NULL;
    memset(&old, 0xab, sizeof old);
    old.sz = offsetof(struct ocgc_watch_stats, unknown_release);
    ck_assert_int_eq(ocgc_watch_stats(w, &old), 0);
    ck_assert_uint_eq(old.processes, 0);
    ck_assert_uint_eq(old.notified, 0);
    ck_assert_uint_eq(old.unknown_release, 0xababababababababull);
    oo.sz = offsetof(struct ocgc_watch_opts, on_unknown_release);
    oo.all = 1;
    ck_assert_int_eq(ocgc_watch_new(&oo, &w2), 0);
    ocgc_watch_free(w2);
  }
  ocgc_watch_free(w);

  ck_assert_int_eq(ocgc_process_figures(getpid(), &f), 0);
  ck_assert_int_eq(ocgc_proc_ident(getpid(), &id), 0);
  ck_assert_uint_eq(f.start_ticks, id.start_time);
  ck_assert_uint_ge(f.threads, 1);
  ck_assert_uint_gt(f.rss_bytes, 0);
  ck_assert_int_eq(f.have_fds, 1);
  ck_assert_uint_ge(f.open_fds, 3);
  ck_assert_int_eq(ocgc_process_figures(dead_pid(), &f), -ESRCH);
  ck_assert_int_eq(ocgc_process_figures(getpid(), (struct ocgc_process_figures *)&small), 0);
  ck_assert_int_eq(ocgc_process_figures(getpid(), NULL), -EINVAL);
}
END_TEST

/* ---- helpers -------------------------------------------------------------------------------- */

static void sleep_until(uint64_t t)
{
  uint64_t now = cm_mono_ns();
  struct timespec ts;
  if (t <= now) return;
  ts.tv_sec = (time_t)((t - now) / 1000000000u);
  ts.tv_nsec = (long)((t - now) % 1000000000u);
  nanosleep(&ts, NULL);
}

static uint64_t polls_of(const struct ocgc_watch *w)
{
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
  return st.polls;
}

/* Poll at the turns the watch gives until it drains a ring: the time given
 * to that poll.  *next: the turn the watch gave (kept between calls). */
static uint64_t drain_turn(struct ocgc_watch *w, uint64_t *next)
{
  uint64_t before = polls_of(w), now;
  unsigned i;
  for (i = 0; i < 200; i++) {
    sleep_until(*next);
    now = cm_mono_ns();
    *next = ocgc_watch_poll(w, now);
    ck_assert_uint_le(*next - now, OCGC_WATCH_POLL_MAX_NS);
    if (polls_of(w) > before) return now;
  }
  ck_abort_msg("no drain in 200 turns");
  return 0;
}

/* [n] events of 3 words on the held ring. */
static void write_events(struct rg_file *f, unsigned n)
{
  unsigned i;
  for (i = 0; i < n; i++)
    rg_write1(f, 0, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED), 100 + i, 8);
}

static struct ocgc_watch *watch_of(pid_t pid)
{
  struct ocgc_watch *w;
  ck_assert_int_eq(ocgc_watch_new(NULL, &w), 0);
  ck_assert_int_eq(ocgc_watch_add_pid(w, pid), 0);
  return w;
}

/* ---- the drain schedule ----------------------------------------------------------------------- */

#define RING_WORDS 1024u
#define RING_EVENTS (RING_WORDS / 3u) /* events of 3 words a ring holds */

/* An idle ring is drained less and less often, up to
 * OCGC_WATCH_POLL_MAX_NS and no further; one that fills (more than half a
 * ring between two turns) more and more often, down to
 * OCGC_WATCH_POLL_MIN_NS and no further, losing nothing. */
START_TEST(schedule_follows_the_ring)
{
  struct rg_file f;
  struct child c = start_held(tmp, &f, RING_WORDS);
  struct ocgc_watch *w = watch_of(c.pid);
  const struct ocgc_watched *p;
  uint64_t next = 0, every, last = 0;
  unsigned i;

  for (i = 0; i < 6; i++) { /* idle: 0 events a turn */
    drain_turn(w, &next);
    every = ocgc_watch_next(w, NULL)->poll_every_ns;
    printf("idle turn %u: every %.0f ms\n", i, every / 1e6);
    ck_assert_uint_ge(every, last);
    ck_assert_uint_ge(every, OCGC_WATCH_POLL_MIN_NS);
    ck_assert_uint_le(every, OCGC_WATCH_POLL_MAX_NS);
    last = every;
  }
  ck_assert_uint_eq(last, OCGC_WATCH_POLL_MAX_NS);

  for (i = 0; i < 6; i++) { /* busy: three quarters of a ring a turn */
    write_events(&f, RING_EVENTS * 3 / 4);
    drain_turn(w, &next);
    every = ocgc_watch_next(w, NULL)->poll_every_ns;
    printf("busy turn %u: every %.0f ms\n", i, every / 1e6);
    if (last > OCGC_WATCH_POLL_MIN_NS) ck_assert_uint_lt(every, last);
    ck_assert_uint_ge(every, OCGC_WATCH_POLL_MIN_NS);
    last = every;
  }
  ck_assert_uint_eq(last, OCGC_WATCH_POLL_MIN_NS);

  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_uint_eq(p->counters.events_seen, 6 * (RING_EVENTS * 3 / 4));
  ck_assert_uint_eq(p->counters.events_lost, 0);
  ocgc_watch_free(w);
  rg_close(&f);
  stop(&c);
}
END_TEST

/* ---- the back-off of a stuck ring ------------------------------------------------------------ */

/* A live producer whose ring's seqlock stays held with events unread: its
 * drains end stuck; after three in a row it is stale, its last figures
 * kept (a refresh does not read it), and it is drained again only after
 * 100 ms, doubled at each stuck read (measured here past the schedule's
 * own 250 ms: 400 ms, then 800 ms); once the seqlock is let go, a read in
 * time brings it back, fresh. */
START_TEST(stuck_ring_backs_off)
{
  struct rg_file f;
  struct child c = start_held(tmp, &f, RING_WORDS);
  struct ocgc_watch *w = watch_of(c.pid);
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  const struct ocgc_watched *p;
  uint64_t next = 0, t[8], polls;
  unsigned i;

  write_events(&f, 5);
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_uint_eq(p->counters.events_seen, 5);
  ck_assert_int_eq(p->stale, 0);

  write_events(&f, 5);
  f.rings[0].er->seq |= 1; /* held: a producer stopped in its update */
  next = cm_mono_ns();
  for (i = 1; i <= 5; i++) {
    t[i] = drain_turn(w, &next);
    ck_assert_int_eq(ocgc_watch_next(w, NULL)->stale, i >= 3);
  }
  /* Backed off 400 ms from the 5th read's end: not drained 300 ms later,
   * whatever the time now. */
  polls = polls_of(w);
  (void)ocgc_watch_poll(w, t[5] + 300000000u);
  ck_assert_uint_eq(polls_of(w), polls);
  next = t[5] + 300000000u;
  t[6] = drain_turn(w, &next);
  t[7] = drain_turn(w, &next);
  printf("stuck: drained again after %.0f ms, then %.0f ms\n", (t[6] - t[5]) / 1e6,
         (t[7] - t[6]) / 1e6);
  ck_assert_uint_ge(t[6] - t[5], 400000000u);
  ck_assert_uint_ge(t[7] - t[6], 800000000u);

  /* A refresh keeps its last figures, marked stale, and reads nothing. */
  polls = polls_of(w);
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_int_eq(p->stale, 1);
  ck_assert_uint_eq(p->counters.events_seen, 5);
  ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
  ck_assert_uint_eq(st.stale, 1);
  ck_assert_uint_eq(st.polls, polls);

  /* Let go: the next read is in time, and the refresh after it reads all. */
  f.rings[0].er->seq += 1;
  (void)drain_turn(w, &next);
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_int_eq(p->stale, 0);
  ck_assert_uint_eq(p->counters.events_seen, 10);
  ocgc_watch_free(w);
  rg_close(&f);
  stop(&c);
}
END_TEST

/* ---- counters that never go back ------------------------------------------------------------ */

static void set_totals(struct rg_file *f, uint64_t v)
{
  struct ocgc_wire_totals *t = f->totals;
  t->seq += 2; /* even: a whole update */
  t->minor_collections = v;
  t->major_slices = v;
  t->compactions = v;
  t->major_collections = v;
  t->forced_major_collections = v;
  t->minor_words = v;
  t->promoted_words = v;
  t->direct_major_words = v;
  t->gc_time_ns = v;
  t->by_cause[OCGC_KIND_MINOR][0] = v;
  t->by_cause[OCGC_KIND_MAJOR_FINISH][0] = v;
}

/* What a refresh shows of [p]'s counters, each compared with [v] (as
 * set_totals wrote it). */
static void check_counters(const struct ocgc_watched *p, uint64_t v)
{
  const struct ocgc_counters *c = &p->counters;
  ck_assert_uint_eq(c->collections[OCGC_KIND_MINOR], v);
  ck_assert_uint_eq(c->collections[OCGC_KIND_MAJOR_SLICE], v);
  ck_assert_uint_eq(c->collections[OCGC_KIND_MAJOR_FINISH], v);
  ck_assert_uint_eq(c->collections[OCGC_KIND_COMPACTION], v);
  ck_assert_uint_eq(c->major_cycles, v);
  /* the figure the watch's own list once missed: forced majors went back */
  ck_assert_uint_eq(c->forced_majors, v);
  ck_assert_uint_eq(c->allocated_bytes, 8 * v);
  ck_assert_uint_eq(c->promoted_bytes, 8 * v);
  ck_assert_uint_eq(c->direct_major_bytes, 8 * v);
  ck_assert_uint_eq(c->gc_time_ns, v);
  ck_assert_uint_eq(ocgc_watched_collections(p, OCGC_KIND_MINOR, 0), v);
  ck_assert_uint_eq(ocgc_watched_collections(p, OCGC_KIND_MAJOR_FINISH, 0), v);
}

/* A producer that lies: its totals and its count of events written go
 * back.  A reader of the watch never sees a counter go back (a rate out of
 * nothing); once they pass the old figures again, they are shown. */
START_TEST(counters_never_go_back)
{
  struct rg_file f;
  struct child c = start_held(tmp, &f, RING_WORDS);
  struct ocgc_watch *w = watch_of(c.pid);
  const struct ocgc_watched *p;

  write_events(&f, 5);
  set_totals(&f, 1000);
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  ck_assert_uint_eq(ocgc_watched_events(p), 5);
  check_counters(p, 1000);

  set_totals(&f, 10);
  f.rings[0].er->written_events = 2;
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  check_counters(p, 1000);
  ck_assert_uint_eq(ocgc_watched_events(p), 5);

  set_totals(&f, 2000);
  write_events(&f, 1); /* written_events: its writer's own count, 6 */
  ocgc_watch_refresh(w, cm_mono_ns() + 10000000000u);
  p = ocgc_watch_next(w, NULL);
  check_counters(p, 2000);
  ck_assert_uint_eq(ocgc_watched_events(p), 6);
  ocgc_watch_free(w);
  rg_close(&f);
  stop(&c);
}
END_TEST

/* ---- the bounds of opts.all, the refused memo ------------------------------------------------ */

static const struct ocgc_watched *only(const struct ocgc_watch *w)
{
  const struct ocgc_watched *p = ocgc_watch_next(w, NULL);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_null(ocgc_watch_next(w, p));
  return p;
}

/* opts.select: only this run's children (named by name_held()), so that
 * the rings of other programs on the host, which the listing finds and
 * this watch's dir does not hold, are neither opened nor counted. */
static int select_ours(const char *program, void *ctx)
{
  return strcmp(program, ctx) == 0;
}

static void name_held(struct rg_file *f, char *name, size_t n)
{
  snprintf(name, n, "tw-%d", (int)getpid());
  memset(f->ext->program, 0, sizeof f->ext->program);
  memcpy(f->ext->program, name, strlen(name));
}

/* With room for one process (max_processes 1, or max_per_user 1: both
 * children are this user's), a second producer in the folder is refused,
 * counted at each listing (once, not once per listing: the memo), the
 * first watched alone; once the first is gone, its slot goes to the
 * refused one at the next listing. */
START_TEST(bounds_refuse_and_remember)
{
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  struct ocgc_watch *w;
  struct rg_file fa, fb;
  struct child a, b;
  char name[64];
  uint64_t t0, now;
  pid_t bpid;
  unsigned k;

  a = start_held(tmp, &fa, RING_WORDS);
  name_held(&fa, name, sizeof name);
  o.all = 1;
  o.dir = tmp;
  o.select = select_ours;
  o.ctx = name;
  if (_i == 0) o.max_processes = 1;
  else o.max_per_user = 1;
  ck_assert_int_eq(ocgc_watch_new(&o, &w), 0);
  (void)ocgc_watch_poll(w, cm_mono_ns());
  ck_assert_int_eq(only(w)->pid, a.pid);

  b = start_held(tmp, &fb, RING_WORDS);
  name_held(&fb, name, sizeof name);
  bpid = b.pid;
  for (k = 0; k < 3; k++) { /* three listings, a second apart */
    ms_sleep(1050);
    (void)ocgc_watch_poll(w, cm_mono_ns());
    ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
    ck_assert_uint_eq(st.processes, 1);
    ck_assert_uint_eq(st.refused, 1);
    ck_assert_uint_eq(st.evicted, 0);
    ck_assert_int_eq(only(w)->pid, a.pid);
  }

  stop(&a);
  t0 = cm_mono_ns();
  do {
    ms_sleep(50);
    now = cm_mono_ns();
    (void)ocgc_watch_poll(w, now);
    {
      const struct ocgc_watched *p = ocgc_watch_next(w, NULL);
      if (p != NULL && p->pid == bpid && ocgc_watch_next(w, p) == NULL) break;
    }
  } while (now - t0 < 20000000000u);
  ck_assert_int_eq(only(w)->pid, bpid);
  ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
  ck_assert_uint_eq(st.processes, 1);
  ck_assert_uint_eq(st.refused, 0);
  printf("bounds %s: the freed slot taken after %.0f ms\n",
         _i == 0 ? "max_processes" : "max_per_user", (now - t0) / 1e6);
  ocgc_watch_free(w);
  rg_close(&fa);
  rg_close(&fb);
  stop(&b);
}
END_TEST

/* A ring that keeps failing (its drains stuck three times in a row) gives
 * its slot to a new process that opens well: evicted, counted. */
START_TEST(failing_ring_gives_way)
{
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  struct ocgc_watch *w;
  struct rg_file f, fb;
  struct child a = start_held(tmp, &f, RING_WORDS), b;
  char name[64];
  uint64_t next, t0, now;
  unsigned i;

  name_held(&f, name, sizeof name);
  o.all = 1;
  o.select = select_ours;
  o.ctx = name;
  o.dir = tmp;
  o.max_processes = 1;
  ck_assert_int_eq(ocgc_watch_new(&o, &w), 0);
  next = cm_mono_ns();
  (void)drain_turn(w, &next);
  ck_assert_int_eq(only(w)->pid, a.pid);
  write_events(&f, 5);
  f.rings[0].er->seq |= 1;
  for (i = 0; i < 3; i++) (void)drain_turn(w, &next);
  ck_assert_int_eq(only(w)->pid, a.pid);

  b = start_held(tmp, &fb, RING_WORDS);
  name_held(&fb, name, sizeof name);
  t0 = cm_mono_ns();
  do {
    ms_sleep(20);
    now = cm_mono_ns();
    (void)ocgc_watch_poll(w, now);
  } while (only(w)->pid != b.pid && now - t0 < 20000000000u);
  ck_assert_int_eq(only(w)->pid, b.pid);
  ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
  ck_assert_uint_eq(st.evicted, 1);
  ocgc_watch_free(w);
  rg_close(&f);
  rg_close(&fb);
  stop(&a);
  stop(&b);
}
END_TEST

/* ocgc_watch_record: no folder, a pid not watched. */
START_TEST(record_errors)
{
  struct ocgc_watch *w;
  char name[64];
  ck_assert_int_eq(ocgc_watch_new(NULL, &w), 0);
  ck_assert_int_eq(ocgc_watch_record(w, 0, name, sizeof name), -EINVAL);
  ck_assert_int_eq(ocgc_watch_record(w, getpid(), name, sizeof name), -ENOENT);
  ocgc_watch_free(w);
}
END_TEST

/* A ring folder's name of a process the watch served and let go, read
 * more than a second later (a loaded machine reads names late), is no new
 * process and no miss: serve_brief.sh counted a process missed that it had
 * served whole, once in a run beside four builds. */
START_TEST(late_name_of_one_let_go_is_no_miss)
{
  struct child c = start(tmp, P_OK);
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  struct ocgc_watch *w;
  char name[4200];
  pid_t pid = c.pid;
  int k;
  o.all = 1;
  o.dir = tmp;
  ck_assert_int_eq(ocgc_watch_new(&o, &w), 0);
  for (k = 0; k < 500 && ocgc_watch_next(w, NULL) == NULL; k++) {
    ocgc_watch_poll(w, cm_mono_ns());
    ms_sleep(10);
  }
  ck_assert_ptr_nonnull(ocgc_watch_next(w, NULL));
  stop(&c);
  for (k = 0; k < 500 && ocgc_watch_next(w, NULL) != NULL; k++) {
    ocgc_watch_poll(w, cm_mono_ns());
    ms_sleep(10);
  }
  ck_assert_ptr_null(ocgc_watch_next(w, NULL)); /* let go */
  ms_sleep(1200);
  snprintf(name, sizeof name, "%s/%d.events", tmp, (int)pid);
  unlink(name);
  ck_assert_int_eq(symlink("nowhere", name), 0);
  for (k = 0; k < 20; k++) {
    ocgc_watch_poll(w, cm_mono_ns());
    ms_sleep(10);
  }
  ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
  ck_assert_uint_eq(st.missed, 0);
  ocgc_watch_free(w);
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------------- */

Suite *watch_suite(void);
Suite *watch_suite(void)
{
  Suite *s = suite_create("watch");
  TCase *tc = tcase_create("follow");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, watch_follows_and_lets_go);
  tcase_add_test(tc, watch_tells_every_going);
  tcase_add_test(tc, watch_opts_and_figures);
  tcase_add_test(tc, record_errors);
  tcase_add_test(tc, late_name_of_one_let_go_is_no_miss);
  suite_add_tcase(s, tc);

  tc = tcase_create("schedule");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, schedule_follows_the_ring);
  tcase_add_test(tc, stuck_ring_backs_off);
  suite_add_tcase(s, tc);

  tc = tcase_create("figures");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, counters_never_go_back);
  suite_add_tcase(s, tc);

  tc = tcase_create("bounds");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, bounds_refuse_and_remember, 0, 2);
  tcase_add_test(tc, failing_ring_gives_way);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(watch_suite);
