/* test_opts.c - the one options rule (libconsumer/opts.h), in every
 * constructor that takes an options struct: a caller's struct larger than
 * the library's is taken when what lies past the library's end is zero,
 * and refused (-EINVAL, nothing made) when it is not: a newer caller that
 * asks for something this library does not know is told, not ignored.
 * An sz smaller than sz itself is refused too.  Output structs are filled
 * as far as their sz says. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringfix.h"
#include "testutil.h"

/* A caller's struct of type T followed by one field this library does not
 * know, set to [tail]. */
#define BIGGER(T, name, tail)          \
  struct {                             \
    T o;                               \
    uint64_t newer;                    \
  } name;                              \
  memset(&name, 0, sizeof name);       \
  name.o.sz = sizeof name;             \
  name.newer = (tail)

static int list_none(const struct ocgc_list_entry *e, void *ctx)
{
  (void)e;
  (void)ctx;
  return 1;
}

START_TEST(every_constructor_reads_options_one_way)
{
  struct tf *t = rf_file(1, 1, 256);
  struct ocgc_source *s = NULL, *s2 = NULL;
  struct ocgc_cursor *cur = NULL;
  struct ocgc_stream *st = NULL;
  struct ocgc_agg *agg = NULL;
  unsigned tail;

  for (tail = 0; tail < 2; tail++) {
    int want = tail ? -EINVAL : 0;
    BIGGER(struct ocgc_open_opts, oo, tail);
    BIGGER(struct ocgc_cursor_opts, co, tail);
    BIGGER(struct ocgc_stream_opts, so, tail);
    BIGGER(struct ocgc_agg_opts, ao, tail);
    BIGGER(struct ocgc_attach_opts, at, tail);
    BIGGER(struct ocgc_list_opts, lo, tail);
    ck_assert_int_eq(ocgc_source_open_path(t->path, &oo.o, &s2), want);
    if (s2 != NULL) ocgc_source_close(s2);
    s2 = NULL;
    s = rf_open(t, OCGC_IDS_AUTO);
    ck_assert_int_eq(ocgc_cursor_new(s, &co.o, &cur), want);
    ck_assert_int_eq(ocgc_stream_new(s, &so.o, &st), want);
    ck_assert_int_eq(ocgc_agg_new(s, &ao.o, &agg), want);
    ck_assert_int_eq(cur == NULL && st == NULL && agg == NULL, tail);
    ocgc_agg_free(agg);
    ocgc_stream_free(st);
    ocgc_cursor_free(cur);
    cur = NULL, st = NULL, agg = NULL;
    /* Refused before any look at the process (this one has no ring). */
    at.o.dir = "/nonexistent";
    ck_assert_int_eq(ocgc_source_open_pid((int)getpid(), &at.o, &s2),
                     tail ? -EINVAL : OCGC_E_NORING);
    ck_assert_int_eq(ocgc_list_opts(&lo.o, list_none, NULL, NULL) >= 0, !tail);
    if (tail) ck_assert_int_eq(ocgc_list_opts(&lo.o, list_none, NULL, NULL), -EINVAL);
  }
}
END_TEST

/* The CPU sampler's and the unwinder's options, the same way (the sampler
 * of this very process: open, or refused for want of perf events). */
START_TEST(cpu_and_unwind_options)
{
  struct ocgc_symbols *names = NULL;
  struct ocgc_unwind *u = NULL;
  struct ocgc_cpu *c = NULL;
  unsigned tail;
  int r;
  ck_assert_int_eq(ocgc_symbols_open_pid((int)getpid(), 0, NULL, &names), 0);
  for (tail = 0; tail < 2; tail++) {
    BIGGER(struct ocgc_cpu_opts, cp, tail);
    BIGGER(struct ocgc_unwind_opts, uo, tail);
    r = ocgc_cpu_open((int)getpid(), 0, &cp.o, &c);
    if (tail) ck_assert_int_eq(r, -EINVAL);
    else ck_assert(r == 0 || r == OCGC_E_PERF_DENIED || r == -ENOTSUP);
    ck_assert_int_eq(c == NULL, r != 0);
    ocgc_cpu_close(c);
    c = NULL;
    ck_assert_int_eq(ocgc_unwind_open(names, -1, &uo.o, &u), tail ? -EINVAL : 0);
    ck_assert_int_eq(u == NULL, tail);
    ocgc_unwind_close(u);
    u = NULL;
  }
  ocgc_symbols_close(names);
}
END_TEST

/* A CPU profile's options and its pprof writer's, the same way. */
START_TEST(cpuprof_options)
{
  struct ocgc_cpuprof_stats ps;
  struct ocgc_cpuprof *p = NULL, *q = NULL;
  unsigned char *out = NULL;
  size_t len = 0;
  unsigned tail;
  for (tail = 0; tail < 2; tail++) {
    BIGGER(struct ocgc_cpuprof_opts, po, tail);
    BIGGER(struct ocgc_cpuprof_pprof_opts, wo, tail);
    ck_assert_int_eq(ocgc_cpuprof_new(NULL, &po.o, &q), tail ? -EINVAL : 0);
    ck_assert_int_eq(q == NULL, tail);
    ocgc_cpuprof_free(q);
    q = NULL;
    if (p == NULL) ck_assert_int_eq(ocgc_cpuprof_new(NULL, NULL, &p), 0);
    ck_assert_int_eq(ocgc_cpuprof_pprof(p, NULL, &wo.o, &out, &len), tail ? -EINVAL : 0);
    ck_assert_int_eq(out == NULL, tail);
    free(out);
    out = NULL;
  }
  memset(&ps, 0xff, sizeof ps);
  ps.sz = offsetof(struct ocgc_cpuprof_stats, gc_samples); /* up to samples */
  ck_assert_int_eq(ocgc_cpuprof_stats(p, &ps), 0);
  ck_assert_uint_eq(ps.samples, 0);
  ck_assert_uint_eq(ps.gc_samples, UINT64_MAX); /* past its sz: untouched */
  ps.sz = 1;
  ck_assert_int_eq(ocgc_cpuprof_stats(p, &ps), -EINVAL);
  ocgc_cpuprof_free(p);
}
END_TEST

/* A CPU window's options, its figures and its pprof writer's, the same
 * way; its pprof only once ended. */
START_TEST(cpuwindow_options)
{
  struct ocgc_cpuwindow *w = NULL;
  struct ocgc_cpuwindow_stats ws;
  unsigned char *out = NULL;
  size_t len = 0;
  unsigned tail;
  int r = 0;
  for (tail = 0; tail < 2; tail++) {
    BIGGER(struct ocgc_cpuwindow_opts, wo, tail);
    ocgc_cpuwindow_free(w);
    w = NULL;
    r = ocgc_cpuwindow_open((int)getpid(), 0, NULL, &wo.o, &w, NULL);
    if (tail) ck_assert_int_eq(r, -EINVAL);
    else ck_assert(r == 0 || r == OCGC_E_PERF_DENIED || r == -ENOTSUP);
    ck_assert_int_eq(w == NULL, r != 0);
    if (!tail && r == 0) break;
  }
  if (w == NULL) return; /* sampling refused here: the rest needs a window */
  ck_assert_int_eq(ocgc_cpuwindow_pprof(w, NULL, &out, &len), -EINVAL); /* not ended */
  ck_assert_int_eq(ocgc_cpuwindow_turn(w), 0);
  ocgc_cpuwindow_end(w);
  ck_assert_int_eq(ocgc_cpuwindow_turn(w), -EINVAL);
  for (tail = 0; tail < 2; tail++) {
    BIGGER(struct ocgc_cpuprof_pprof_opts, po, tail);
    ck_assert_int_eq(ocgc_cpuwindow_pprof(w, &po.o, &out, &len), tail ? -EINVAL : 0);
    ck_assert_int_eq(out == NULL, tail);
    free(out);
    out = NULL;
  }
  memset(&ws, 0xff, sizeof ws);
  ws.sz = offsetof(struct ocgc_cpuwindow_stats, frequency_hz); /* up to pid */
  ck_assert_int_eq(ocgc_cpuwindow_stats(w, &ws), 0);
  ck_assert_int_eq(ws.pid, (int)getpid());
  ck_assert_uint_eq(ws.frequency_hz, UINT_MAX); /* past its sz: untouched */
  ws.sz = sizeof ws;
  ck_assert_int_eq(ocgc_cpuwindow_stats(w, &ws), 0);
  ck_assert_uint_eq(ws.frequency_hz, 100);
  ck_assert_int_eq(ws.ended, 1);
  ck_assert_int_eq(ws.has_ring, 0);
  ws.sz = 1;
  ck_assert_int_eq(ocgc_cpuwindow_stats(w, &ws), -EINVAL);
  ocgc_cpuwindow_free(w);
}
END_TEST

START_TEST(an_sz_too_small_is_refused)
{
  struct tf *t = rf_file(1, 1, 256);
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *cur = NULL;
  co.sz = 1;
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &cur), -EINVAL);
  ck_assert_ptr_null(cur);
  co.sz = sizeof co;
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &cur), 0);
  ocgc_cursor_free(cur);
}
END_TEST

/* Output structs: filled as far as the caller's sz says (an older caller's
 * smaller struct, the rest untouched), refused when sz is not even sz
 * itself (the getters that return nothing leave it as it was). */
START_TEST(outputs_filled_as_far_as_sz)
{
  struct tf *t = rf_file(1, 1, 256);
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  struct ocgc_source_info info;
  struct ocgc_cursor_stats st;
  struct ocgc_cursor *cur = NULL;
  memset(&info, 0xff, sizeof info);
  info.sz = offsetof(struct ocgc_source_info, ring_words); /* up to max_domains */
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_uint_eq(info.max_domains, 1);
  ck_assert_uint_eq(info.ring_words, UINT64_MAX); /* past its sz: untouched */
  ck_assert_uint_eq(info.sz, offsetof(struct ocgc_source_info, ring_words));
  info.sz = 0;
  ck_assert_int_eq(ocgc_source_info(s, &info), -EINVAL);
  ck_assert_int_eq(ocgc_cursor_new(s, NULL, &cur), 0);
  memset(&st, 0xee, sizeof st);
  st.sz = 0;
  ocgc_cursor_stats(cur, &st);
  ck_assert_uint_eq(st.seen, UINT64_C(0xeeeeeeeeeeeeeeee));
  st.sz = sizeof st;
  ocgc_cursor_stats(cur, &st);
  ck_assert_uint_eq(st.seen, 0);
  ocgc_cursor_free(cur);
}
END_TEST

static Suite *opts_suite(void)
{
  Suite *s = suite_create("opts");
  TCase *tc = rf_tcase(s, "rule", 0);
  tcase_add_test(tc, every_constructor_reads_options_one_way);
  tcase_add_test(tc, an_sz_too_small_is_refused);
  tcase_add_test(tc, cpu_and_unwind_options);
  tcase_add_test(tc, cpuprof_options);
  tcase_add_test(tc, cpuwindow_options);
  tcase_add_test(tc, outputs_filled_as_far_as_sz);
  return s;
}

TU_SUITE(opts_suite);
