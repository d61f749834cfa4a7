/* test_stream.c - the collection stream's rules, each on its own: span
 * pairing (unterminated, unmatched, too deep, corrupt), the cause's
 * timestamp rule, amounts, pauses by marks and by nesting, loss, finish,
 * and the open spans a reader can ask for.  Events are fed by hand to a
 * stream over a ringgen file (which gives the source, its numbering and
 * its names), so each rule is seen without a cursor in between. */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringgen.h"
#include "testutil.h"

enum { U_JOIN, U_EXPLICIT, U_WORK, U_MINE };

#define MAX_SEEN 64

struct fx {
  char dir_path[512];
  struct rg_file f;
  struct ocgc_source *src;
  struct ocgc_stream *st;
  struct ocgc_span spans[MAX_SEEN];
  struct ocgc_collection colls[MAX_SEEN];
  struct ocgc_pause pauses[MAX_SEEN];
  unsigned nspans, ncolls, npauses;
};

static char *tmp;
static struct fx F;

static void on_span(const struct ocgc_span *s, void *ctx)
{
  struct fx *x = ctx;
  if (x->nspans < MAX_SEEN) x->spans[x->nspans++] = *s;
}

static void on_coll(const struct ocgc_collection *c, void *ctx)
{
  struct fx *x = ctx;
  if (x->ncolls < MAX_SEEN) x->colls[x->ncolls++] = *c;
}

static void on_pause(const struct ocgc_pause *p, void *ctx)
{
  struct fx *x = ctx;
  if (x->npauses < MAX_SEEN) x->pauses[x->npauses++] = *p;
}

/* A source with [rings] rings; [marks]: an ocgc file that registers the
 * stop mark (else a stock file, which has no marks). */
static void open_fx(int marks, unsigned rings)
{
  struct ocgc_stream_opts o = OCGC_OPTS_INIT(struct ocgc_stream_opts);
  int r;
  memset(&F, 0, sizeof F);
  tu_path(F.dir_path, sizeof F.dir_path, tmp, "s.events");
  r = rg_create(&F.f, F.dir_path, marks, rings, 4096);
  ck_assert_msg(r == 0, "rg_create: %s", strerror(-r));
  if (marks) rg_set_name(&F.f, U_JOIN, OCGC_UEV_STOP_JOIN);
  rg_set_name(&F.f, U_EXPLICIT, "ocgc.cause.explicit");
  rg_set_name(&F.f, U_WORK, OCGC_UEV_SLICE_WORK);
  rg_set_name(&F.f, U_MINE, "my.span");
  ck_assert_int_eq(ocgc_source_open_path(F.dir_path, NULL, &F.src), 0);
  o.on_span = on_span;
  o.on_collection = on_coll;
  o.on_pause = on_pause;
  o.ctx = &F;
  ck_assert_int_eq(ocgc_stream_new(F.src, &o, &F.st), 0);
}

static void setup(void) { tmp = tu_mkdtemp(); }

static void teardown(void)
{
  if (F.src != NULL) {
    ocgc_stream_free(F.st);
    ocgc_source_close(F.src);
    rg_close(&F.f);
  }
  tu_rmtree(tmp);
  free(tmp);
  tmp = NULL;
}

static void feed(unsigned ring, unsigned user, unsigned type, unsigned id, uint64_t ts,
                 uint64_t value)
{
  struct ocgc_event ev;
  memset(&ev, 0, sizeof ev);
  ev.ring = ring;
  ev.user = user;
  ev.type = type;
  ev.id = id;
  ev.timestamp = ts;
  ev.value = value;
  ocgc_stream_event(F.st, &ev);
}

static void begin(unsigned id, uint64_t ts) { feed(0, 0, OCGC_RT_BEGIN, id, ts, 0); }
static void end(unsigned id, uint64_t ts) { feed(0, 0, OCGC_RT_END, id, ts, 0); }
static void join(uint64_t ts) { feed(0, 1, OCGC_USER_UNIT, U_JOIN, ts, 0); }

static void cause_full(uint64_t ts)
{
  feed(0, 0, OCGC_RT_COUNTER, OCGC_CT_FORCE_MINOR_ALLOC_SMALL, ts, 1);
}

static struct ocgc_stream_stats stats(void)
{
  struct ocgc_stream_stats s = OCGC_OPTS_INIT(struct ocgc_stream_stats);
  ocgc_stream_stats(F.st, &s);
  return s;
}

/* An end closes the innermost open span of its id; spans above it close
 * with it, cut; an end with nothing to close is counted and dropped. */
START_TEST(pairing)
{
  open_fx(0, 1);
  begin(OCGC_PH_MINOR, 100);
  begin(OCGC_PH_MINOR_LOCAL_ROOTS, 110);
  feed(0, 1, OCGC_USER_SPAN_BEGIN, U_MINE, 120, 0);
  end(OCGC_PH_MINOR, 200);
  end(OCGC_PH_MAJOR_SLICE, 210);
  ck_assert_uint_eq(F.nspans, 3);
  ck_assert_uint_eq(F.spans[0].user, 1);
  ck_assert_int_eq(F.spans[0].cut, OCGC_CUT_UNTERMINATED);
  ck_assert_uint_eq(F.spans[0].depth, 2);
  ck_assert_uint_eq(F.spans[0].end, 200);
  ck_assert_int_eq(F.spans[1].cut, OCGC_CUT_UNTERMINATED);
  ck_assert_int_eq(F.spans[1].kind, -1);
  ck_assert_int_eq(F.spans[1].cause, -1);
  ck_assert_int_eq(F.spans[2].cut, OCGC_CUT_NONE);
  ck_assert_int_eq(F.spans[2].kind, OCGC_KIND_MINOR);
  ck_assert_uint_eq(F.spans[2].begin, 100);
  ck_assert_uint_eq(F.spans[2].end, 200);
  ck_assert_uint_lt(F.spans[2].seq, F.spans[1].seq);
  ck_assert_uint_eq(F.ncolls, 1);
  ck_assert_uint_eq(stats().unmatched_ends, 1);
  ck_assert_uint_eq(ocgc_stream_depth(F.st, 0), 0);
}
END_TEST

/* A cause belongs to the collection that begins next at its timestamp,
 * and to no later one (an ocgc file: its producer writes them together;
 * stock OCaml 5 files: stock_cause_claimed_later). */
START_TEST(cause_at_its_timestamp)
{
  open_fx(1, 1);
  cause_full(100);
  begin(OCGC_PH_MINOR, 100);
  end(OCGC_PH_MINOR, 150);
  cause_full(300);
  begin(OCGC_PH_MINOR, 301); /* not at the cause's time */
  end(OCGC_PH_MINOR, 350);
  begin(OCGC_PH_MINOR, 400); /* the cause was consumed: none */
  end(OCGC_PH_MINOR, 450);
  feed(0, 1, OCGC_USER_INT, U_EXPLICIT, 500, 1);
  begin(OCGC_PH_MAJOR_FINISH_CYCLE, 500);
  end(OCGC_PH_MAJOR_FINISH_CYCLE, 600);
  ck_assert_uint_eq(F.ncolls, 4);
  ck_assert_int_eq(F.colls[0].span.cause, OCGC_CAUSE_MINOR_HEAP_FULL);
  ck_assert_int_eq(F.colls[1].span.cause, OCGC_CAUSE_UNKNOWN);
  ck_assert_int_eq(F.colls[2].span.cause, OCGC_CAUSE_UNKNOWN);
  ck_assert_int_eq(F.colls[3].span.cause, OCGC_CAUSE_EXPLICIT);
  ck_assert_int_eq(F.colls[3].span.kind, OCGC_KIND_MAJOR_FINISH);
}
END_TEST

/* Counters and slice work inside a collection are its amounts; a
 * collection inside another is not outermost. */
START_TEST(amounts_and_nesting)
{
  open_fx(0, 1);
  begin(OCGC_PH_MAJOR_SLICE, 100);
  begin(OCGC_PH_MINOR, 110);
  feed(0, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED, 110, 4096);
  feed(0, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_PROMOTED, 150, 512);
  end(OCGC_PH_MINOR, 150);
  feed(0, 1, OCGC_USER_INT, U_WORK, 190, 777);
  end(OCGC_PH_MAJOR_SLICE, 200);
  ck_assert_uint_eq(F.ncolls, 2);
  ck_assert_int_eq(F.colls[0].outermost, 0);
  ck_assert_uint_eq(F.colls[0].allocated_bytes, 4096);
  ck_assert_uint_eq(F.colls[0].promoted_bytes, 512);
  ck_assert_int_eq(F.colls[1].outermost, 1);
  ck_assert_uint_eq(F.colls[1].slice_work_words, 777);
  ck_assert_uint_eq(F.colls[1].allocated_bytes, 0);
  /* one pause: the outermost collection, not the sum with the inner one */
  ck_assert_uint_eq(F.npauses, 1);
  ck_assert_uint_eq(F.pauses[0].duration_ns, 100);
  ck_assert_uint_eq(F.pauses[0].collections, 1);
  ck_assert_int_eq(F.pauses[0].rule, OCGC_PAUSE_NESTING);
}
END_TEST

/* With marks, a pause is its joined collections: their summed time, from
 * the first begin to the last end; it is delivered when the next stop
 * begins, and is pending (for snapshots) until then. */
START_TEST(marks_make_pauses)
{
  struct ocgc_pause p;
  open_fx(1, 1);
  ck_assert_int_eq(ocgc_stream_pause_rule(F.st), OCGC_PAUSE_MARKS);
  cause_full(100);
  begin(OCGC_PH_MINOR, 100);
  end(OCGC_PH_MINOR, 150);
  ck_assert_int_eq(ocgc_stream_pending_pause(F.st, 0, &p), 1);
  ck_assert_uint_eq(p.duration_ns, 50);
  join(160);
  begin(OCGC_PH_MAJOR_SLICE, 160);
  ck_assert_int_eq(ocgc_stream_pending_pause(F.st, 0, &p), 0); /* a collection is open */
  end(OCGC_PH_MAJOR_SLICE, 260);
  ck_assert_uint_eq(F.npauses, 0);
  begin(OCGC_PH_MINOR, 1000); /* no mark: a new stop */
  end(OCGC_PH_MINOR, 1010);
  ck_assert_uint_eq(F.npauses, 1);
  ck_assert_uint_eq(F.pauses[0].begin, 100);
  ck_assert_uint_eq(F.pauses[0].end, 260);
  ck_assert_uint_eq(F.pauses[0].duration_ns, 150);
  ck_assert_uint_eq(F.pauses[0].collections, 2);
  ck_assert_uint_le(F.pauses[0].duration_ns, F.pauses[0].end - F.pauses[0].begin);
  feed(0, 0, OCGC_RT_LIFECYCLE, OCGC_LC_RING_STOP, 2000, 0);
  ck_assert_uint_eq(F.npauses, 2);
  ck_assert_uint_eq(F.pauses[1].duration_ns, 10);
  ocgc_stream_finish(F.st);
  ck_assert_uint_eq(F.npauses, 2);
}
END_TEST

/* Without marks (a stock file), a join-like event means nothing. */
START_TEST(no_marks_no_joins)
{
  open_fx(0, 1);
  ck_assert_int_eq(ocgc_stream_pause_rule(F.st), OCGC_PAUSE_NESTING);
  begin(OCGC_PH_MINOR, 100);
  end(OCGC_PH_MINOR, 150);
  join(150);
  begin(OCGC_PH_MAJOR_SLICE, 150);
  end(OCGC_PH_MAJOR_SLICE, 250);
  ck_assert_uint_eq(F.npauses, 2);
}
END_TEST

/* Loss cuts the ring's open spans at its last timestamp, drops its pause,
 * and pairs nothing across; other rings are untouched. */
START_TEST(loss_cuts_one_ring)
{
  struct ocgc_span s;
  open_fx(1, 2);
  begin(OCGC_PH_MINOR, 100);
  end(OCGC_PH_MINOR, 150);
  join(160);
  begin(OCGC_PH_MAJOR_SLICE, 160);
  feed(0, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED, 170, 8);
  feed(1, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR, 165, 0);
  ck_assert_uint_eq(ocgc_stream_depth(F.st, 1), 1);
  ck_assert_int_eq(ocgc_stream_open_span(F.st, 1, 0, &s), 0);
  ck_assert_uint_eq(s.begin, 165);
  ck_assert_int_eq(ocgc_stream_open_span(F.st, 1, 1, &s), -EINVAL);
  ocgc_stream_lost(F.st, 0);
  ck_assert_uint_eq(F.nspans, 2);
  ck_assert_int_eq(F.spans[1].cut, OCGC_CUT_LOST);
  ck_assert_uint_eq(F.spans[1].end, 170);
  ck_assert_uint_eq(F.ncolls, 1); /* the cut slice is no collection */
  end(OCGC_PH_MAJOR_SLICE, 300); /* its begin is behind the gap */
  ck_assert_uint_eq(stats().unmatched_ends, 1);
  ocgc_stream_finish(F.st);
  ck_assert_uint_eq(F.npauses, 0); /* the pause of ring 0 was dropped */
  ck_assert_uint_eq(F.nspans, 3);
  ck_assert_uint_eq(F.spans[2].ring, 1);
  ck_assert_int_eq(F.spans[2].cut, OCGC_CUT_END);
}
END_TEST

/* A span that ends before it begins is counted, never delivered, and its
 * pause is dropped. */
START_TEST(end_before_begin)
{
  open_fx(0, 1);
  begin(OCGC_PH_MINOR, 500);
  end(OCGC_PH_MINOR, 400);
  ck_assert_uint_eq(stats().corrupt, 1);
  ck_assert_uint_eq(F.nspans + F.ncolls + F.npauses, 0);
  begin(OCGC_PH_MINOR, 600);
  end(OCGC_PH_MINOR, 700);
  ocgc_stream_settle(F.st); /* stock: a minor collection waits for its ring's next event */
  ck_assert_uint_eq(F.npauses, 1);
  ck_assert_uint_eq(F.pauses[0].duration_ns, 100);
}
END_TEST

/* Begins past the depth limit are counted and as many ends skipped; the
 * memory stays fixed whatever the producer nests. */
START_TEST(too_deep)
{
  unsigned i;
  open_fx(0, 1);
  for (i = 0; i < OCGC_STREAM_MAX_DEPTH + 10; i++) begin(OCGC_PH_MAJOR_MARK, 100 + i);
  ck_assert_uint_eq(ocgc_stream_depth(F.st, 0), OCGC_STREAM_MAX_DEPTH);
  ck_assert_uint_eq(stats().too_deep, 10);
  for (i = 0; i < 10; i++) end(OCGC_PH_MAJOR_MARK, 1000);
  ck_assert_uint_eq(F.nspans, 0);
  end(OCGC_PH_MAJOR_MARK, 1001);
  ck_assert_uint_eq(F.nspans, 1);
  ck_assert_uint_eq(ocgc_stream_depth(F.st, 0), OCGC_STREAM_MAX_DEPTH - 1);
}
END_TEST

/* Events of rings the source does not have are ignored. */
START_TEST(ring_out_of_range)
{
  open_fx(0, 1);
  feed(5, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR, 100, 0);
  feed(5, 0, OCGC_RT_END, OCGC_PH_MINOR, 200, 0);
  ocgc_stream_lost(F.st, 5);
  ck_assert_uint_eq(F.nspans, 0);
  ck_assert_uint_eq(ocgc_stream_depth(F.st, 5), 0);
}
END_TEST

/* ---- the fixtures: real files of stock OCaml 5.2 ---------------------------- */

struct fxsum {
  struct ocgc_stream *st;
  uint64_t outer_ns, outer, pause_ns, pauses, colls[OCGC_KIND_COUNT];
};

static int fx_event(const struct ocgc_event *ev, void *ctx)
{
  ocgc_stream_event(((struct fxsum *)ctx)->st, ev);
  return 0;
}

static void fx_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  (void)lost;
  (void)exact;
  ocgc_stream_lost(((struct fxsum *)ctx)->st, ring);
}

static void fx_coll(const struct ocgc_collection *c, void *ctx)
{
  struct fxsum *x = ctx;
  x->colls[c->span.kind]++;
  if (!c->outermost) return;
  x->outer++;
  x->outer_ns += c->span.end - c->span.begin;
}

static void fx_pause(const struct ocgc_pause *p, void *ctx)
{
  struct fxsum *x = ctx;
  x->pauses++;
  x->pause_ns += p->duration_ns;
  ck_assert_int_eq(p->rule, OCGC_PAUSE_NESTING);
  ck_assert_uint_eq(p->collections, 1);
}

/* Reads fixture [name] whole through a stream; returns its sums. */
static struct fxsum read_fixture(const char *name)
{
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_stream_opts so = OCGC_OPTS_INIT(struct ocgc_stream_opts);
  struct ocgc_source *src;
  struct ocgc_cursor *cur;
  struct fxsum x;
  char xz[600], file[600];
  memset(&x, 0, sizeof x);
  ck_assert_ptr_nonnull(tu_srcdir());
  snprintf(xz, sizeof xz, "%s/tests/fixtures/ocaml5.2/%s.events.xz", tu_srcdir(), name);
  tu_path(file, sizeof file, tmp, "f.events");
  ck_assert_int_eq(tu_unxz(xz, file), 0);
  ck_assert_int_eq(ocgc_source_open_path(file, NULL, &src), 0);
  so.on_collection = fx_coll;
  so.on_pause = fx_pause;
  so.ctx = &x;
  ck_assert_int_eq(ocgc_stream_new(src, &so, &x.st), 0);
  co.on_event = fx_event;
  co.on_lost = fx_lost;
  co.ctx = &x;
  co.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_cursor_new(src, &co, &cur), 0);
  while (ocgc_cursor_poll(cur, 0) > 0) {}
  ocgc_stream_finish(x.st);
  ck_assert_int_eq(ocgc_stream_pause_rule(x.st), OCGC_PAUSE_NESTING);
  ocgc_cursor_free(cur);
  ocgc_stream_free(x.st);
  x.st = NULL;
  ocgc_source_close(src);
  return x;
}

/* Stock files have no marks: one pause per outermost collection, and the
 * pauses add up to exactly the time in outermost collections. */
START_TEST(fixtures)
{
  static const char *const names[] = {"full-3695", "2021", "pt-3447", "instr-3452"};
  struct fxsum x = read_fixture(names[_i]);
  ck_assert_uint_gt(x.outer, 0);
  ck_assert_uint_eq(x.pauses, x.outer);
  ck_assert_uint_eq(x.pause_ns, x.outer_ns);
  if (_i == 0) { /* as `ocgc dump` counts its spans: every begin has its end */
    ck_assert_uint_eq(x.colls[OCGC_KIND_MINOR], 2963);
    ck_assert_uint_eq(x.colls[OCGC_KIND_MAJOR_SLICE], 2872);
    ck_assert_uint_eq(x.colls[OCGC_KIND_MAJOR_FINISH], 102);
  }
}
END_TEST

/* ---- the span orderer ---------------------------------------------------- */

struct given {
  unsigned n;
  uint64_t seq[8], begin[8], end[8];
  int open[8];
};

static void give(const struct ocgc_span *sp, int open, void *ctx)
{
  struct given *g = ctx;
  ck_assert_uint_lt(g->n, 8);
  g->seq[g->n] = sp->seq;
  g->begin[g->n] = sp->begin;
  g->end[g->n] = sp->end;
  g->open[g->n++] = open;
}

static struct ocgc_span span_at(uint64_t begin, uint64_t end, unsigned depth, uint64_t seq)
{
  struct ocgc_span sp;
  memset(&sp, 0, sizeof sp);
  sp.begin = begin;
  sp.end = end;
  sp.depth = depth;
  sp.seq = seq;
  sp.kind = OCGC_KIND_NONE;
  sp.cause = OCGC_CAUSE_NONE;
  return sp;
}

/* Spans close children first; a tree is given whole once its outermost
 * span closes, parents first and same-start siblings in begin order; an
 * end before its begin is given as the begin. */
START_TEST(order_tree)
{
  struct ocgc_span_order_opts o = OCGC_OPTS_INIT(struct ocgc_span_order_opts);
  struct ocgc_span_order *ord;
  struct given g;
  struct ocgc_span a = span_at(10, 20, 1, 2), b = span_at(10, 5, 1, 1), p = span_at(10, 30, 0, 0);
  memset(&g, 0, sizeof g);
  o.on_span = give;
  o.ctx = &g;
  ck_assert_int_eq(ocgc_span_order_new(0, &o, &ord), -EINVAL);
  o.on_span = NULL;
  ck_assert_int_eq(ocgc_span_order_new(1, &o, &ord), -EINVAL);
  o.on_span = give;
  ck_assert_int_eq(ocgc_span_order_new(1, &o, &ord), 0);
  ck_assert_int_eq(ocgc_span_order_add(ord, NULL, &a, 0), 0);
  ck_assert_int_eq(ocgc_span_order_add(ord, NULL, &b, 0), 0);
  ck_assert_uint_eq(g.n, 0); /* held: their parent is open */
  ck_assert_int_eq(ocgc_span_order_add(ord, NULL, &p, 0), 0);
  ck_assert_uint_eq(g.n, 3);
  ck_assert_uint_eq(g.seq[0], 0);
  ck_assert_uint_eq(g.seq[1], 1);
  ck_assert_uint_eq(g.seq[2], 2);
  ck_assert_uint_eq(g.end[1], 10);
  ck_assert_int_eq(g.open[0] | g.open[1] | g.open[2], 0);
  ocgc_span_order_free(ord);
}
END_TEST

static Suite *stream_suite(void)
{
  Suite *s = suite_create("stream");
  TCase *tc = tcase_create("rules");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, pairing);
  tcase_add_test(tc, cause_at_its_timestamp);
  tcase_add_test(tc, amounts_and_nesting);
  tcase_add_test(tc, marks_make_pauses);
  tcase_add_test(tc, no_marks_no_joins);
  tcase_add_test(tc, loss_cuts_one_ring);
  tcase_add_test(tc, end_before_begin);
  tcase_add_test(tc, too_deep);
  tcase_add_test(tc, ring_out_of_range);
  tcase_add_test(tc, order_tree);
  suite_add_tcase(s, tc);
  tc = tcase_create("fixtures");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, fixtures, 0, 4);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(stream_suite);
