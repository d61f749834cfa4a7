/* test_html.c - the HTML report (tools/html*.c, tools/timeline.c) and what
 * libocgc's aggregator gives it (ocgc_agg_opts.on_pause, ocgc_agg_finish):
 * escaping of hostile strings and of the JSON block, the timeline's
 * downsampling (the maximum and every pause above p99 kept, at most
 * OCGC_TIMELINE_MAX_MARKS marks, every pause while there are few), and a whole
 * document from a ring: one script element (the data), the CSP, no
 * control character, marks and counts that agree with the snapshot. */

#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html.h"
#include "json.h"
#include "ringgen.h"
#include "testutil.h"

static char *tmp;

static void setup(void) { tmp = tu_mkdtemp(); }
static void teardown(void) { tu_rmtree(tmp); free(tmp); tmp = NULL; }

/* What [write] printed into a memory stream (free it). */
#define CAPTURE(buf, len, write)                      \
  do {                                                \
    FILE *mf_ = open_memstream(&(buf), &(len));       \
    ck_assert_ptr_nonnull(mf_);                       \
    write;                                            \
    ck_assert_int_eq(fclose(mf_), 0);                 \
  } while (0)

static int count_of(const char *s, const char *what)
{
  int n = 0;
  for (; (s = strstr(s, what)) != NULL; s += strlen(what)) n++;
  return n;
}

static int has_controls(const char *s)
{
  for (; *s; s++)
    if (((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f) return 1;
  return 0;
}

START_TEST(text_is_escaped)
{
  char *out = NULL;
  size_t n = 0;
  CAPTURE(out, n, html_text(mf_, "<script>alert('x')</script> & \"q\" \x1b[31m\x07\xc3\xa9"));
  ck_assert_ptr_null(strchr(out, '<'));
  ck_assert_ptr_null(strchr(out, '>'));
  ck_assert_ptr_null(strchr(out, '\''));
  ck_assert_ptr_null(strchr(out, '"'));
  ck_assert(!has_controls(out));
  ck_assert_ptr_nonnull(strstr(out, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"));
  ck_assert_ptr_nonnull(strstr(out, "\\x1b[31m\\x07\\xc3\\xa9"));
  free(out);
}
END_TEST

/* A string longer than one escaped piece comes out whole. */
START_TEST(long_text_is_whole)
{
  char in[1000], *out = NULL;
  size_t n = 0;
  memset(in, 'a', sizeof in - 1);
  in[sizeof in - 1] = '\0';
  in[500] = '<';
  CAPTURE(out, n, html_text(mf_, in));
  ck_assert_uint_eq(n, sizeof in - 2 + 4);
  ck_assert_ptr_nonnull(strstr(out, "a&lt;a"));
  free(out);
}
END_TEST

START_TEST(json_block_cannot_close)
{
  static const char json[] = "{\"program\": \"</script><script>x()</script><!--\"}";
  char *out = NULL;
  size_t n = 0;
  CAPTURE(out, n, html_json_data(mf_, json, sizeof json - 1));
  ck_assert_ptr_null(strchr(out, '<'));
  ck_assert_str_eq(out, "{\"program\": \"\\u003c/script>\\u003cscript>x()\\u003c/script>\\u003c!--\"}");
  free(out);
}
END_TEST

/* ---- the timeline ---------------------------------------------------------- */

static void pause_at(struct ocgc_timeline *tl, uint64_t t, uint64_t ns, int kind)
{
  struct ocgc_agg_pause p;
  memset(&p, 0, sizeof p);
  p.pause.begin = t;
  p.pause.end = t + ns;
  p.pause.duration_ns = ns;
  p.kind = kind;
  p.cause = OCGC_CAUSE_MINOR_HEAP_FULL;
  p.counts.allocated_bytes = t; /* one byte a ns */
  ocgc_timeline_on_pause(&p, tl);
}

static int by_ns(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* 200,000 pauses over an hour: bounded marks, the maximum and every pause
 * above p99 among them, counts kept whole in the buckets. */
START_TEST(downsampling_keeps_max_and_tail)
{
  enum { N = 200000 };
  struct ocgc_timeline *tl = NULL;
  ck_assert_int_eq(ocgc_timeline_new(&tl), 0);
  struct ocgc_timeline_mark *m = malloc(sizeof *m * OCGC_TIMELINE_MAX_MARKS);
  uint64_t *ns = malloc(sizeof *ns * N), x = 88172645463325252u, p99, above = 0, sum = 0;
  struct ocgc_timeline_info ti = OCGC_OPTS_INIT(struct ocgc_timeline_info);
  unsigned i, n, kept = 0;
  ck_assert_ptr_nonnull(tl);
  for (i = 0; i < N; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    ns[i] = 1000 + x % 1000000 + (x % 997 == 0 ? 50000000 : 0);
    pause_at(tl, UINT64_C(1000000000) + UINT64_C(18000000) * i, ns[i], (int)(i % 4));
  }
  ocgc_timeline_info(tl, &ti);
  ck_assert_uint_eq(ti.pauses, N);
  n = ocgc_timeline_marks(tl, m);
  ck_assert_uint_le(n, OCGC_TIMELINE_MAX_MARKS);
  ck_assert_uint_gt(n, OCGC_TIMELINE_TOP);
  for (i = 0; i < n; i++) if (m[i].ns == ti.max_ns) kept++;
  ck_assert_uint_ge(kept, 1);
  for (i = 0; i < OCGC_TIMELINE_BUCKETS; i++) sum += ocgc_timeline_bucket(tl, i)->pauses;
  ck_assert_uint_eq(sum, N);
  qsort(ns, N, sizeof ns[0], by_ns);
  ck_assert_uint_eq(ns[N - 1], ti.max_ns);
  p99 = ns[N - N / 100];
  for (i = 0; i < N; i++) above += ns[i] > p99;
  for (i = 0, kept = 0; i < n; i++) kept += m[i].ns > p99;
  ck_assert_uint_eq(kept, above);
  for (i = 1; i < n; i++) ck_assert_uint_le(m[i - 1].t, m[i].t);
  free(ns);
  free(m);
  ocgc_timeline_free(tl);
}
END_TEST

/* Up to OCGC_TIMELINE_EXACT pauses, every one is drawn as it was. */
START_TEST(few_pauses_all_drawn)
{
  struct ocgc_timeline *tl = NULL;
  ck_assert_int_eq(ocgc_timeline_new(&tl), 0);
  struct ocgc_timeline_mark *m = malloc(sizeof *m * OCGC_TIMELINE_MAX_MARKS);
  unsigned i;
  for (i = 0; i < OCGC_TIMELINE_EXACT; i++) pause_at(tl, 5000 + 1000 * i, 10 + i, 0);
  ck_assert_uint_eq(ocgc_timeline_marks(tl, m), OCGC_TIMELINE_EXACT);
  for (i = 0; i < OCGC_TIMELINE_EXACT; i++) ck_assert_uint_eq(m[i].ns, 10 + i);
  pause_at(tl, 5000 + 1000 * i, 1, 0);
  ck_assert_uint_lt(ocgc_timeline_marks(tl, m), OCGC_TIMELINE_EXACT + 1);
  free(m);
  ocgc_timeline_free(tl);
}
END_TEST

/* Rates come from the counts each pause carries, as differences (the
 * first from zero: nothing of the window is left out), and allocation is
 * where it happened: spread over the time since the pause before, so a
 * steady rate is steady in the buckets, not a comb at the pauses. */
START_TEST(counts_are_differences)
{
  struct ocgc_timeline *tl = NULL;
  ck_assert_int_eq(ocgc_timeline_new(&tl), 0);
  struct ocgc_timeline_info ti = OCGC_OPTS_INIT(struct ocgc_timeline_info);
  uint64_t alloc = 0;
  unsigned i;
  ocgc_timeline_origin(tl, 1000);
  for (i = 0; i < 100; i++) pause_at(tl, 1000 + UINT64_C(100000000) * i, 10, 0);
  for (i = 0; i < OCGC_TIMELINE_BUCKETS; i++) alloc += ocgc_timeline_bucket(tl, i)->alloc;
  /* one byte a ns from 0 to the last pause's end */
  ck_assert_uint_eq(alloc, 1000 + UINT64_C(100000000) * 99);
  ocgc_timeline_info(tl, &ti);
  ck_assert_uint_ge(ti.width, UINT64_C(100000000) * 99 / OCGC_TIMELINE_BUCKETS);
  /* a bucket has a width's worth, but for the 10 ns of a pause in it (no
   * allocation while stopped) and a byte or two of the cumulative floors */
  for (i = 1; i + 1 < ti.nbuckets; i++) {
    const struct ocgc_timeline_bucket *b = ocgc_timeline_bucket(tl, i);
    ck_assert_msg(b->alloc + 12 >= ti.width && b->alloc <= ti.width + 2,
                  "bucket %u: %" PRIu64 " bytes over %" PRIu64 " ns", i, b->alloc, ti.width);
  }
  ocgc_timeline_free(tl);
}
END_TEST

/* Time in pauses is a share of each bucket's time: a pause longer than a
 * bucket is clipped at the buckets' edges (it was drawn at 3.0 in its
 * first bucket), overlapping ones count once, and nothing is lost. */
START_TEST(pause_time_is_a_share)
{
  struct ocgc_timeline *tl = NULL;
  ck_assert_int_eq(ocgc_timeline_new(&tl), 0);
  struct ocgc_timeline_info ti = OCGC_OPTS_INIT(struct ocgc_timeline_info);
  uint64_t sum = 0;
  unsigned i;
  ocgc_timeline_origin(tl, 0);
  pause_at(tl, 500000, 3000000, OCGC_KIND_COMPACTION);   /* 3 ms from 0.5 ms */
  pause_at(tl, 3000000, 200000, OCGC_KIND_MINOR);        /* inside the first */
  pause_at(tl, 10000000, 100000, OCGC_KIND_MINOR);
  ocgc_timeline_info(tl, &ti);
  ck_assert_uint_eq(ti.width, 1000000);
  for (i = 0; i < ti.nbuckets; i++) {
    const struct ocgc_timeline_bucket *b = ocgc_timeline_bucket(tl, i);
    ck_assert_msg(b->pause_ns <= ti.width, "bucket %u: %" PRIu64 " ns in pauses", i, b->pause_ns);
    sum += b->pause_ns;
  }
  ck_assert_uint_eq(ocgc_timeline_bucket(tl, 0)->pause_ns, 500000);
  ck_assert_uint_eq(ocgc_timeline_bucket(tl, 1)->pause_ns, 1000000);
  ck_assert_uint_eq(ocgc_timeline_bucket(tl, 3)->pause_ns, 500000);
  ck_assert_uint_eq(sum, 3000000 + 100000);
  ck_assert_uint_eq(ti.kind_pauses[OCGC_KIND_COMPACTION], 1);
  ck_assert_uint_eq(ti.kind_pauses[OCGC_KIND_MINOR], 2);
  ocgc_timeline_free(tl);
}
END_TEST

/* A heap is known only from a figure: a pause that carries none (0) puts
 * none in its bucket, not an empty heap. */
START_TEST(unknown_heap_is_no_figure)
{
  struct ocgc_timeline *tl = NULL;
  struct ocgc_agg_pause p;
  ck_assert_int_eq(ocgc_timeline_new(&tl), 0);
  ocgc_timeline_origin(tl, 0);
  pause_at(tl, 100, 10, OCGC_KIND_MINOR);
  ck_assert_uint_ne(ocgc_timeline_bucket(tl, 0)->sample_t, 0);
  ck_assert_uint_eq(ocgc_timeline_bucket(tl, 0)->heap_t, 0);
  memset(&p, 0, sizeof p);
  p.pause.begin = 2000000;
  p.pause.end = p.pause.duration_ns = 2000010;
  p.pause.duration_ns = 10;
  p.kind = OCGC_KIND_MINOR;
  p.counts.heap_bytes = 4096;
  p.counts.top_heap_bytes = 8192;
  ocgc_timeline_on_pause(&p, tl);
  ck_assert_uint_eq(ocgc_timeline_bucket(tl, 2)->heap_t, 2000010);
  ck_assert_uint_eq(ocgc_timeline_bucket(tl, 2)->heap, 4096);
  ck_assert_uint_eq(ocgc_timeline_bucket(tl, 2)->top_heap, 8192);
  ocgc_timeline_free(tl);
}
END_TEST

/* Past OCGC_TIMELINE_EXACT pauses, a rare kind is still among the marks:
 * each bucket keeps its most significant pause beside its longest. */
START_TEST(rare_kind_kept_in_a_flood)
{
  struct ocgc_timeline *tl = NULL;
  ck_assert_int_eq(ocgc_timeline_new(&tl), 0);
  struct ocgc_timeline_mark *m = malloc(sizeof *m * OCGC_TIMELINE_MAX_MARKS);
  unsigned i, n, compactions = 0;
  for (i = 0; i < 50000; i++)
    pause_at(tl, UINT64_C(1000000) * i, i % 5000 == 7 ? 1000 : 100000 + i % 1000,
             i % 5000 == 7 ? OCGC_KIND_COMPACTION : OCGC_KIND_MINOR);
  n = ocgc_timeline_marks(tl, m);
  ck_assert_uint_le(n, OCGC_TIMELINE_MAX_MARKS);
  for (i = 0; i < n; i++) compactions += m[i].kind == OCGC_KIND_COMPACTION;
  ck_assert_uint_eq(compactions, 10);
  free(m);
  ocgc_timeline_free(tl);
}
END_TEST

/* Loss periods: from the newest event before the gap to the next one,
 * kept in the buckets: far apart, they stay apart; however many, they are
 * bounded by the buckets. */
START_TEST(losses_in_buckets)
{
  struct ocgc_timeline *tl = NULL;
  ck_assert_int_eq(ocgc_timeline_new(&tl), 0);
  uint64_t from = 0, to = 0, s = UINT64_C(1000000000);
  unsigned i;
  ocgc_timeline_origin(tl, 0);
  pause_at(tl, s / 2, 10, 0);
  ocgc_timeline_on_lost(0, 5, 1, s, tl);
  pause_at(tl, s + s / 10, 10, 0);
  ocgc_timeline_on_lost(0, 5, 1, 50 * s, tl);
  pause_at(tl, 50 * s + s / 10, 10, 0);
  ck_assert_int_eq(ocgc_timeline_loss(tl, 0, &from, &to), 1);
  ck_assert_uint_eq(from, s);
  ck_assert_uint_eq(to, s + s / 10);
  ck_assert_int_eq(ocgc_timeline_loss(tl, 1, &from, &to), 1);
  ck_assert_uint_eq(from, 50 * s);
  ck_assert_uint_eq(to, 50 * s + s / 10);
  ck_assert_int_eq(ocgc_timeline_loss(tl, 2, &from, &to), 0);
  for (i = 0; i < 100000; i++) {
    ocgc_timeline_on_lost(0, 1, 1, 60 * s + i * (s / 100), tl);
    pause_at(tl, 60 * s + i * (s / 100) + s / 1000, 10, 0);
  }
  for (i = 0; ocgc_timeline_loss(tl, i, &from, &to); i++) ck_assert_uint_le(from, to);
  ck_assert_uint_le(i, OCGC_TIMELINE_BUCKETS / 2 + 1);
  ocgc_timeline_free(tl);
}
END_TEST

/* ---- a whole document from a ring ------------------------------------------ */

#define SPAN(b, id) OCGC_EV_HEADER(2, 0, (b) ? OCGC_RT_BEGIN : OCGC_RT_END, id)
#define UINT(slot) OCGC_EV_HEADER(3, 1, OCGC_USER_INT, slot)
#define UNIT(slot) OCGC_EV_HEADER(2, 1, OCGC_USER_UNIT, slot)

static void minor(struct rg_file *f, uint64_t b, uint64_t e)
{
  rg_write1(f, 0, UINT(0), b, 1);
  rg_write1(f, 0, SPAN(1, OCGC_PH_MINOR), b, 0);
  rg_write1(f, 0, SPAN(0, OCGC_PH_MINOR), e, 0);
}

static void slice(struct rg_file *f, uint64_t b, uint64_t e)
{
  rg_write1(f, 0, UINT(1), b, 1);
  rg_write1(f, 0, SPAN(1, OCGC_PH_MAJOR_SLICE), b, 0);
  rg_write1(f, 0, SPAN(0, OCGC_PH_MAJOR_SLICE), e, 0);
}

/* An ocgc ring with a hostile program name, 3 minors and 2 slices (the
 * last pause still open to growth until ocgc_agg_finish). */
static void make_ring(const char *path)
{
  struct rg_file f;
  ck_assert_int_eq(rg_create(&f, path, 1, 1, 4096), 0);
  strcpy(f.ext->program, "<script>\x1b]0;x\x07");
  rg_set_name(&f, 0, "ocgc.cause.minor_heap_full");
  rg_set_name(&f, 1, "ocgc.cause.major_slice_due");
  rg_set_name(&f, 2, "ocgc.stop.join"); /* pauses by marks: the last one waits */
  minor(&f, 1000000, 1100000);
  slice(&f, 2000000, 2500000);
  minor(&f, 3000000, 3050000);
  slice(&f, 4000000, 4900000);
  minor(&f, 5000000, 5070000);
  rg_close(&f);
}

struct got_pause { unsigned n; int kind[8], cause[8]; };

static void on_pause(const struct ocgc_agg_pause *p, void *ctx)
{
  struct got_pause *g = ctx;
  if (g->n < 8) { g->kind[g->n] = p->kind; g->cause[g->n] = p->cause; }
  g->n++;
}

/* libocgc: each pause once, with its collection's kind and cause; the
 * last one at ocgc_agg_finish, which changes no figure of a snapshot. */
START_TEST(agg_gives_each_pause_once)
{
  char path[512];
  struct got_pause g;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_snapshot *s1, *s2;
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  memset(&g, 0, sizeof g);
  make_ring(tu_path(path, sizeof path, tmp, "1.events"));
  o.on_pause = on_pause;
  o.ctx = &g;
  ck_assert_int_eq(ocgc_source_open_path(path, NULL, &src), 0);
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_agg_new(src, &o, &agg), 0);
  ck_assert_int_ge(ocgc_agg_poll(agg), 0);
  ck_assert_int_eq(ocgc_agg_snapshot(agg, &s1), 0);
  ck_assert_uint_eq(g.n, 4);
  ck_assert_int_eq(ocgc_agg_finish(agg), 0);
  ck_assert_uint_eq(g.n, 5);
  ck_assert_int_eq(ocgc_agg_snapshot(agg, &s2), 0);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(s1)), 5);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(s2)), 5);
  ck_assert_uint_eq(ocgc_hist_max(ocgc_snapshot_pauses(s2)), 900000);
  ck_assert_int_eq(g.kind[0], OCGC_KIND_MINOR);
  ck_assert_int_eq(g.cause[0], OCGC_CAUSE_MINOR_HEAP_FULL);
  ck_assert_int_eq(g.kind[1], OCGC_KIND_MAJOR_SLICE);
  ck_assert_int_eq(g.cause[1], OCGC_CAUSE_MAJOR_SLICE_DUE);
  ck_assert_int_eq(g.kind[4], OCGC_KIND_MINOR);
  ocgc_snapshot_free(s1);
  ocgc_snapshot_free(s2);
  ocgc_agg_free(agg);
  ocgc_source_close(src);
}
END_TEST

/* A pause is of its most significant collection's kind: Gc.compact's stop
 * (a minor collection, a major cycle finished, then a shorter compaction)
 * is a compaction, not a major_finish (it was the longest collection's). */
START_TEST(pause_kind_is_most_significant)
{
  char path[512];
  struct got_pause g;
  struct rg_file f;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  memset(&g, 0, sizeof g);
  ck_assert_int_eq(rg_create(&f, tu_path(path, sizeof path, tmp, "4.events"), 1, 1, 4096), 0);
  rg_set_name(&f, 0, "ocgc.cause.minor_heap_full");
  rg_set_name(&f, 1, "ocgc.cause.explicit");
  rg_set_name(&f, 2, "ocgc.stop.join");
  minor(&f, 1000000, 1100000);
  rg_write1(&f, 0, UINT(1), 2000000, 1);
  rg_write1(&f, 0, SPAN(1, OCGC_PH_MINOR), 2000000, 0);
  rg_write1(&f, 0, SPAN(0, OCGC_PH_MINOR), 2100000, 0);
  rg_write(&f, 0, UNIT(2), 2100000, NULL);
  rg_write1(&f, 0, UINT(1), 2100000, 1);
  rg_write1(&f, 0, SPAN(1, OCGC_PH_MAJOR_FINISH_CYCLE), 2100000, 0);
  rg_write1(&f, 0, SPAN(0, OCGC_PH_MAJOR_FINISH_CYCLE), 2900000, 0);
  rg_write(&f, 0, UNIT(2), 2900000, NULL);
  rg_write1(&f, 0, UINT(1), 2900000, 1);
  rg_write1(&f, 0, SPAN(1, OCGC_PH_COMPACT), 2900000, 0);
  rg_write1(&f, 0, SPAN(0, OCGC_PH_COMPACT), 3000000, 0);
  minor(&f, 5000000, 5050000);
  rg_close(&f);
  o.on_pause = on_pause;
  o.ctx = &g;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_source_open_path(path, NULL, &src), 0);
  ck_assert_int_eq(ocgc_agg_new(src, &o, &agg), 0);
  ck_assert_int_ge(ocgc_agg_poll(agg), 0);
  ck_assert_int_eq(ocgc_agg_finish(agg), 0);
  ck_assert_uint_eq(g.n, 3);
  ck_assert_int_eq(g.kind[0], OCGC_KIND_MINOR);
  ck_assert_int_eq(g.kind[1], OCGC_KIND_COMPACTION);
  ck_assert_int_eq(g.cause[1], OCGC_CAUSE_EXPLICIT);
  ck_assert_int_eq(g.kind[2], OCGC_KIND_MINOR);
  ocgc_agg_free(agg);
  ocgc_source_close(src);
}
END_TEST

/* The document of [path] as `ocgc report --file` writes it (free it). */
static char *document(const char *path)
{
  struct rep_meta m;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_snapshot *s;
  struct ocgc_timeline *tl = NULL;
  ck_assert_int_eq(ocgc_timeline_new(&tl), 0);
  char *out = NULL;
  size_t n = 0;
  memset(&m, 0, sizeof m);
  m.mode = REP_FILE;
  m.path = "/x/<b>\"'&.events";
  ck_assert_int_eq(ocgc_source_open_path(path, NULL, &src), 0);
  ck_assert_int_eq(rep_agg_new(src, OCGC_START_OLDEST, tl, &agg), 0);
  ck_assert_int_ge(ocgc_agg_poll(agg), 0);
  ck_assert_int_eq(ocgc_agg_finish(agg), 0);
  ck_assert_int_eq(ocgc_agg_snapshot(agg, &s), 0);
  {
    struct html_in in = {&m, src, NULL, s, tl, NULL, NULL};
    CAPTURE(out, n, ck_assert_int_eq(html_write(mf_, &in), 0));
  }
  ocgc_snapshot_free(s);
  ocgc_agg_free(agg);
  ocgc_source_close(src);
  ocgc_timeline_free(tl);
  return out;
}

START_TEST(document_is_inert_and_agrees)
{
  char path[512], *doc;
  make_ring(tu_path(path, sizeof path, tmp, "2.events"));
  doc = document(path);
  ck_assert_int_eq(count_of(doc, "<script"), 1);
  ck_assert_int_eq(count_of(doc, "<script type=\"application/json\" id=\"ocgc-report\">"), 1);
  ck_assert_int_eq(count_of(doc, "</script>"), 1);
  ck_assert_ptr_nonnull(strstr(doc, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                                    "'none'; style-src 'unsafe-inline'; img-src data:\">"));
  ck_assert(!has_controls(doc));
  ck_assert_ptr_nonnull(strstr(doc, "&lt;script&gt;\\x1b]0;x\\x07"));
  ck_assert_ptr_nonnull(strstr(doc, "/x/&lt;b&gt;&quot;&#39;&amp;.events"));
  ck_assert_ptr_null(strstr(doc, " on"));  /* no event attribute at all */
  ck_assert_ptr_nonnull(strstr(doc, "data-pauses=\"5\" data-drawn=\"5\" data-max-ns=\"900000\""));
  ck_assert_int_eq(count_of(doc, "<circle class=\"pause\""), 5);
  ck_assert_int_eq(count_of(doc, "data-kind=\"major_slice\" data-ns=\"900000\" data-t-ns="), 1);
  ck_assert_int_eq(count_of(doc, "<rect class=\"cause-bar\""), 2);
  ck_assert_ptr_nonnull(strstr(doc, "data-kind=\"minor\" data-cause=\"minor_heap_full\" "
                                    "data-count=\"3\" data-total-ns=\"220000\" data-max-ns=\"100000\""));
  ck_assert_ptr_nonnull(strstr(doc, "<svg class=\"ocgc-hist\" viewBox=\"0 0 520 180\" width=\"520\" "
                                    "height=\"180\" data-kind=\"pause\" data-count=\"5\""));
  ck_assert_int_eq(count_of(doc, "<svg class=\"ocgc-series\""), 9); /* not live: no /proc */
  ck_assert_int_eq(count_of(doc, "<table class=\"pcts\">"), 3);
  free(doc);
}
END_TEST

/* Histogram buckets are libocgc's 1-2-5 bounds (ocgc_hist_bounds, the
 * ones ocgc top and ocgc serve use), consecutive, strictly ascending even
 * in the first decades, and every pause is in one. */
START_TEST(bucket_bounds_ascend)
{
  char path[512], *doc, *svg, *end;
  struct rg_file f;
  unsigned hists = 0;
  ck_assert_int_eq(rg_create(&f, tu_path(path, sizeof path, tmp, "3.events"), 1, 1, 4096), 0);
  rg_set_name(&f, 0, "ocgc.cause.minor_heap_full");
  rg_set_name(&f, 1, "ocgc.cause.major_slice_due");
  minor(&f, 1000, 1001);
  minor(&f, 2000, 2003);
  slice(&f, 5000, 7000);
  rg_close(&f);
  doc = document(path);
  for (svg = strstr(doc, "<svg class=\"ocgc-hist\""); svg != NULL;
       svg = strstr(end, "<svg class=\"ocgc-hist\"")) {
    uint64_t prev = 0, le, cnt, sum = 0;
    const char *b = svg;
    int first = 1;
    end = strstr(svg, "</svg>");
    while ((b = strstr(b, "class=\"bucket\"")) != NULL && b < end) {
      b = strstr(b, "data-le-ns=");
      ck_assert_int_eq(sscanf(b, "data-le-ns=\"%" SCNu64 "\" data-count=\"%" SCNu64, &le, &cnt), 2);
      ck_assert_msg(first || le > prev, "bound %" PRIu64 " after %" PRIu64, le, prev);
      /* libocgc's 1-2-5 bounds, one after the other, as top and serve */
      ck_assert_uint_eq(ocgc_hist_bounds()[ocgc_hist_bucket(le)], le);
      ck_assert(first || ocgc_hist_bucket(le) == ocgc_hist_bucket(prev) + 1);
      first = 0;
      prev = le;
      sum += cnt;
    }
    ck_assert_int_eq(sscanf(strstr(svg, " data-count="), " data-count=\"%" SCNu64, &cnt), 1);
    ck_assert_uint_eq(sum, cnt);
    hists++;
  }
  ck_assert_uint_eq(hists, 3); /* pauses, minor, major_slice */
  ck_assert_ptr_nonnull(strstr(doc, "data-kind=\"pause\" data-count=\"3\""));
  free(doc);
}
END_TEST

/* "Where the CPU goes" (html_cpu.c, report_cpu.c) from folded lines as
 * libocgc writes them by phase: the tree merged from the outermost frame
 * (the phases its root's children, in name order, depth-first), the
 * samples of each phase, the top functions, every frame in its phase's
 * colour, a hostile name escaped in text, titles and attributes, and the
 * JSON member's figures. */
START_TEST(cpu_section_from_folded)
{
  char folded[] = "[mutator];main;Main.work;Main.<b>&\"x' 6\n"
                  "[minor];main;Main.work;caml_empty_minor_heap 3\n"
                  "[mutator];main;Main.work 1\n"
                  "[mutator];main;Main.<b>&\"x' 2\n"
                  "not a line\n"
                  "[nophase];main 9\n";
  struct rep_cpu cpu;
  struct rep_meta m;
  struct html_ctx c;
  struct json j;
  char *out = NULL;
  size_t n = 0;
  const struct ocgc_profile_tree *t;
  memset(&cpu, 0, sizeof cpu);
  ck_assert_int_eq(rep_cpu_from_folded(&cpu, folded), 0);
  cpu.have = 1;
  cpu.samples = 12;
  cpu.gc_samples = 3;
  cpu.gc_share_samples = 0.25;
  cpu.ring_known = 1;
  cpu.gc_share_ring = 0.2;
  ck_assert_uint_eq(cpu.phase[OCGC_GC_MUTATOR], 9);
  ck_assert_uint_eq(cpu.phase[OCGC_GC_MINOR], 3);
  t = cpu.tree;
  ck_assert_ptr_nonnull(t);
  /* all, [minor] main work caml_empty, [mutator] main <b> work <b> */
  ck_assert_uint_eq(t->n, 10);
  ck_assert_int_eq(t->node[0].value[0], 12);
  ck_assert_str_eq(t->node[1].name, "[minor]");
  ck_assert_int_eq(t->node[1].value[0], 3);
  ck_assert_str_eq(t->node[5].name, "[mutator]");
  ck_assert_int_eq(t->node[5].value[0], 9);
  ck_assert_uint_eq(t->node[1].next_sibling, 5);
  ck_assert_uint_eq(t->node[4].depth, 4);
  ck_assert_str_eq(t->node[7].name, "Main.<b>&\"x'"); /* main's callees by name */
  ck_assert_int_eq(t->node[7].value[0], 2);
  ck_assert_str_eq(t->node[8].name, "Main.work");
  ck_assert_int_eq(t->node[8].value[0], 7);
  ck_assert_uint_eq(t->node[9].parent, 8);
  ck_assert_uint_eq(cpu.ntop, 3);
  ck_assert_str_eq(cpu.top[0].name, "Main.<b>&\"x'");
  ck_assert_uint_eq(cpu.top[0].samples, 8);
  ck_assert_str_eq(cpu.top[1].name, "caml_empty_minor_heap");
  ck_assert_str_eq(cpu.top[2].name, "Main.work");

  memset(&m, 0, sizeof m);
  m.cpu = &cpu;
  memset(&c, 0, sizeof c);
  c.cpu = &cpu;
  CAPTURE(out, n, (c.f = mf_, html_cpu(&c)));
  ck_assert_ptr_null(strstr(out, "Main.<b>"));
  ck_assert_ptr_null(strstr(out, "\"x'"));
  ck_assert_int_eq(count_of(out, "Main.&lt;b&gt;&amp;&quot;x&#39;"), 2 * 3 + 2); /* 2 frames (name, title, text), 1 row */
  ck_assert_ptr_nonnull(strstr(out, "id=\"ocgc-cpu\" data-samples=\"12\" data-gc-samples=\"3\""));
  ck_assert_ptr_nonnull(strstr(out, "data-gc-share-samples=\"0.250000\" data-gc-share-ring=\"0.200000\""));
  ck_assert_ptr_nonnull(strstr(out, "data-phase=\"minor\" data-count=\"3\" data-fill=\"rgb(70,130,200)\""));
  ck_assert_ptr_nonnull(strstr(out, "data-fn=\"caml_empty_minor_heap\" data-samples=\"3\" data-depth=\"4\" "
                                    "data-leaf=\"1\" data-phase=\"minor\"><title>"));
  ck_assert_int_eq(count_of(out, "fill=\"rgb(70,130,200)\"/>"), 1 + 4);
  ck_assert_int_eq(count_of(out, "data-phase=\"mutator\"><title>"), 5);
  ck_assert_int_eq(count_of(out, "fill=\"rgb(240,160,70)\"/>"), 1 + 5);
  ck_assert_ptr_nonnull(strstr(out, "<svg id=\"ocgc-flame-cpu\" class=\"flame\""));
  ck_assert_ptr_nonnull(strstr(out, "data-total=\"12\" data-frames=\"10\" data-value=\"samples\""));
  ck_assert_int_eq(has_controls(out), 0);
  free(out);

  out = NULL;
  CAPTURE(out, n, (json_init_file(&j, mf_, 0), json_obj(&j, JSON_LINES), rep_cpu_json(&j, &m),
                   json_obj_end(&j)));
  ck_assert_ptr_nonnull(strstr(out, "\"phases\": {\"mutator\": 9, \"minor\": 3, \"major_mark\": 0"));
  ck_assert_ptr_nonnull(strstr(out, "\"gc_share_samples\": 0.250000"));
  ck_assert_ptr_nonnull(strstr(out, "\"gc_share_ring\": 0.200000"));
  ck_assert_ptr_nonnull(strstr(out, "{\"function\": \"Main.<b>&\\\"x'\", \"samples\": 8}"));
  free(out);
  free(cpu.tree->node);
  free(cpu.tree);
}
END_TEST

/* Without a profile the section says why: not asked, or none taken. */
START_TEST(cpu_section_without_profile)
{
  struct rep_cpu cpu;
  struct html_ctx c;
  char *out = NULL;
  size_t n = 0;
  memset(&c, 0, sizeof c);
  CAPTURE(out, n, (c.f = mf_, html_cpu(&c)));
  ck_assert_ptr_nonnull(strstr(out, "id=\"ocgc-cpu-none\">no CPU profile: not asked for"));
  free(out);
  memset(&cpu, 0, sizeof cpu);
  c.cpu = &cpu;
  out = NULL;
  CAPTURE(out, n, (c.f = mf_, html_cpu(&c)));
  ck_assert_ptr_nonnull(strstr(out, "id=\"ocgc-cpu-none\">no CPU profile: sampling was refused"));
  free(out);
}
END_TEST

static Suite *html_suite(void)
{
  Suite *s = suite_create("html");
  TCase *tc = tcase_create("escaping");
  tcase_add_test(tc, text_is_escaped);
  tcase_add_test(tc, long_text_is_whole);
  tcase_add_test(tc, json_block_cannot_close);
  suite_add_tcase(s, tc);
  tc = tcase_create("timeline");
  tcase_add_test(tc, downsampling_keeps_max_and_tail);
  tcase_add_test(tc, few_pauses_all_drawn);
  tcase_add_test(tc, counts_are_differences);
  tcase_add_test(tc, pause_time_is_a_share);
  tcase_add_test(tc, unknown_heap_is_no_figure);
  tcase_add_test(tc, rare_kind_kept_in_a_flood);
  tcase_add_test(tc, losses_in_buckets);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tc = tcase_create("document");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, agg_gives_each_pause_once);
  tcase_add_test(tc, pause_kind_is_most_significant);
  tcase_add_test(tc, document_is_inert_and_agrees);
  tcase_add_test(tc, bucket_bounds_ascend);
  suite_add_tcase(s, tc);
  tc = tcase_create("cpu");
  tcase_add_test(tc, cpu_section_from_folded);
  tcase_add_test(tc, cpu_section_without_profile);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(html_suite);
