/* dump.c - `ocgc dump`: decode a ring, print every event or a summary.
 *
 * The ring is a file named on the command line, or the ring of a live
 * process (--pid, optionally --dir), found and checked by libocgc's attach
 * API (common.h opens it).  The summary is "key value" lines, one fact
 * each, in a fixed order, so tests and scripts can read it (documented in
 * ocgc(1)).  Event counts (phase.*.begin/end, counter.*, user.*,
 * lifecycle.*) come from the events one by one; spans and causes from
 * libocgc's collection stream (the rules every consumer shares: spans
 * paired per ring, a cause claimed by the collection that begins at its
 * timestamp); "totals.*" and "config.*" (Gc.get) from the producer's extension block; "agg.*" from
 * libocgc's aggregator over the same ring, which reads it through the same
 * stream.  Invariant: on a ring that does not change while it is read (a
 * file), every cause.KIND.CAUSE line equals agg.cause.KIND.CAUSE.count, and
 * cause.KIND.none equals agg.cause.KIND.unknown.count (0 when absent):
 * both count the collections that ended, by the cause the stream gave
 * them (tests/cmd/dump_agree.sh).  A live producer keeps writing
 * while we read, so the number of polls is bounded: the dump is of the
 * ring as it was about when we came. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define MAX_PHASES 64

struct dump {
  struct ocgc_source *src;
  struct ocgc_stream *stream;
  enum ocgc_ids ids;
  int print_events;
  /* event counts */
  uint64_t begins[MAX_PHASES], ends[MAX_PHASES], counters[32], lifecycle[8];
  uint64_t counter_sum[32];
  uint64_t user_count[OCGC_WIRE_USER_EVENTS];
  uint64_t user_sum[OCGC_WIRE_USER_EVENTS];
  /* from the stream: phase spans that ended by their own end, collections */
  uint64_t span_n[MAX_PHASES], span_sum[MAX_PHASES], span_max[MAX_PHASES];
  uint64_t by_cause[OCGC_KIND_COUNT][OCGC_CAUSE_SLOTS];
};

static void print_event(struct dump *d, const struct ocgc_event *ev)
{
  const char *what = "?", *name = NULL;
  char esc[TOOL_ESC_SIZE(OCGC_WIRE_USER_NAME_LEN)];
  if (ev->user) {
    what = "user";
    name = ev->name;
  } else {
    switch (ev->type) {
    case OCGC_RT_LIFECYCLE: what = "lifecycle"; name = ocgc_lifecycle_name(ev->id); break;
    case OCGC_RT_BEGIN: what = "begin"; name = ocgc_phase_name(d->ids, ev->id); break;
    case OCGC_RT_END: what = "end"; name = ocgc_phase_name(d->ids, ev->id); break;
    case OCGC_RT_COUNTER: what = "counter"; name = ocgc_counter_name(d->ids, ev->id); break;
    case OCGC_RT_ALLOC: what = "alloc"; break;
    default: break;
    }
  }
  printf("%" PRIu64 " %u %s %s %" PRIu64 "\n", ev->timestamp, ev->ring, what,
         name ? tool_esc_word(name, esc, sizeof esc) : "-", ev->value);
}


/* ---- reading ------------------------------------------------------------------- */

static void count_event(struct dump *d, const struct ocgc_event *ev)
{
  if (ev->user) {
    d->user_count[ev->id]++;
    d->user_sum[ev->id] += ev->value;
  } else if (ev->type == OCGC_RT_BEGIN && ev->id < MAX_PHASES) {
    d->begins[ev->id]++;
  } else if (ev->type == OCGC_RT_END && ev->id < MAX_PHASES) {
    d->ends[ev->id]++;
  } else if (ev->type == OCGC_RT_COUNTER && ev->id < 32) {
    d->counters[ev->id]++;
    d->counter_sum[ev->id] += ev->value;
  } else if (ev->type == OCGC_RT_LIFECYCLE && ev->id < 8) {
    d->lifecycle[ev->id]++;
  }
}

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct dump *d = ctx;
  if (d->print_events) print_event(d, ev);
  count_event(d, ev);
  ocgc_stream_event(d->stream, ev);
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct dump *d = ctx;
  (void)lost;
  (void)exact;
  ocgc_stream_lost(d->stream, ring);
}

static void on_span(const struct ocgc_span *s, void *ctx)
{
  struct dump *d = ctx;
  uint64_t dur = s->end - s->begin;
  if (s->user || s->cut != OCGC_CUT_NONE || s->id >= MAX_PHASES) return;
  d->span_n[s->id]++;
  d->span_sum[s->id] += dur;
  if (dur > d->span_max[s->id]) d->span_max[s->id] = dur;
}

static void on_collection(const struct ocgc_collection *c, void *ctx)
{
  struct dump *d = ctx;
  if ((unsigned)c->span.kind < OCGC_KIND_COUNT && (unsigned)c->span.cause < OCGC_CAUSE_SLOTS)
    d->by_cause[c->span.kind][c->span.cause]++;
}

/* Every event of the ring (bounded: a live producer that keeps writing
 * cannot keep us here for ever) through a cursor and the stream. */
static int read_ring(struct dump *d, struct ocgc_cursor_stats *st)
{
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_stream_opts so = OCGC_OPTS_INIT(struct ocgc_stream_opts);
  struct ocgc_cursor *cur = NULL;
  int err;
  so.on_span = on_span;
  so.on_collection = on_collection;
  so.ctx = d;
  co.on_event = on_event;
  co.on_lost = on_lost;
  co.ctx = d;
  if ((err = ocgc_stream_new(d->src, &so, &d->stream)) != 0 ||
      (err = ocgc_cursor_new(d->src, &co, &cur)) != 0)
    return err;
  err = ocgc_cursor_drain(cur, NULL, NULL);
  ocgc_stream_finish(d->stream);
  ocgc_cursor_stats(cur, st);
  ocgc_cursor_free(cur);
  return err;
}

/* ---- the summary ----------------------------------------------------------------- */

/* Which clock timed the events and which sub-phase spans were written
 * (wire.h's ext flags; "unstated" for files of ext_version < 3). */
static void print_producer_timing(uint64_t flags)
{
  static const char *const clock[] = {"unstated", "monotonic", "tsc", "unknown"};
  static const char *const phases[] = {"unstated", "none", "measured", "all"};
  printf("producer.clock %s\n", clock[(flags & OCGC_EXT_CLOCK_MASK) >> OCGC_EXT_CLOCK_SHIFT]);
  printf("producer.phases %s\n", phases[(flags & OCGC_EXT_PHASES_MASK) >> OCGC_EXT_PHASES_SHIFT]);
}

static void print_source(const struct dump *d)
{
  char esc[TOOL_ESC_SIZE(OCGC_WIRE_USER_NAME_LEN)];
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  unsigned i;
  if (ocgc_source_info(d->src, &info) != 0) return;
  printf("file.max_domains %" PRIu64 "\n", info.max_domains);
  printf("file.ring_words %" PRIu64 "\n", info.ring_words);
  printf("file.ocgc %d\n", info.has_ext);
  printf("file.ids %s\n", tool_ids_name(info.ids));
  if (!info.has_ext) {
    struct tool_ids ti;
    if (tool_ids(d->src, &ti) != 0) return;
    /* a stock ring: why this numbering */
    printf("file.ids_from %s\n", ti.from);
    if (ti.ocaml[0]) printf("file.ids_ocaml %s\n", ti.ocaml);
    return;
  }
  printf("producer.pid %" PRIu64 "\n", info.pid);
  printf("producer.state %s\n", info.state == OCGC_STATE_EXITED ? "exited"
                                : info.state == OCGC_STATE_RUNNING ? "running" : "unknown");
  printf("producer.program %s\n", tool_esc(info.program, esc, sizeof esc));
  printf("producer.ocaml %s\n", tool_esc(info.ocaml_version, esc, sizeof esc));
  printf("producer.ocgc %s\n", tool_esc(info.ocgc_version, esc, sizeof esc));
  printf("producer.code %s\n", info.flags & OCGC_EXT_NATIVE ? "native" : "bytecode");
  printf("producer.created_ns %" PRIu64 "\n", info.created_ns);
  printf("producer.exited_ns %" PRIu64 "\n", info.exited_ns);
  print_producer_timing(info.flags);
  for (i = 0; i < info.max_domains; i++) {
    uint64_t w;
    if (ocgc_source_written(d->src, i, &w) == 0) printf("ring.%u.written %" PRIu64 "\n", i, w);
  }
}

static void print_phases(const struct dump *d)
{
  struct ocgc_stream_stats ss = OCGC_OPTS_INIT(struct ocgc_stream_stats);
  unsigned i;
  for (i = 0; i < MAX_PHASES; i++) {
    const char *n = ocgc_phase_name(d->ids, i);
    if (!d->begins[i] && !d->ends[i]) continue;
    n = n ? n : "?";
    printf("phase.%s.begin %" PRIu64 "\n", n, d->begins[i]);
    printf("phase.%s.end %" PRIu64 "\n", n, d->ends[i]);
    if (!d->span_n[i]) continue;
    printf("phase.%s.spans %" PRIu64 "\n", n, d->span_n[i]);
    printf("phase.%s.mean_ns %" PRIu64 "\n", n, d->span_sum[i] / d->span_n[i]);
    printf("phase.%s.max_ns %" PRIu64 "\n", n, d->span_max[i]);
  }
  ocgc_stream_stats(d->stream, &ss);
  printf("phase.unmatched_end %" PRIu64 "\n", ss.unmatched_ends);
}

static void print_counts(const struct dump *d, const struct ocgc_cursor_stats *st)
{
  char esc[TOOL_ESC_SIZE(OCGC_WIRE_USER_NAME_LEN)];
  unsigned i;
  printf("events.seen %" PRIu64 "\n", st->seen);
  printf("events.lost %" PRIu64 "\n", st->lost);
  printf("events.lost_exact %d\n", st->lost_exact);
  printf("events.skipped %" PRIu64 "\n", st->skipped);
  printf("events.lost_words %" PRIu64 "\n", st->lost_words);
  for (i = 0; i < 8; i++)
    if (d->lifecycle[i]) printf("lifecycle.%s %" PRIu64 "\n", ocgc_lifecycle_name(i), d->lifecycle[i]);
  print_phases(d);
  for (i = 0; i < 32; i++) {
    const char *n = ocgc_counter_name(d->ids, i);
    if (!d->counters[i]) continue;
    printf("counter.%s.count %" PRIu64 "\n", n ? n : "?", d->counters[i]);
    printf("counter.%s.sum %" PRIu64 "\n", n ? n : "?", d->counter_sum[i]);
  }
  for (i = 0; i < OCGC_WIRE_USER_EVENTS; i++) {
    const char *n;
    if (!d->user_count[i]) continue;
    n = ocgc_source_user_name(d->src, i);
    n = n ? tool_esc_word(n, esc, sizeof esc) : "?";
    printf("user.%s.count %" PRIu64 "\n", n, d->user_count[i]);
    printf("user.%s.sum %" PRIu64 "\n", n, d->user_sum[i]);
  }
}

/* Collections by cause; "none": no cause claimed them (OCGC_CAUSE_UNKNOWN). */
static void print_causes(const struct dump *d)
{
  unsigned k, c;
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    for (c = 0; c < OCGC_CAUSE_COUNT; c++)
      if (c != OCGC_CAUSE_UNKNOWN && d->by_cause[k][c])
        printf("cause.%s.%s %" PRIu64 "\n", ocgc_kind_name(k), ocgc_cause_name(c), d->by_cause[k][c]);
    printf("cause.%s.none %" PRIu64 "\n", ocgc_kind_name(k), d->by_cause[k][OCGC_CAUSE_UNKNOWN]);
  }
}

static void print_config(const struct dump *d)
{
  struct ocgc_gc_config g = OCGC_OPTS_INIT(struct ocgc_gc_config);
  if (ocgc_source_gc_config(d->src, &g) != 0) return;
  printf("config.minor_heap_size %" PRIu64 "\n", g.minor_heap_words);
  printf("config.space_overhead %" PRIu64 "\n", g.space_overhead);
  printf("config.max_overhead %" PRIu64 "\n", g.max_overhead);
  printf("config.allocation_policy %" PRIu64 "\n", g.allocation_policy);
}

static void print_totals(const struct dump *d)
{
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  unsigned k, c;
  print_config(d);
  if (ocgc_source_totals(d->src, &t) != 0) return;
  printf("totals.minor_collections %" PRIu64 "\n", t.minor_collections);
  printf("totals.major_collections %" PRIu64 "\n", t.major_collections);
  printf("totals.compactions %" PRIu64 "\n", t.compactions);
  printf("totals.forced_major_collections %" PRIu64 "\n", t.forced_major_collections);
  printf("totals.major_slices %" PRIu64 "\n", t.major_slices);
  printf("totals.minor_words %" PRIu64 "\n", t.minor_words);
  printf("totals.promoted_words %" PRIu64 "\n", t.promoted_words);
  printf("totals.major_words %" PRIu64 "\n", t.major_words);
  printf("totals.direct_major_words %" PRIu64 "\n", t.direct_major_words);
  printf("totals.heap_words %" PRIu64 "\n", t.heap_words);
  printf("totals.top_heap_words %" PRIu64 "\n", t.top_heap_words);
  printf("totals.heap_chunks %" PRIu64 "\n", t.heap_chunks);
  if (t.live_words != 0) printf("totals.live_words %" PRIu64 "\n", t.live_words);
  if (t.program_memprof != OCGC_MEMPROF_UNKNOWN)
    printf("totals.program_memprof %d\n", t.program_memprof == OCGC_MEMPROF_RUNNING);
  printf("totals.gc_time_ns %" PRIu64 "\n", t.gc_time_ns);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    printf("totals.%s_time_ns %" PRIu64 "\n", ocgc_kind_name(k), t.kind_time_ns[k]);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_COUNT; c++)
      if (t.by_cause[k][c])
        printf("totals.cause.%s.%s %" PRIu64 "\n", ocgc_kind_name(k), ocgc_cause_name(c),
               t.by_cause[k][c]);
}

/* ---- the allocation profile ------------------------------------------------------- */

static void print_counts3(const char *name, const struct ocgc_memprof_counts *c)
{
  printf(" %s=%" PRIu64 ",%" PRIu64 ",%" PRIu64, name, c->samples, c->words, c->blocks_x1024);
}

/* memprof.* keys: one copy of the table, its summary, and with --stacks a
 * line per row: 'memprof.stack I KIND depth=D cut=C index=X
 * alloc=S,W,B promoted=S,W,B freed=S,W,B live=S,W,B generation=G
 * frames=A,A,...' (samples, words, blocks x1024; return addresses in hex,
 * innermost first).  inuse_words follows ocgc_profile_values' rule: live
 * as of the last marking, or alloc - freed from a producer without it. */
static void print_memprof(const struct dump *d, int stacks)
{
  struct ocgc_memprof *p;
  uint64_t inuse = 0, promoted = 0;
  size_t i;
  unsigned f;
  if (ocgc_memprof_read(d->src, &p) != 0) return;
  for (i = 0; i < p->nstacks; i++) {
    inuse += p->stack[i].live_known ? p->stack[i].live.words
                                    : p->stack[i].alloc.words - p->stack[i].freed.words;
    promoted += p->stack[i].promoted.words;
  }
  printf("memprof.state %s\n", ocgc_memprof_state_name(p->state));
  printf("memprof.rate_bytes %" PRIu64 "\n", p->rate_bytes);
  printf("memprof.rate_changes %" PRIu64 "\n", p->rate_changes);
  printf("memprof.samples %" PRIu64 "\n", p->samples);
  printf("memprof.words %" PRIu64 "\n", p->words);
  printf("memprof.inuse_words %" PRIu64 "\n", inuse);
  printf("memprof.live_known %d\n", p->live_known);
  printf("memprof.live_cycle %" PRIu64 "\n", p->live_cycle);
  printf("memprof.promoted_words %" PRIu64 "\n", promoted);
  printf("memprof.stacks %zu\n", p->nstacks - 1);
  printf("memprof.table_rows %" PRIu64 "\n", p->table_rows);
  printf("memprof.overflow %" PRIu64 "\n", p->overflow_samples);
  printf("memprof.cut %" PRIu64 "\n", p->cut_samples);
  printf("memprof.followed %" PRIu64 "\n", p->followed);
  printf("memprof.unfollowed %" PRIu64 "\n", p->unfollowed);
  printf("memprof.control_seen %" PRIu64 "\n", p->control_seen);
  printf("memprof.control_result %d\n", (int)p->control_result);
  printf("memprof.control_refused %" PRIu64 "\n", p->control_refused);
  printf("memprof.base_rate_bytes %" PRIu64 "\n", p->base_rate);
  printf("memprof.rate_leased %d\n", p->rate_leased);
  printf("memprof.leases_alive %u\n", p->leases_alive);
  /* one value (a key and a value a line): the slots' holders, commas between */
  printf("memprof.lease_holders %d,%d,%d,%d\n", p->lease_pid[0], p->lease_pid[1],
         p->lease_pid[2], p->lease_pid[3]);
  printf("memprof.lease_refused %" PRIu64 "\n", p->lease_refused);
  printf("memprof.lease_ns %" PRIu64 "\n", p->lease_ns);
  for (i = 0; stacks && i < p->nstacks; i++) {
    const struct ocgc_memprof_stack *st = &p->stack[i];
    printf("memprof.stack %zu %s depth=%u cut=%d index=%u", i,
           st->overflow ? "overflow" : ocgc_memprof_kind_name(st->kind), st->depth, st->cut,
           st->alloc_index);
    print_counts3("alloc", &st->alloc);
    print_counts3("promoted", &st->promoted);
    print_counts3("freed", &st->freed);
    print_counts3("live", &st->live);
    printf(" generation=%" PRIu64, st->generation);
    printf(" frames=");
    for (f = 0; f < st->depth; f++) printf("%s%" PRIx64, f ? "," : "", st->frames[f]);
    printf("\n");
  }
  ocgc_memprof_free(p);
}

/* ---- a recording's flight block ----------------------------------------------------- */

/* flight.* keys: the block's meta, then 'flight.second I t=T pauses=N
 * pause_ns=N max_ns=N minor=N major_slice=N major_finish=N compaction=N
 * alloc=B promo=B heap=B top_heap=B lost=N rss=B cg_usage=B' per second;
 * a block that does not hold together: 'flight.error MESSAGE' (words). */
static void print_flight(const struct dump *d)
{
  char esc[TOOL_ESC_SIZE(256)];
  struct ocgc_flight_meta m = OCGC_OPTS_INIT(struct ocgc_flight_meta);
  struct ocgc_flight_second *sec;
  unsigned n, i;
  int err = ocgc_flight_read(d->src, &m);
  if (err == -ENOENT) return;
  if (err != 0) {
    printf("flight.error %s\n", tool_esc_word(ocgc_strerror(err), esc, sizeof esc));
    return;
  }
  printf("flight.reason %s\n", ocgc_flight_reason_name(m.reason));
  printf("flight.detail %s\n", tool_esc(m.detail, esc, sizeof esc));
  printf("flight.recorded_ns %" PRIu64 "\n", m.recorded_ns);
  printf("flight.window_s %" PRIu64 "\n", m.window_s);
  printf("flight.pid %d\n", m.pid);
  printf("flight.start_ticks %" PRIu64 "\n", m.start_ticks);
  printf("flight.program %s\n", tool_esc_word(m.program, esc, sizeof esc));
  printf("flight.exe %s\n", tool_esc_word(m.exe, esc, sizeof esc));
  printf("flight.build_id %s\n", tool_esc_word(m.build_id, esc, sizeof esc));
  printf("flight.exit.known %d\n", m.exit.known);
  printf("flight.exit.how %d\n", m.exit.how);
  printf("flight.exit.code %d\n", m.exit.code);
  printf("flight.exit.signal %d\n", m.exit.signal);
  printf("flight.exit.core_dumped %d\n", m.exit.core_dumped);
  printf("flight.exit.oom_killed %d\n", m.exit.oom_killed);
  printf("flight.exit.exit_mark %d\n", m.exit.exit_mark);
  printf("flight.exit.gone_ns %" PRIu64 "\n", m.exit.gone_ns);
  printf("flight.rss_bytes %" PRIu64 "\n", m.rss_bytes);
  printf("flight.memcg.known %d\n", m.memcg.known);
  if (m.memcg.known) {
    printf("flight.memcg.v2 %d\n", m.memcg.v2);
    printf("flight.memcg.path %s\n", tool_esc_word(m.memcg.path, esc, sizeof esc));
    printf("flight.memcg.usage %" PRIu64 "\n", m.memcg.usage);
    printf("flight.memcg.limit %" PRIu64 "\n", m.memcg.limit);
    printf("flight.memcg.peak %" PRIu64 "\n", m.memcg.peak);
    printf("flight.memcg.oom_kills %" PRIu64 "\n", m.memcg.oom_kills);
  }
  if ((sec = calloc(OCGC_FLIGHT_MAX_WINDOW_S, sizeof *sec)) == NULL) return;
  n = ocgc_flight_read_seconds(d->src, sec, OCGC_FLIGHT_MAX_WINDOW_S);
  printf("flight.seconds %u\n", n);
  for (i = 0; i < n; i++) {
    const struct ocgc_flight_second *s = &sec[i];
    printf("flight.second %u t=%" PRIu64 " pauses=%" PRIu64 " pause_ns=%" PRIu64 " max_ns=%" PRIu64,
           i, s->t, s->pauses, s->pause_ns, s->max_ns);
    printf(" minor=%" PRIu64 " major_slice=%" PRIu64 " major_finish=%" PRIu64 " compaction=%" PRIu64,
           s->coll[OCGC_KIND_MINOR], s->coll[OCGC_KIND_MAJOR_SLICE],
           s->coll[OCGC_KIND_MAJOR_FINISH], s->coll[OCGC_KIND_COMPACTION]);
    printf(" alloc=%" PRIu64 " promo=%" PRIu64 " heap=%" PRIu64 " top_heap=%" PRIu64
           " lost=%" PRIu64 " rss=%" PRIu64 " cg_usage=%" PRIu64 "\n",
           s->alloc, s->promo, s->heap, s->top_heap, s->lost, s->rss, s->cg_usage);
  }
  free(sec);
}

/* ---- the aggregate ---------------------------------------------------------------- */

static void print_agg_counters(const struct ocgc_snapshot *snap)
{
  static const double pcts[] = {50, 90, 99, 99.9};
  static const char *const pct_names[] = {"p50", "p90", "p99", "p99_9"};
  const struct ocgc_hist *h = ocgc_snapshot_pauses(snap);
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  unsigned k;
  ocgc_snapshot_counters(snap, &c);
  printf("agg.exact %d\n", c.exact);
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    printf("agg.collections.%s %" PRIu64 "\n", ocgc_kind_name(k), c.collections[k]);
    printf("agg.event_collections.%s %" PRIu64 "\n", ocgc_kind_name(k), c.event_collections[k]);
  }
  /* by hand, not a loop over the counters' table: the agg.* keys are a
   * fixed order that ocgc(1) documents and tests read (the golden records),
   * a chosen few of the fields */
  printf("agg.major_cycles %" PRIu64 "\n", c.major_cycles);
  printf("agg.forced_majors %" PRIu64 "\n", c.forced_majors);
  printf("agg.allocated_bytes %" PRIu64 "\n", c.allocated_bytes);
  printf("agg.promoted_bytes %" PRIu64 "\n", c.promoted_bytes);
  printf("agg.heap_bytes %" PRIu64 "\n", c.heap_bytes);
  printf("agg.gc_time_ns %" PRIu64 "\n", c.gc_time_ns);
  printf("agg.pauses %" PRIu64 "\n", c.pauses);
  printf("agg.pause_rule %s\n", c.pause_rule == OCGC_PAUSE_MARKS ? "marks" : "nesting");
  for (k = 0; k < sizeof pcts / sizeof pcts[0]; k++)
    printf("agg.pause.%s_ns %" PRIu64 "\n", pct_names[k], ocgc_hist_percentile(h, pcts[k]));
  printf("agg.pause.max_ns %" PRIu64 "\n", ocgc_hist_max(h));
}

static void print_agg_kinds(const struct ocgc_snapshot *snap)
{
  unsigned k, cause;
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    const struct ocgc_hist *h = ocgc_snapshot_kind(snap, k);
    const char *kn = ocgc_kind_name(k);
    printf("agg.kind.%s.count %" PRIu64 "\n", kn, ocgc_hist_count(h));
    printf("agg.kind.%s.max_ns %" PRIu64 "\n", kn, ocgc_hist_max(h));
    for (cause = 0; cause < OCGC_CAUSE_COUNT; cause++) {
      const char *cn = ocgc_cause_name(cause);
      struct ocgc_cause_row row = OCGC_OPTS_INIT(struct ocgc_cause_row);
      if (ocgc_snapshot_cause(snap, k, cause, &row) != 0 || row.count == 0) continue;
      printf("agg.cause.%s.%s.count %" PRIu64 "\n", kn, cn, row.count);
      printf("agg.cause.%s.%s.total_ns %" PRIu64 "\n", kn, cn, row.total_ns);
      printf("agg.cause.%s.%s.worst_ns %" PRIu64 "\n", kn, cn, row.worst_ns);
    }
  }
}

/* The same ring through libocgc's aggregator: counters (exact from the
 * producer's totals when the file has them), pause percentiles, durations
 * per collection kind, and the cause table. */
static int print_aggregate(struct ocgc_source *src)
{
  struct ocgc_agg *agg;
  struct ocgc_snapshot *snap = NULL;
  int err = ocgc_agg_new(src, NULL, &agg);
  if (err) return err;
  if ((err = ocgc_agg_drain(agg, NULL, NULL)) == 0 &&
      (err = ocgc_agg_snapshot(agg, &snap)) == 0) {
    print_agg_counters(snap);
    print_agg_kinds(snap);
  }
  ocgc_snapshot_free(snap);
  ocgc_agg_free(agg);
  return err;
}

static void dump_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc dump [--events] [--stacks] [--ids 5.2|5.3|5.4] [--file] FILE\n"
          "       ocgc dump [--events] [--stacks] [--ids 5.2|5.3|5.4] --pid PID [--dir DIR]\n\n"
          "Decode the ring file FILE (a <pid>.events file written by the ocgc\n"
          "runtime or by OCaml 5), or the ring of the running process PID, and\n"
          "print a summary: one 'key value' line per fact.  --events prints every\n"
          "event first, one per line: 'timestamp ring kind name value'.  --ids says\n"
          "which OCaml numbered a stock file's events (default: for --pid, read from\n"
          "the process's executable; for a FILE, 5.2, assumed); file.ids_from says\n"
          "where the numbering came from (executable, option, assumed).  The\n"
          "memprof.* keys summarise the allocation profile (a file of ocgc 0.x with\n"
          "one); --stacks adds a 'memprof.stack' line per call stack.  A recording\n"
          "(a ring file with a flight block: ocgc_flight_write) also has flight.*\n"
          "keys: why it was made, how the process ended, who it was, its memory,\n"
          "and a 'flight.second' line per second of its history.\n\n"
          "--pid PID finds the ring that process PID has mapped (in any folder),\n"
          "and checks that the ring is that very process's and that it still runs\n"
          "(pid, start time and boot in the ring's header); --dir DIR looks for\n"
          "DIR/PID.events instead of searching the process's memory map.  A ring\n"
          "whose process has exited or was killed is refused as stale: dump its\n"
          "FILE instead.  The summary of a live process is of the moment of the\n"
          "dump.\n");
}

/* The options and operands into t and *events: 0, or the exit code. */
static int parse_args(int argc, char **argv, struct tool_target *t, int *events, int *stacks)
{
  static const struct option longopts[] = {
    {"events", no_argument, NULL, 'e'},
    {"stacks", no_argument, NULL, 's'},
    TOOL_LONGOPT_IDS,
    {"pid", required_argument, NULL, 'p'},
    TOOL_LONGOPT_DIR,
    TOOL_LONGOPT_FILE,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt, c;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    if ((c = tool_common_opt(opt, optarg, t, NULL)) != 0) {
      if (c != 1) return c;
      continue;
    }
    switch (opt) {
    case 'e': *events = 1; break;
    case 's': *stacks = 1; break;
    case 'p':
      if (tool_parse_pid(optarg) < 0)
        return tool_usage_error("--pid takes a process id, not '%s'", optarg);
      tool_target_pid(t, optarg, NULL);
      break;
    case 'h': dump_usage(stdout); exit(0);
    default: dump_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (t->dir != NULL && t->pid == 0) return tool_usage_error("--dir goes with --pid");
  if (t->pid != 0 && (optind != argc || t->file != NULL))
    return tool_usage_error("give --pid or a FILE, not both");
  if (t->file != NULL && optind != argc) return tool_usage_error("give --file FILE or FILE, not both");
  if (t->pid == 0 && t->file == NULL && optind != argc - 1) {
    dump_usage(stderr);
    return TOOL_EXIT_USAGE;
  }
  if (t->pid == 0 && t->file == NULL) t->file = argv[optind];
  return 0;
}

/* Open the target.  A file's errors are said in libocgc's own words (as
 * scripts expect them), a process's as common.h says them. */
static int open_target(struct tool_target *t, struct ocgc_source **src)
{
  struct ocgc_open_opts oo = OCGC_OPTS_INIT(struct ocgc_open_opts);
  int err;
  if (t->pid > 0) return tool_exit_code(tool_target_open(t, src));
  oo.ids = t->ids;
  if ((err = ocgc_source_open_path(t->file, &oo, src)) != 0) return tool_target_error(t, err);
  return 0;
}

int cmd_dump(int argc, char **argv)
{
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct tool_target t;
  struct dump *d;
  int err, rc, events = 0, stacks = 0;
  memset(&t, 0, sizeof t);
  if ((rc = parse_args(argc, argv, &t, &events, &stacks)) != 0) return rc;
  if ((d = calloc(1, sizeof *d)) == NULL) {
    tool_say("out of memory");
    return TOOL_EXIT_ERROR;
  }
  d->print_events = events;
  if ((rc = open_target(&t, &d->src)) == 0) {
    struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
    /* The numbering the source uses: an ocgc file's own (OCGC_IDS), else
     * --ids. */
    d->ids = ocgc_source_info(d->src, &info) == 0 ? info.ids : OCGC_IDS_52;
    if ((err = read_ring(d, &st)) == 0) {
      print_source(d);
      print_counts(d, &st);
      print_causes(d);
      print_totals(d);
      print_memprof(d, stacks);
      print_flight(d);
      err = print_aggregate(d->src);
    }
    if (err) rc = tool_target_error(&t, err);
  }
  ocgc_stream_free(d->stream);
  ocgc_source_close(d->src);
  free(d);
  return rc;
}
