/* test_agg.c - the aggregator: pairing, pauses, per-kind and per-phase
 * histograms, the cause table, counters (exact from totals, or from the
 * events), rates between snapshots, on rings written by ringgen (their
 * fixture: aggfix.c).  The interval recorders are test_interval.c's. */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "aggfix.h"
#include "ringgen.h"
#include "testutil.h"

/* A file without stop marks (stock OCaml 5): nothing proves that two
 * collections are one stop, however close, so each is a pause. */
START_TEST(unmarked_collections_are_pauses_of_their_own)
{
  struct tf t;
  struct ocgc_snapshot *s;
  const struct ocgc_hist *h;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  tf_create(&t, 0, 4096);
  minor(&t, 1000, 1100, 800, 80);
  slice(&t, 1105, 1300);           /* 5 ns later, but no mark */
  minor(&t, 5000000, 5000050, 800, 8);
  tf_open(&t);
  s = snap(&t);
  h = ocgc_snapshot_pauses(s);
  ck_assert_uint_eq(ocgc_hist_count(h), 3);
  ck_assert_uint_eq(ocgc_hist_max(h), 195);
  ck_assert_uint_eq(ocgc_hist_min(h), 50);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_kind(s, OCGC_KIND_MINOR)), 2);
  ck_assert_uint_eq(ocgc_hist_max(ocgc_snapshot_kind(s, OCGC_KIND_MINOR)), 100);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_kind(s, OCGC_KIND_MAJOR_SLICE)), 1);
  ck_assert_uint_eq(ocgc_hist_max(ocgc_snapshot_kind(s, OCGC_KIND_MAJOR_SLICE)), 195);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_phase(s, OCGC_PH_MINOR_LOCAL_ROOTS)), 2);
  ck_assert_uint_eq(ocgc_hist_max(ocgc_snapshot_phase(s, OCGC_PH_MINOR_LOCAL_ROOTS)), 10);
  ck_assert_ptr_null(ocgc_snapshot_phase(s, OCGC_PH_COMPACT));
  ocgc_snapshot_counters(s, &c);
  ck_assert_int_eq(c.pause_rule, OCGC_PAUSE_NESTING);
  ck_assert_uint_eq(c.pauses, 3);
  ck_assert_uint_eq(c.gc_time_ns, 345);
  ck_assert_uint_eq(c.collections[OCGC_KIND_MINOR], 2);
  ck_assert_uint_eq(c.collections[OCGC_KIND_MAJOR_SLICE], 1);
  ck_assert_uint_eq(c.allocated_bytes, 1600);
  ck_assert_uint_eq(c.promoted_bytes, 88);
  ck_assert_int_eq(c.exact, 0);
  ocgc_snapshot_free(s);
  tf_close(&t);
}
END_TEST

/* An ocgc file marks the collections that continue a stop: the minor and
 * the slice of one dispatch are one pause, whose length is the time the
 * two collections took (not the 5 ns of runtime between them), and a mark
 * at another timestamp than its collection's joins nothing. */
START_TEST(marked_stops_are_one_pause)
{
  struct tf t;
  struct ocgc_snapshot *s;
  const struct ocgc_hist *h;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  tf_create(&t, 1, 4096);
  rg_set_name(&t.f, U_STOP_JOIN, OCGC_UEV_STOP_JOIN);
  minor(&t, 1000, 1100, 800, 80);
  rg_write1(&t.f, 0, UNIT(U_STOP_JOIN), 1105, 0);
  slice(&t, 1105, 1300);
  minor(&t, 5000000, 5000050, 800, 8);
  rg_write1(&t.f, 0, UNIT(U_STOP_JOIN), 5000060, 0); /* not at its collection's time */
  slice(&t, 5000070, 5000100);
  tf_open(&t);
  s = snap(&t);
  h = ocgc_snapshot_pauses(s);
  ocgc_snapshot_counters(s, &c);
  ck_assert_int_eq(c.pause_rule, OCGC_PAUSE_MARKS);
  ck_assert_uint_eq(ocgc_hist_count(h), 3);
  ck_assert_uint_eq(c.pauses, 3);
  ck_assert_uint_eq(ocgc_hist_max(h), 295); /* 100 + 195 */
  ck_assert_uint_eq(ocgc_hist_min(h), 30);
  ck_assert_uint_eq(ocgc_hist_sum(h), 100 + 195 + 50 + 30);
  ocgc_snapshot_free(s);
  tf_close(&t);
}
END_TEST

START_TEST(cause_table)
{
  struct tf t;
  struct ocgc_snapshot *s;
  struct ocgc_cause_row row = OCGC_OPTS_INIT(struct ocgc_cause_row);
  tf_create(&t, 0, 4096);
  minor(&t, 1000, 1100, 8, 0);
  minor(&t, 2000000, 2000400, 8, 0);
  slice(&t, 4000000, 4000900);
  rg_write1(&t.f, 0, UINT(U_EXPLICIT), 6000000, 1);
  span(&t, OCGC_PH_MAJOR_FINISH_CYCLE, 6000000, 6005000);
  span(&t, OCGC_PH_COMPACT, 7000000, 7000100); /* no cause before it */
  tf_open(&t);
  s = snap(&t);
  ck_assert_int_eq(ocgc_snapshot_cause(s, OCGC_KIND_MINOR, OCGC_CAUSE_MINOR_HEAP_FULL, &row), 0);
  ck_assert_uint_eq(row.count, 2);
  ck_assert_uint_eq(row.total_ns, 500);
  ck_assert_uint_eq(row.worst_ns, 400);
  ocgc_snapshot_cause(s, OCGC_KIND_MAJOR_SLICE, OCGC_CAUSE_MAJOR_SLICE_DUE, &row);
  ck_assert_uint_eq(row.count, 1);
  ck_assert_uint_eq(row.worst_ns, 900);
  ocgc_snapshot_cause(s, OCGC_KIND_MAJOR_FINISH, OCGC_CAUSE_EXPLICIT, &row);
  ck_assert_uint_eq(row.count, 1);
  ck_assert_uint_eq(row.total_ns, 5000);
  ocgc_snapshot_cause(s, OCGC_KIND_COMPACTION, OCGC_CAUSE_UNKNOWN, &row);
  ck_assert_uint_eq(row.count, 1);
  ck_assert_int_eq(ocgc_snapshot_cause(s, OCGC_KIND_COUNT, 0, &row), -EINVAL);
  ck_assert_int_eq(ocgc_snapshot_cause(s, 0, OCGC_CAUSE_SLOTS, &row), -EINVAL);
  ocgc_snapshot_free(s);
  tf_close(&t);
}
END_TEST

/* ocgc files: counters come from the producer's totals, exactly, even
 * when the ring lost events; the events' own count is kept beside them. */
START_TEST(exact_counters_from_totals)
{
  struct tf t;
  struct ocgc_snapshot *s;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_wire_totals *tot;
  tf_create(&t, 1, 4096);
  minor(&t, 1000, 1100, 800, 80);
  tot = t.f.totals;
  tot->minor_collections = 1234;
  tot->major_slices = 99;
  tot->compactions = 3;
  tot->major_collections = 17;
  tot->forced_major_collections = 5;
  tot->minor_words = 1000;
  tot->promoted_words = 100;
  tot->heap_words = 4096;
  tot->top_heap_words = 8192;
  tot->gc_time_ns = 777;
  tot->by_cause[OCGC_KIND_MAJOR_FINISH][OCGC_CAUSE_EXPLICIT] = 4;
  tot->by_cause[OCGC_KIND_MAJOR_FINISH][OCGC_CAUSE_SHUTDOWN] = 1;
  tf_open(&t);
  s = snap(&t);
  ocgc_snapshot_counters(s, &c);
  ck_assert_int_eq(c.exact, 1);
  ck_assert_uint_eq(c.collections[OCGC_KIND_MINOR], 1234);
  ck_assert_uint_eq(c.collections[OCGC_KIND_MAJOR_SLICE], 99);
  ck_assert_uint_eq(c.collections[OCGC_KIND_MAJOR_FINISH], 5);
  ck_assert_uint_eq(c.collections[OCGC_KIND_COMPACTION], 3);
  ck_assert_uint_eq(c.major_cycles, 17);
  ck_assert_uint_eq(c.forced_majors, 5);
  ck_assert_uint_eq(c.allocated_bytes, 8000);
  ck_assert_uint_eq(c.promoted_bytes, 800);
  ck_assert_uint_eq(c.heap_bytes, 32768);
  ck_assert_uint_eq(c.top_heap_bytes, 65536);
  ck_assert_uint_eq(c.gc_time_ns, 777);
  ck_assert_uint_eq(c.event_collections[OCGC_KIND_MINOR], 1);
  ck_assert_uint_eq(c.events_seen, 7); /* minor() writes 7 events */
  ocgc_snapshot_free(s);
  tf_close(&t);
}
END_TEST

/* Stock files: cycles and heap from the ocgc user events, if any. */
START_TEST(counters_from_events)
{
  struct tf t;
  struct ocgc_snapshot *s;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  tf_create(&t, 0, 4096);
  rg_write1(&t.f, 0, UINT(U_HEAP_GROW), 10, 1000);
  rg_write1(&t.f, 0, UINT(U_CYCLE_END), 20, 1);
  rg_write1(&t.f, 0, UINT(U_CYCLE_END), 30, 2);
  rg_write1(&t.f, 0, UINT(U_HEAP_GROW), 40, 500);
  tf_open(&t);
  s = snap(&t);
  ocgc_snapshot_counters(s, &c);
  ck_assert_uint_eq(c.major_cycles, 2);
  ck_assert_uint_eq(c.heap_bytes, 4000);
  ck_assert_uint_eq(c.top_heap_bytes, 8000);
  ck_assert_uint_eq(c.time_ns, 40);
  ocgc_snapshot_free(s);
  tf_close(&t);
}
END_TEST

START_TEST(rates_between_snapshots)
{
  struct tf t;
  struct ocgc_snapshot *s1, *s2;
  struct ocgc_rates r = OCGC_OPTS_INIT(struct ocgc_rates);
  tf_create(&t, 0, 4096);
  minor(&t, 1000000000, 1000001000, 1000, 100);
  tf_open(&t);
  s1 = snap(&t);
  /* two seconds later: 4 minors, 1 slice, 8000 bytes allocated, 2000 promoted */
  minor(&t, 2000000000, 2000002000, 2000, 500);
  minor(&t, 2100000000, 2100002000, 2000, 500);
  minor(&t, 2200000000, 2200002000, 2000, 500);
  minor(&t, 2900000000, 2900002000, 2000, 500);
  slice(&t, 3000000000, 3000002000);
  s2 = snap(&t);
  ck_assert_int_eq(ocgc_snapshot_rates(s1, s2, &r), 0);
  ck_assert(r.seconds > 2.0 - 1e-9 && r.seconds < 2.000003);
  ck_assert(r.collections_per_s[OCGC_KIND_MINOR] > 1.99 && r.collections_per_s[OCGC_KIND_MINOR] < 2.01);
  ck_assert(r.collections_per_s[OCGC_KIND_MAJOR_SLICE] > 0.49 && r.collections_per_s[OCGC_KIND_MAJOR_SLICE] < 0.51);
  ck_assert(r.allocated_bytes_per_s > 3999 && r.allocated_bytes_per_s < 4001);
  ck_assert(r.promotion_ratio > 0.2499 && r.promotion_ratio < 0.2501);
  /* 5 pauses of 2 us in 2 s (the first snapshot already held the first) */
  ck_assert(r.gc_time_share > 4.9e-6 && r.gc_time_share < 5.1e-6);
  ck_assert_int_eq(ocgc_snapshot_rates(s2, s1, &r), -EINVAL);
  ocgc_snapshot_free(s1);
  ocgc_snapshot_free(s2);
  tf_close(&t);
}
END_TEST

/* A snapshot is a copy: later events do not change it; and a pause counted
 * provisionally in one snapshot is counted once in the next. */
START_TEST(snapshots_are_copies)
{
  struct tf t;
  struct ocgc_snapshot *s1, *s2;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  tf_create(&t, 0, 4096);
  minor(&t, 1000, 1100, 8, 0);
  tf_open(&t);
  s1 = snap(&t);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(s1)), 1);
  minor(&t, 9000000, 9000100, 8, 0);
  s2 = snap(&t);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(s1)), 1);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_kind(s1, OCGC_KIND_MINOR)), 1);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(s2)), 2);
  ocgc_snapshot_counters(s2, &c);
  ck_assert_uint_eq(c.pauses, 2);
  ocgc_snapshot_free(s1);
  ocgc_snapshot_free(s2);
  tf_close(&t);
}
END_TEST

/* Two snapshots hold the same histograms and counts. */
static void check_same_snapshot(const struct ocgc_snapshot *a, const struct ocgc_snapshot *b)
{
  const struct ocgc_hist *ha[2 + OCGC_KIND_COUNT], *hb[2 + OCGC_KIND_COUNT];
  struct ocgc_counters ca = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_counters cb = OCGC_OPTS_INIT(struct ocgc_counters);
  unsigned k;
  ha[0] = ocgc_snapshot_pauses(a), hb[0] = ocgc_snapshot_pauses(b);
  ha[1] = ocgc_snapshot_phase(a, OCGC_PH_MINOR), hb[1] = ocgc_snapshot_phase(b, OCGC_PH_MINOR);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    ha[2 + k] = ocgc_snapshot_kind(a, k), hb[2 + k] = ocgc_snapshot_kind(b, k);
  for (k = 0; k < 2 + OCGC_KIND_COUNT; k++) {
    ck_assert_uint_eq(ocgc_hist_count(ha[k]), ocgc_hist_count(hb[k]));
    ck_assert_uint_eq(ocgc_hist_sum(ha[k]), ocgc_hist_sum(hb[k]));
    ck_assert_uint_eq(ocgc_hist_count_le(ha[k], 150), ocgc_hist_count_le(hb[k], 150));
    ck_assert_uint_eq(ocgc_hist_count_le(ha[k], 5000), ocgc_hist_count_le(hb[k], 5000));
  }
  ocgc_snapshot_counters(a, &ca);
  ocgc_snapshot_counters(b, &cb);
  ck_assert_uint_eq(ca.pauses, cb.pauses);
  ck_assert_uint_eq(ca.gc_time_ns, cb.gc_time_ns);
  ck_assert_mem_eq(ca.collections, cb.collections, sizeof ca.collections);
  ck_assert_uint_eq(ca.events_seen, cb.events_seen);
}

/* A snapshot brought up to date in place (made when NULL, then reused as
 * the aggregator goes on, with more phases, longer spans and a pending
 * pause) holds what a fresh one holds; with no_phases there is no phase
 * histogram, and the rest is the same. */
START_TEST(snapshot_update_equals_fresh)
{
  struct tf t;
  struct ocgc_snapshot *u = NULL, *fresh, *np_snap;
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_agg *np;
  tf_create(&t, 0, 4096);
  minor(&t, 1000, 1100, 8, 0);
  tf_open(&t);
  o.no_phases = 1;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &np), 0);
  fresh = snap(&t);
  ck_assert_int_eq(ocgc_agg_snapshot_update(t.agg, &u), 0);
  ck_assert_ptr_nonnull(u);
  check_same_snapshot(u, fresh);
  ocgc_snapshot_free(fresh);
  minor(&t, 9000000, 9004000, 8, 0);
  slice(&t, 9004000, 9004100);
  minor(&t, 20000000, 20000050, 8, 0);
  fresh = snap(&t);
  ck_assert_int_eq(ocgc_agg_snapshot_update(t.agg, &u), 0);
  check_same_snapshot(u, fresh);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(u)), 4); /* no marks: the slice is one */
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_phase(u, OCGC_PH_MINOR)), 3);
  ck_assert_int_ge(ocgc_agg_poll(np), 0);
  np_snap = NULL;
  ck_assert_int_eq(ocgc_agg_snapshot_update(np, &np_snap), 0);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_phase(np_snap, OCGC_PH_MINOR)), 0);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(np_snap)), 4);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_kind(np_snap, OCGC_KIND_MAJOR_SLICE)), 1);
  ck_assert_int_eq(ocgc_agg_snapshot_update(NULL, &u), -EINVAL);
  ck_assert_int_eq(ocgc_agg_snapshot_update(t.agg, NULL), -EINVAL);
  ocgc_snapshot_free(fresh);
  ocgc_snapshot_free(u);
  ocgc_snapshot_free(np_snap);
  ocgc_agg_free(np);
  tf_close(&t);
}
END_TEST

/* Fixed-bucket counts: exact at the caller's bounds (a value on a bound
 * counts under it), with or without the fine histograms; bad bounds are
 * refused, and an aggregator without bounds has no bucket counts. */
START_TEST(bucket_counts_at_bounds)
{
  static const uint64_t bounds[] = {100, 1000, 5000};
  struct tf t;
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_agg *only, *both;
  struct ocgc_snapshot *so = NULL, *sb = NULL;
  struct ocgc_bucket_counts b = OCGC_OPTS_INIT(struct ocgc_bucket_counts);
  uint64_t bad[] = {5, 5};
  int i;
  tf_create(&t, 0, 4096);
  minor(&t, 1000, 1100, 8, 0);          /* pauses (no marks: one each): 100 */
  minor(&t, 9000000, 9004000, 8, 0);    /* 4000 */
  slice(&t, 9004000, 9004100);          /* 100 */
  minor(&t, 20000000, 20000050, 8, 0);  /* 50 */
  tf_open(&t);
  o.bounds_ns = bounds;
  o.nbounds = 3;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &both), 0);
  o.bounds_only = 1;
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &only), 0);
  ck_assert_int_ge(ocgc_agg_poll(only), 0);
  ck_assert_int_ge(ocgc_agg_poll(both), 0);
  ck_assert_int_eq(ocgc_agg_snapshot_update(only, &so), 0);
  ck_assert_int_eq(ocgc_agg_snapshot_update(both, &sb), 0);
  for (i = 0; i < 2; i++) {
    const struct ocgc_snapshot *s = i ? sb : so;
    ck_assert_int_eq(ocgc_snapshot_pause_buckets(s, &b), 0);
    ck_assert_uint_eq(b.nbounds, 3);
    ck_assert_uint_eq(b.count, 4);
    ck_assert_uint_eq(b.sum_ns, 4250);
    ck_assert_uint_eq(b.le[0], 3);
    ck_assert_uint_eq(b.le[1], 3);
    ck_assert_uint_eq(b.le[2], 4);
    ck_assert_int_eq(ocgc_snapshot_kind_buckets(s, OCGC_KIND_MINOR, &b), 0);
    ck_assert_uint_eq(b.count, 3);
    ck_assert_uint_eq(b.le[0], 2);
    ck_assert_uint_eq(b.le[2], 3);
    ck_assert_int_eq(ocgc_snapshot_kind_buckets(s, OCGC_KIND_MAJOR_SLICE, &b), 0);
    ck_assert_uint_eq(b.le[0], 1);
  }
  /* bounds_only: no fine histograms; with both, the same counts in them */
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(so)), 0);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(sb)), 4);
  ck_assert_int_eq(ocgc_snapshot_kind_buckets(so, OCGC_KIND_COUNT, &b), -EINVAL);
  ck_assert_int_eq(ocgc_snapshot_pause_buckets(NULL, &b), -EINVAL);
  ocgc_snapshot_free(so);
  ocgc_snapshot_free(sb);
  so = NULL;
  ck_assert_int_eq(ocgc_agg_snapshot_update(t.agg, &so), 0);
  ck_assert_int_eq(ocgc_snapshot_pause_buckets(so, &b), -ENODATA);
  ocgc_snapshot_free(so);
  ocgc_agg_free(only);
  ocgc_agg_free(both);

  o.bounds_ns = bad; /* not strictly ascending */
  o.nbounds = 2;
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &only), -EINVAL);
  o.bounds_ns = NULL;
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &only), -EINVAL);
  o.nbounds = 0; /* bounds_only without bounds */
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &only), -EINVAL);
  o.bounds_ns = bounds;
  o.nbounds = OCGC_MAX_BOUNDS + 1;
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &only), -EINVAL);
  tf_close(&t);
}
END_TEST

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A stock file followed from now on: the first snapshot, before any event,
 * is timed at the attach, so the first window is the time since the
 * attach, not since the clock's origin (the machine's uptime: `ocgc stat`'s
 * first row against a stock OCaml 5 process said interval_s 4025). */
START_TEST(first_window_starts_at_attach)
{
  struct tf t;
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_agg *agg;
  struct ocgc_snapshot *s1, *s2;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_rates r = OCGC_OPTS_INIT(struct ocgc_rates);
  uint64_t t0;
  tf_create(&t, 0, 4096);
  tf_open(&t);
  o.start = OCGC_START_NOW;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &agg), 0);
  t0 = now_ns();
  ck_assert_int_ge(ocgc_agg_poll(agg), 0);
  ck_assert_int_eq(ocgc_agg_snapshot(agg, &s1), 0);
  ocgc_snapshot_counters(s1, &c);
  ck_assert_uint_ge(c.time_ns, t0);
  ck_assert_uint_le(c.time_ns, now_ns());
  minor(&t, now_ns() + 1000000, now_ns() + 1001000, 8, 0);
  ck_assert_int_ge(ocgc_agg_poll(agg), 0);
  ck_assert_int_eq(ocgc_agg_snapshot(agg, &s2), 0);
  ck_assert_int_eq(ocgc_snapshot_rates(s1, s2, &r), 0);
  ck_assert_msg(r.seconds > 0 && r.seconds < 10, "first window %g s", r.seconds);
  ocgc_snapshot_free(s1);
  ocgc_snapshot_free(s2);
  ocgc_agg_free(agg);
  tf_close(&t);
}
END_TEST

/* Lost events: nothing is paired across the gap, nothing crashes, and the
 * spans after it pair again. */
START_TEST(no_pairing_across_loss)
{
  struct tf t;
  struct ocgc_snapshot *s;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  uint64_t i;
  tf_create(&t, 1, 64);
  tf_open(&t);
  rg_write1(&t.f, 0, SPAN(1, OCGC_PH_MINOR), 100, 0); /* its end is never read */
  ck_assert_int_ge(ocgc_agg_poll(t.agg), 0);
  for (i = 0; i < 200; i++) rg_write1(&t.f, 0, COUNTER(OCGC_CT_MINOR_ALLOCATED), 200 + i, 8);
  rg_write1(&t.f, 0, SPAN(0, OCGC_PH_MINOR), 1000, 0);
  span(&t, OCGC_PH_MAJOR_SLICE, 5000000, 5000100);
  s = snap(&t);
  ocgc_snapshot_counters(s, &c);
  ck_assert_uint_gt(c.events_lost, 0);
  ck_assert_int_eq(c.lost_exact, 1);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_kind(s, OCGC_KIND_MINOR)), 0);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_kind(s, OCGC_KIND_MAJOR_SLICE)), 1);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(s)), 1);
  ocgc_snapshot_free(s);
  tf_close(&t);
}
END_TEST

/* RING_STOP ends the last pause for good. */
START_TEST(ring_stop_closes_pause)
{
  struct tf t;
  struct ocgc_snapshot *s;
  tf_create(&t, 0, 4096);
  minor(&t, 1000, 1100, 8, 0);
  rg_write1(&t.f, 0, OCGC_EV_HEADER(2, 0, OCGC_RT_LIFECYCLE, OCGC_LC_RING_STOP), 2000, 0);
  tf_open(&t);
  s = snap(&t);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(s)), 1);
  ocgc_snapshot_free(s);
  s = snap(&t);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(s)), 1);
  ocgc_snapshot_free(s);
  tf_close(&t);
}
END_TEST

/* A span that ends before it begins is no duration: the poll says
 * corrupt, the span is dropped, the rest is counted. */
START_TEST(end_before_begin_is_corrupt)
{
  struct tf t;
  struct ocgc_snapshot *s;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  tf_create(&t, 0, 4096);
  minor(&t, 1000, 1100, 800, 80);
  rg_write1(&t.f, 0, SPAN(1, OCGC_PH_MINOR), 5000, 0);
  rg_write1(&t.f, 0, SPAN(0, OCGC_PH_MINOR), 4000, 0); /* 1.8e19 ns, as unsigned */
  minor(&t, 6000, 6100, 800, 80);
  tf_open(&t);
  ck_assert_int_eq(ocgc_agg_poll(t.agg), OCGC_E_CORRUPT);
  ocgc_agg_cursor_stats(t.agg, &st);
  ck_assert_uint_eq(st.corrupt, 1);
  ck_assert_int_ge(ocgc_agg_poll(t.agg), 0);
  ck_assert_int_eq(ocgc_agg_snapshot(t.agg, &s), 0);
  ocgc_snapshot_counters(s, &c);
  ck_assert_uint_eq(c.event_collections[OCGC_KIND_MINOR], 2);
  ck_assert_uint_eq(ocgc_hist_max(ocgc_snapshot_kind(s, OCGC_KIND_MINOR)), 100);
  ocgc_snapshot_free(s);
  tf_close(&t);
}
END_TEST

static Suite *agg_suite(void)
{
  Suite *s = suite_create("agg");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, af_setup, af_teardown);
  tcase_add_test(tc, unmarked_collections_are_pauses_of_their_own);
  tcase_add_test(tc, marked_stops_are_one_pause);
  tcase_add_test(tc, cause_table);
  tcase_add_test(tc, exact_counters_from_totals);
  tcase_add_test(tc, counters_from_events);
  tcase_add_test(tc, rates_between_snapshots);
  tcase_add_test(tc, snapshots_are_copies);
  tcase_add_test(tc, snapshot_update_equals_fresh);
  tcase_add_test(tc, bucket_counts_at_bounds);
  tcase_add_test(tc, first_window_starts_at_attach);
  tcase_add_test(tc, no_pairing_across_loss);
  tcase_add_test(tc, ring_stop_closes_pause);
  tcase_add_test(tc, end_before_begin_is_corrupt);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(agg_suite);
