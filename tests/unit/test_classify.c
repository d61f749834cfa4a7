/* test_classify.c - what events mean (classify.c): the cause a counter or
 * a "ocgc.cause.<name>" user int announces, the kind of collection a phase
 * is, in OCaml 5.2's and 5.3's numberings, on bare events and on events
 * as a cursor delivers them.  The files are written by ringgen
 * (ringfix.h). */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "testutil.h"

static struct ocgc_event rt_event(unsigned type, unsigned id)
{
  struct ocgc_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.id = id;
  ev.value = 1;
  return ev;
}

static struct ocgc_event user_event(unsigned type, unsigned slot)
{
  struct ocgc_event ev = rt_event(type, slot);
  ev.user = 1;
  return ev;
}

/* ---- causes ------------------------------------------------------------------------------- */

/* 5.2 cause counters map to causes; other counters and types do not. */
START_TEST(cause_of_counters)
{
  struct ocgc_source *s = rf_open(rf_file(1, 1, 64), OCGC_IDS_AUTO);
  struct ocgc_event ev;
  unsigned id, c;

  for (id = 0; id < 64; id++) {
    int want = -1;
    ev = rt_event(OCGC_RT_COUNTER, id);
    for (c = 0; c < OCGC_CAUSE_COUNT; c++)
      if (ocgc_cause_counter(c) == (int)id) want = (int)c;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), want);
    ev.type = OCGC_RT_BEGIN;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
    ev.type = OCGC_RT_LIFECYCLE;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  }
  ev = rt_event(OCGC_RT_COUNTER, OCGC_CT_FORCE_MINOR_ALLOC_SMALL);
  ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_MINOR_HEAP_FULL);
  ev.id = OCGC_CT_REQUEST_MAJOR_ALLOC_SHR;
  ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_ALLOC_SHR);
  ev.id = OCGC_CT_MINOR_PROMOTED;
  ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  ck_assert_int_eq(ocgc_event_cause(NULL, &ev), -1);
  ck_assert_int_eq(ocgc_event_cause(s, NULL), -1);
}
END_TEST

/* "ocgc.cause.<name>" user ints map to causes, by name, wherever the slot. */
START_TEST(cause_of_user_events)
{
  struct tf *t = rf_file(1, 1, 64);
  struct ocgc_source *s;
  struct ocgc_event ev;
  unsigned c;
  char name[128];

  for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
    snprintf(name, sizeof name, "%s%s", OCGC_UEV_CAUSE_PREFIX, ocgc_cause_name(c));
    rg_set_name(&t->f, 100 + 3 * c, name);
  }
  rg_set_name(&t->f, 10, "ocgc.cause.nope");
  rg_set_name(&t->f, 11, "ocgc.cause.");
  rg_set_name(&t->f, 12, "ocgc.cause.weakx");
  rg_set_name(&t->f, 13, "ocgc.cause");
  rg_set_name(&t->f, 14, "xocgc.cause.weak");
  rg_set_name(&t->f, 15, OCGC_UEV_HEAP_GROW);
  rg_set_name(&t->f, 8191, "ocgc.cause.explicit");
  s = rf_open(t, OCGC_IDS_AUTO);
  for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
    ev = user_event(OCGC_USER_INT, 100 + 3 * c);
    ck_assert_int_eq(ocgc_event_cause(s, &ev), (int)c);
    ck_assert_int_eq(ocgc_event_cause(s, &ev), (int)c); /* cached */
    ev.type = OCGC_USER_UNIT; /* only int events announce causes */
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
    ev.type = OCGC_USER_SPAN_BEGIN;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  }
  for (c = 10; c <= 15; c++) {
    ev = user_event(OCGC_USER_INT, c);
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  }
  ev = user_event(OCGC_USER_INT, 8191);
  ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_EXPLICIT);
  /* an empty slot, registered after the first look */
  ev = user_event(OCGC_USER_INT, 50);
  ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  rg_set_name(&t->f, 50, "ocgc.cause.memprof");
  ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_MEMPROF);
  /* a runtime counter with the id of a cause slot is not a user event */
  ev = rt_event(OCGC_RT_COUNTER, 100 + 3 * OCGC_CAUSE_WEAK);
  ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
}
END_TEST

/* What each user slot means, by its name, one cache per source for causes
 * and meanings alike: the producer's names, "ocgc.cause." names this
 * library does not know (a cause, which one unknown), a program's own
 * names, runtime events (no meaning), a slot named after the first look. */
START_TEST(meaning_of_user_events)
{
  static const struct { const char *name; enum ocgc_meaning m; } known[] = {
    {OCGC_UEV_STOP_JOIN, OCGC_MEANS_STOP_JOIN},     {OCGC_UEV_SLICE_WORK, OCGC_MEANS_SLICE_WORK},
    {OCGC_UEV_CYCLE_START, OCGC_MEANS_CYCLE_START}, {OCGC_UEV_CYCLE_END, OCGC_MEANS_CYCLE_END},
    {OCGC_UEV_FORCED_MAJOR, OCGC_MEANS_FORCED_MAJOR}, {OCGC_UEV_HEAP_GROW, OCGC_MEANS_HEAP_GROW},
    {OCGC_UEV_HEAP_SHRINK, OCGC_MEANS_HEAP_SHRINK}, {OCGC_UEV_DIRECT_ALLOC, OCGC_MEANS_DIRECT_ALLOC},
    {"ocgc.cause.weak", OCGC_MEANS_CAUSE},          {"ocgc.cause.nope", OCGC_MEANS_CAUSE},
    {"ocgc.heap.growing", OCGC_MEANS_OTHER},        {"my.event", OCGC_MEANS_OTHER},
  };
  struct tf *t = rf_file(1, 1, 64);
  struct ocgc_source *s;
  struct ocgc_event ev;
  unsigned k;
  for (k = 0; k < sizeof known / sizeof known[0]; k++) rg_set_name(&t->f, 200 + k, known[k].name);
  s = rf_open(t, OCGC_IDS_AUTO);
  for (k = 0; k < sizeof known / sizeof known[0]; k++) {
    ev = user_event(OCGC_USER_INT, 200 + k);
    TU_CHECK(ocgc_event_meaning(s, &ev) == known[k].m, "%s: %d, want %d", known[k].name,
             (int)ocgc_event_meaning(s, &ev), (int)known[k].m);
    TU_CHECK(ocgc_event_meaning(s, &ev) == known[k].m, "%s, cached", known[k].name);
  }
  ev = user_event(OCGC_USER_INT, 200 + 8); /* ocgc.cause.weak: a cause, and which */
  ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_WEAK);
  ev = user_event(OCGC_USER_INT, 200 + 9); /* ocgc.cause.nope: a cause, not which */
  ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_NONE);
  ev = user_event(OCGC_USER_UNIT, 60);
  ck_assert_int_eq(ocgc_event_meaning(s, &ev), OCGC_MEANS_OTHER);
  rg_set_name(&t->f, 60, OCGC_UEV_STOP_JOIN);
  ck_assert_int_eq(ocgc_event_meaning(s, &ev), OCGC_MEANS_STOP_JOIN);
  ev = rt_event(OCGC_RT_COUNTER, 200);
  ck_assert_int_eq(ocgc_event_meaning(s, &ev), OCGC_MEANS_OTHER);
  ck_assert_int_eq(ocgc_event_meaning(NULL, &ev), OCGC_MEANS_OTHER);
  ck_assert_int_eq(ocgc_event_meaning(s, NULL), OCGC_MEANS_OTHER);
}
END_TEST

/* ---- kinds -------------------------------------------------------------------------------- */

struct kind_want {
  unsigned id;
  int kind;
};

static void check_kinds(struct ocgc_source *s, const struct kind_want *w, unsigned nw)
{
  unsigned id, k;
  for (id = 0; id < 8192; id++) {
    struct ocgc_event ev = rt_event(OCGC_RT_BEGIN, id);
    int want = -1, begin = -1;
    for (k = 0; k < nw; k++)
      if (w[k].id == id) want = w[k].kind;
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == want, "phase %u begin: %d, want %d", id,
             ocgc_event_kind(s, &ev, &begin), want);
    TU_CHECK(want < 0 || begin == 1, "phase %u begin: begin %d", id, begin);
    ev.type = OCGC_RT_END;
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == want, "phase %u end", id);
    TU_CHECK(want < 0 || begin == 0, "phase %u end: begin %d", id, begin);
    TU_CHECK(ocgc_event_kind(s, &ev, NULL) == want, "phase %u end, begin NULL", id);
    ev.type = OCGC_RT_COUNTER;
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == -1, "counter %u has a kind", id);
    ev.type = OCGC_RT_LIFECYCLE;
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == -1, "lifecycle %u has a kind", id);
    ev = user_event(OCGC_USER_SPAN_BEGIN, id);
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == -1, "user span %u has a kind", id);
  }
}

/* The numbering a source says it uses. */
static int ids_of(struct ocgc_source *s)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  return info.ids;
}

/* Phases map to kinds by name, per numbering: 5.2 by default, 5.3 when a
 * stock file is opened with OCGC_IDS_53 (the memprof phases shift them). */
START_TEST(kind_of_phases)
{
  static const struct kind_want k52[] = {
    {10, OCGC_KIND_MINOR}, {24, OCGC_KIND_MAJOR_SLICE},
    {25, OCGC_KIND_MAJOR_FINISH}, {40, OCGC_KIND_COMPACTION},
  };
  static const struct kind_want k53[] = {
    {11, OCGC_KIND_MINOR}, {27, OCGC_KIND_MAJOR_SLICE},
    {28, OCGC_KIND_MAJOR_FINISH}, {44, OCGC_KIND_COMPACTION},
  };
  struct tf *stock = rf_file(0, 1, 64);
  struct ocgc_source *s;
  struct ocgc_event ev = rt_event(OCGC_RT_BEGIN, OCGC_PH_MINOR);
  int begin = 7;

  ck_assert_uint_eq(k52[0].id, OCGC_PH_MINOR);
  ck_assert_uint_eq(k52[1].id, OCGC_PH_MAJOR_SLICE);
  ck_assert_uint_eq(k52[2].id, OCGC_PH_MAJOR_FINISH_CYCLE);
  ck_assert_uint_eq(k52[3].id, OCGC_PH_COMPACT);

  /* stock file, default and explicit 5.2 */
  s = rf_open(stock, OCGC_IDS_AUTO);
  check_kinds(s, k52, 4);
  ck_assert_int_eq(ids_of(s), OCGC_IDS_52);
  check_kinds(rf_open(stock, OCGC_IDS_52), k52, 4);
  /* stock file written by 5.3 */
  s = rf_open(stock, OCGC_IDS_53);
  check_kinds(s, k53, 4);
  ck_assert_int_eq(ids_of(s), OCGC_IDS_53);

  /* ocgc files are always 5.2-numbered, whatever the caller says */
  s = rf_open(rf_file(1, 1, 64), OCGC_IDS_53);
  check_kinds(s, k52, 4);
  ck_assert_int_eq(ids_of(s), OCGC_IDS_52);
  ck_assert_int_eq(ocgc_event_kind(NULL, &ev, &begin), -1);
  ck_assert_int_eq(ocgc_event_kind(s, NULL, &begin), -1);
}
END_TEST

/* ---- on delivered events --------------------------------------------------------------------- */

struct classify_ctx {
  struct ocgc_source *s;
  int causes[8], kinds[8], begins[8];
  unsigned n;
};

static int classify_event(const struct ocgc_event *ev, void *p)
{
  struct classify_ctx *x = p;
  if (x->n < 8) {
    x->causes[x->n] = ocgc_event_cause(x->s, ev);
    x->begins[x->n] = -1;
    x->kinds[x->n] = ocgc_event_kind(x->s, ev, &x->begins[x->n]);
  }
  x->n++;
  return 0;
}

/* Classification on events as a cursor delivers them. */
START_TEST(classify_delivered_events)
{
  struct tf *t = rf_file(1, 1, 256);
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c;
  struct classify_ctx x;

  memset(&x, 0, sizeof x);
  rg_set_name(&t->f, 7, "ocgc.cause.explicit");
  rg_write1(&t->f, 0, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_FORCE_MINOR_ALLOC_SMALL), 1, 1);
  rg_write1(&t->f, 0, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR), 1, 0);
  rg_write1(&t->f, 0, OCGC_EV_HEADER(2, 0, OCGC_RT_END, OCGC_PH_MINOR), 2, 0);
  rg_write1(&t->f, 0, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 7), 3, 1);
  rg_write1(&t->f, 0, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_COMPACT), 3, 0);
  x.s = rf_open(t, OCGC_IDS_AUTO);
  o.on_event = classify_event;
  o.ctx = &x;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_cursor_new(x.s, &o, &c), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 5);
  ck_assert_int_eq(x.causes[0], OCGC_CAUSE_MINOR_HEAP_FULL);
  ck_assert_int_eq(x.kinds[0], -1);
  ck_assert_int_eq(x.kinds[1], OCGC_KIND_MINOR);
  ck_assert_int_eq(x.begins[1], 1);
  ck_assert_int_eq(x.kinds[2], OCGC_KIND_MINOR);
  ck_assert_int_eq(x.begins[2], 0);
  ck_assert_int_eq(x.causes[3], OCGC_CAUSE_EXPLICIT);
  ck_assert_int_eq(x.kinds[4], OCGC_KIND_COMPACTION);
  ocgc_cursor_free(c);
}
END_TEST

static Suite *classify_suite(void)
{
  Suite *s = suite_create("classify");
  TCase *tc = rf_tcase(s, "classify", 0);
  tcase_add_test(tc, cause_of_counters);
  tcase_add_test(tc, cause_of_user_events);
  tcase_add_test(tc, meaning_of_user_events);
  tcase_add_test(tc, kind_of_phases);
  tcase_add_test(tc, classify_delivered_events);
  return s;
}

TU_SUITE(classify_suite);
