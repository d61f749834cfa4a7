/* test_counters.c - the counters' table (OCGC_COUNTER_FIELDS) and the
 * rule that loops over it: every monotone count grows by
 * ocgc_counters_growth (rates.c), the rest being the newer's.  That a
 * watch's counters never go back, every monotone count of them, is
 * test_watch.c's counters_never_go_back. */
#include <check.h>

#include "ocgc/consumer.h"
#include "testutil.h"

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

static Suite *counters_suite(void)
{
  Suite *s = suite_create("counters");
  TCase *tc = tcase_create("growth");
  tcase_add_test(tc, growth_by_kind);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(counters_suite);
