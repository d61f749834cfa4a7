/* dump.c - `ocgc dump`: decode a ring file, print every event or a summary.
 *
 * The ring is a file named on the command line, or the ring of a live
 * process (--pid, optionally --dir), found and checked by libocgc's attach
 * API.  The summary is "key value" lines, one fact each, in a fixed order,
 * so tests and scripts can read it (documented in ocgc(1)).  Counts come
 * from the events; "totals.*" lines come from the producer's extension
 * block.  A live producer keeps writing while we read, so the number of
 * polls is bounded: the dump is of the ring as it was about when we came. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ocgc/consumer.h"
#include "util.h"

#define MAX_PHASES 64
#define MAX_DEPTH 64

struct dump {
  struct ocgc_source *src;
  enum ocgc_ids ids;
  int print_events;
  /* counts */
  uint64_t events, begins[MAX_PHASES], ends[MAX_PHASES], counters[32], lifecycle[8];
  uint64_t counter_sum[32];
  uint64_t by_cause[OCGC_KIND_COUNT][OCGC_CAUSE_SLOTS], uncaused[OCGC_KIND_COUNT];
  uint64_t user_count[OCGC_WIRE_USER_EVENTS];
  uint64_t user_sum[OCGC_WIRE_USER_EVENTS];
  uint64_t unmatched_end;
  /* span durations per phase, from begin/end pairs */
  uint64_t span_n[MAX_PHASES], span_sum[MAX_PHASES], span_max[MAX_PHASES];
  unsigned stack_phase[MAX_DEPTH];
  uint64_t stack_ts[MAX_DEPTH];
  unsigned depth;
  /* the cause announced just before a collection */
  int pending_cause;
  uint64_t pending_ts;
  uint64_t lost, lost_calls;
  int lost_exact;
};

static void print_event(struct dump *d, const struct ocgc_event *ev)
{
  const char *what = "?", *name = NULL;
  char esc[OCGC_ESC_SIZE(OCGC_WIRE_USER_NAME_LEN)];
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
         name ? ocgc_esc(name, esc, sizeof esc) : "-", ev->value);
}

static void on_span(struct dump *d, const struct ocgc_event *ev)
{
  if (ev->id >= MAX_PHASES) return;
  if (ev->type == OCGC_RT_BEGIN) {
    d->begins[ev->id]++;
    if (d->depth < MAX_DEPTH) {
      d->stack_phase[d->depth] = ev->id;
      d->stack_ts[d->depth] = ev->timestamp;
    }
    d->depth++;
    return;
  }
  d->ends[ev->id]++;
  if (d->depth == 0 || d->depth > MAX_DEPTH || d->stack_phase[d->depth - 1] != ev->id) {
    d->unmatched_end++;
    d->depth = 0; /* lost events broke the nesting: start over */
    return;
  }
  d->depth--;
  {
    uint64_t dur = ev->timestamp - d->stack_ts[d->depth];
    d->span_n[ev->id]++;
    d->span_sum[ev->id] += dur;
    if (dur > d->span_max[ev->id]) d->span_max[ev->id] = dur;
  }
}

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct dump *d = ctx;
  int cause, begin, kind;
  d->events++;
  if (d->print_events) print_event(d, ev);
  cause = ocgc_event_cause(d->src, ev);
  if (cause >= 0) {
    d->pending_cause = cause;
    d->pending_ts = ev->timestamp;
  }
  kind = ocgc_event_kind(d->src, ev, &begin);
  if (kind >= 0 && begin) {
    if (d->pending_cause >= 0 && d->pending_ts == ev->timestamp)
      d->by_cause[kind][d->pending_cause]++;
    else
      d->uncaused[kind]++;
    d->pending_cause = -1;
  }
  if (ev->user) {
    d->user_count[ev->id]++;
    d->user_sum[ev->id] += ev->value;
  } else if (ev->type == OCGC_RT_BEGIN || ev->type == OCGC_RT_END) {
    on_span(d, ev);
  } else if (ev->type == OCGC_RT_COUNTER && ev->id < 32) {
    d->counters[ev->id]++;
    d->counter_sum[ev->id] += ev->value;
  } else if (ev->type == OCGC_RT_LIFECYCLE && ev->id < 8) {
    d->lifecycle[ev->id]++;
  }
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct dump *d = ctx;
  (void)ring;
  d->lost += lost;
  d->lost_calls++;
  d->lost_exact = exact;
  d->depth = 0;
  d->pending_cause = -1;
}

static void print_summary(struct dump *d, const struct ocgc_cursor_stats *st)
{
  char esc[OCGC_ESC_SIZE(OCGC_WIRE_USER_NAME_LEN)];
  struct ocgc_source_info info;
  struct ocgc_totals t;
  unsigned i, k, c;

  if (ocgc_source_info(d->src, &info) == 0) {
    printf("file.max_domains %" PRIu64 "\n", info.max_domains);
    printf("file.ring_words %" PRIu64 "\n", info.ring_words);
    printf("file.ocgc %d\n", info.has_ext);
    printf("file.ids %s\n", info.ids == OCGC_IDS_53 ? "5.3" : "5.2");
    if (info.has_ext) {
      printf("producer.pid %" PRIu64 "\n", info.pid);
      printf("producer.state %s\n", info.state == OCGC_STATE_EXITED ? "exited"
                                    : info.state == OCGC_STATE_RUNNING ? "running" : "unknown");
      printf("producer.program %s\n", ocgc_esc(info.program, esc, sizeof esc));
      printf("producer.ocaml %s\n", ocgc_esc(info.ocaml_version, esc, sizeof esc));
      printf("producer.ocgc %s\n", ocgc_esc(info.ocgc_version, esc, sizeof esc));
      printf("producer.code %s\n", info.flags & OCGC_EXT_NATIVE ? "native" : "bytecode");
      for (i = 0; i < info.max_domains; i++) {
        uint64_t w;
        if (ocgc_source_written(d->src, i, &w) == 0)
          printf("ring.%u.written %" PRIu64 "\n", i, w);
      }
    }
  }
  printf("events.seen %" PRIu64 "\n", st->seen);
  printf("events.lost %" PRIu64 "\n", st->lost);
  printf("events.lost_exact %d\n", st->lost_exact);
  printf("events.skipped %" PRIu64 "\n", st->skipped);
  printf("events.lost_words %" PRIu64 "\n", st->lost_words);
  for (i = 0; i < 8; i++)
    if (d->lifecycle[i]) printf("lifecycle.%s %" PRIu64 "\n", ocgc_lifecycle_name(i), d->lifecycle[i]);
  for (i = 0; i < MAX_PHASES; i++) {
    const char *n = ocgc_phase_name(d->ids, i);
    if (!d->begins[i] && !d->ends[i]) continue;
    printf("phase.%s.begin %" PRIu64 "\n", n ? n : "?", d->begins[i]);
    printf("phase.%s.end %" PRIu64 "\n", n ? n : "?", d->ends[i]);
    if (d->span_n[i]) {
      printf("phase.%s.spans %" PRIu64 "\n", n ? n : "?", d->span_n[i]);
      printf("phase.%s.mean_ns %" PRIu64 "\n", n ? n : "?", d->span_sum[i] / d->span_n[i]);
      printf("phase.%s.max_ns %" PRIu64 "\n", n ? n : "?", d->span_max[i]);
    }
  }
  printf("phase.unmatched_end %" PRIu64 "\n", d->unmatched_end);
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
    n = n ? ocgc_esc(n, esc, sizeof esc) : "?";
    printf("user.%s.count %" PRIu64 "\n", n, d->user_count[i]);
    printf("user.%s.sum %" PRIu64 "\n", n, d->user_sum[i]);
  }
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    for (c = 0; c < OCGC_CAUSE_COUNT; c++)
      if (d->by_cause[k][c])
        printf("cause.%s.%s %" PRIu64 "\n", ocgc_kind_name(k), ocgc_cause_name(c), d->by_cause[k][c]);
    printf("cause.%s.none %" PRIu64 "\n", ocgc_kind_name(k), d->uncaused[k]);
  }
  if (ocgc_source_totals(d->src, &t) == 0) {
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
    printf("totals.gc_time_ns %" PRIu64 "\n", t.gc_time_ns);
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      printf("totals.%s_time_ns %" PRIu64 "\n", ocgc_kind_name(k), t.kind_time_ns[k]);
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      for (c = 0; c < OCGC_CAUSE_COUNT; c++)
        if (t.by_cause[k][c])
          printf("totals.cause.%s.%s %" PRIu64 "\n", ocgc_kind_name(k), ocgc_cause_name(c),
                 t.by_cause[k][c]);
  }
}

/* The same events through libocgc's aggregator: counters (exact from the
 * producer's totals when the file has them), pause percentiles, durations
 * per collection kind, and the cause table. */
static int print_aggregate(struct ocgc_source *src)
{
  static const double pcts[] = {50, 90, 99, 99.9};
  static const char *const pct_names[] = {"p50", "p90", "p99", "p99_9"};
  struct ocgc_agg *agg;
  struct ocgc_snapshot *snap;
  struct ocgc_counters c;
  const struct ocgc_hist *h;
  unsigned k, cause;
  int err = ocgc_agg_new(src, NULL, &agg);
  if (err) return err;
  if ((err = ocgc_drain_agg(agg, ocgc_drain_events(src), NULL)) != 0 ||
      (err = ocgc_agg_snapshot(agg, &snap)) != 0) {
    ocgc_agg_free(agg);
    return err;
  }
  ocgc_snapshot_counters(snap, &c);
  printf("agg.exact %d\n", c.exact);
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    printf("agg.collections.%s %" PRIu64 "\n", ocgc_kind_name(k), c.collections[k]);
    printf("agg.event_collections.%s %" PRIu64 "\n", ocgc_kind_name(k), c.event_collections[k]);
  }
  printf("agg.major_cycles %" PRIu64 "\n", c.major_cycles);
  printf("agg.forced_majors %" PRIu64 "\n", c.forced_majors);
  printf("agg.allocated_bytes %" PRIu64 "\n", c.allocated_bytes);
  printf("agg.promoted_bytes %" PRIu64 "\n", c.promoted_bytes);
  printf("agg.heap_bytes %" PRIu64 "\n", c.heap_bytes);
  printf("agg.gc_time_ns %" PRIu64 "\n", c.gc_time_ns);
  printf("agg.pauses %" PRIu64 "\n", c.pauses);
  h = ocgc_snapshot_pauses(snap);
  for (k = 0; k < sizeof pcts / sizeof pcts[0]; k++)
    printf("agg.pause.%s_ns %" PRIu64 "\n", pct_names[k], ocgc_hist_percentile(h, pcts[k]));
  printf("agg.pause.max_ns %" PRIu64 "\n", ocgc_hist_max(h));
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    h = ocgc_snapshot_kind(snap, k);
    printf("agg.kind.%s.count %" PRIu64 "\n", ocgc_kind_name(k), ocgc_hist_count(h));
    printf("agg.kind.%s.max_ns %" PRIu64 "\n", ocgc_kind_name(k), ocgc_hist_max(h));
    for (cause = 0; cause < OCGC_CAUSE_COUNT; cause++) {
      struct ocgc_cause_row row;
      if (ocgc_snapshot_cause(snap, k, cause, &row) != 0 || row.count == 0) continue;
      printf("agg.cause.%s.%s.count %" PRIu64 "\n", ocgc_kind_name(k), ocgc_cause_name(cause), row.count);
      printf("agg.cause.%s.%s.total_ns %" PRIu64 "\n", ocgc_kind_name(k), ocgc_cause_name(cause),
             row.total_ns);
      printf("agg.cause.%s.%s.worst_ns %" PRIu64 "\n", ocgc_kind_name(k), ocgc_cause_name(cause),
             row.worst_ns);
    }
  }
  ocgc_snapshot_free(snap);
  ocgc_agg_free(agg);
  return 0;
}

static void dump_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc dump [--events] [--ids 5.2|5.3] FILE\n"
          "       ocgc dump [--events] [--ids 5.2|5.3] --pid PID [--dir DIR]\n\n"
          "Decode the ring file FILE (a <pid>.events file written by the ocgc\n"
          "runtime or by OCaml 5), or the ring of the running process PID, and\n"
          "print a summary: one 'key value' line per fact.  --events prints every\n"
          "event first, one per line: 'timestamp ring kind name value'.  --ids says\n"
          "which OCaml numbered a stock file's events (default 5.2).\n\n"
          "--pid PID finds the ring that process PID has mapped (in any folder),\n"
          "and checks that the ring is that very process's and that it still runs\n"
          "(pid, start time and boot in the ring's header); --dir DIR looks for\n"
          "DIR/PID.events instead of searching the process's memory map.  A ring\n"
          "whose process has exited or was killed is refused as stale: dump its\n"
          "FILE instead.  The summary of a live process is of the moment of the\n"
          "dump.\n");
}

int cmd_dump(int argc, char **argv)
{
  static const struct option longopts[] = {
    {"events", no_argument, NULL, 'e'},
    {"ids", required_argument, NULL, 'i'},
    {"pid", required_argument, NULL, 'p'},
    {"dir", required_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  struct ocgc_open_opts oo = OCGC_OPTS_INIT(struct ocgc_open_opts);
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor_stats st;
  struct ocgc_cursor *cur = NULL;
  struct dump *d;
  const char *what;
  char label[32];
  int opt, err, pid = 0;

  d = calloc(1, sizeof *d);
  if (d == NULL) { fprintf(stderr, "ocgc dump: out of memory\n"); return OCGC_EXIT_ERROR; }
  d->pending_cause = -1;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'e': d->print_events = 1; break;
    case 'i':
      if (strcmp(optarg, "5.2") == 0) oo.ids = OCGC_IDS_52;
      else if (strcmp(optarg, "5.3") == 0) oo.ids = OCGC_IDS_53;
      else {
        fprintf(stderr, "ocgc dump: --ids takes 5.2 or 5.3, not '%s'\n", optarg);
        free(d);
        return OCGC_EXIT_USAGE;
      }
      break;
    case 'p':
      pid = ocgc_cmd_parse_pid(optarg);
      if (pid < 0) {
        fprintf(stderr, "ocgc dump: --pid takes a process id, not '%s'\n", optarg);
        free(d);
        return OCGC_EXIT_USAGE;
      }
      break;
    case 'd': ao.dir = optarg; break;
    case 'h': dump_usage(stdout); free(d); return 0;
    default: dump_usage(stderr); free(d); return OCGC_EXIT_USAGE;
    }
  }
  if (ao.dir != NULL && pid == 0) {
    fprintf(stderr, "ocgc dump: --dir goes with --pid\n");
    free(d);
    return OCGC_EXIT_USAGE;
  }
  if (pid != 0 ? optind != argc : optind != argc - 1) {
    if (pid != 0) fprintf(stderr, "ocgc dump: give --pid or a FILE, not both\n");
    else dump_usage(stderr);
    free(d);
    return OCGC_EXIT_USAGE;
  }
  if (pid != 0) {
    ao.ids = oo.ids;
    snprintf(label, sizeof label, "process %d", pid);
    what = label;
    err = ocgc_source_open_pid(pid, &ao, &d->src);
    if (err) {
      ocgc_cmd_attach_error("dump", pid, ao.dir, err);
      free(d);
      return ocgc_exit_code(err);
    }
  } else {
    what = argv[optind];
    err = ocgc_source_open_path(what, &oo, &d->src);
    if (err) {
      fprintf(stderr, "ocgc dump: %s: %s\n", what, ocgc_strerror(err));
      free(d);
      return ocgc_exit_code(err);
    }
  }
  d->ids = oo.ids == OCGC_IDS_53 ? OCGC_IDS_53 : OCGC_IDS_52;
  co.on_event = on_event;
  co.on_lost = on_lost;
  co.ctx = d;
  /* The whole file; a live producer that keeps writing cannot keep us
   * here for ever. */
  err = ocgc_cursor_new(d->src, &co, &cur);
  if (err == 0) err = ocgc_drain_cursor(cur, ocgc_drain_events(d->src), NULL);
  if (err) {
    fprintf(stderr, "ocgc dump: %s: %s\n", what, ocgc_strerror(err));
  } else {
    ocgc_cursor_stats(cur, &st);
    print_summary(d, &st);
    err = print_aggregate(d->src);
    if (err) fprintf(stderr, "ocgc dump: %s: %s\n", what, ocgc_strerror(err));
  }
  ocgc_cursor_free(cur);
  ocgc_source_close(d->src);
  free(d);
  return ocgc_exit_code(err);
}
