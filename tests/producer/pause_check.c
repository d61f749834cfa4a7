/* pause_check.c - checks libocgc's pauses against what the ring and the
 * producer say, on a ring FILE or a live process (--pid PID, followed until
 * it exits; with READY_FILE, made once attached).  For pause_invariant.sh.
 *
 * It reads the events once, through a cursor that feeds both libocgc's
 * collection stream and a pairing of its own: the outermost collection
 * spans of each ring, paired by the simplest rule (a begin of a collection
 * phase with none open, and the next end of that phase), so that the
 * stream's pauses are checked against collections the stream did not
 * compute.  It prints "key value" lines:
 *   rule          marks | nesting (the stream's pause rule)
 *   pauses        pauses delivered
 *   pause_sum_ns  their summed durations
 *   over          pauses longer than the raw collections inside them
 *   colls.KIND    raw outermost collections by kind
 *   colls         all of them; lost: events lost
 *   gc_time_ns    the producer's GC time (totals; ocgc files only)
 *   agg_pause_sum_ns / agg_gc_time_ns: the aggregator's, on its own cursor
 * Exit 0 when it could read, 1 on an error (said on stderr). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocgc/consumer.h"

#define MAX_RAW (1u << 22) /* outermost collections kept for the check */

struct raw {
  uint64_t begin, end;
  unsigned ring;
};

struct check {
  const struct ocgc_source *src;
  struct ocgc_stream *st;
  /* per ring 0 only would miss stock files' other rings: small fixed table */
  int open_phase[128];
  uint64_t open_begin[128];
  struct raw *raw;
  size_t nraw, first_unchecked;
  uint64_t kinds[OCGC_KIND_COUNT];
  struct ocgc_pause *pauses;
  size_t npauses;
  uint64_t pause_sum, over;
};

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct check *c = ctx;
  int begin, kind;
  ocgc_stream_event(c->st, ev);
  if (ev->ring >= 128 || (kind = ocgc_event_kind(c->src, ev, &begin)) < 0) return 0;
  if (begin && c->open_phase[ev->ring] < 0) {
    c->open_phase[ev->ring] = (int)ev->id;
    c->open_begin[ev->ring] = ev->timestamp;
  } else if (!begin && c->open_phase[ev->ring] == (int)ev->id) {
    c->open_phase[ev->ring] = -1;
    if (c->nraw < MAX_RAW) {
      c->raw[c->nraw].begin = c->open_begin[ev->ring];
      c->raw[c->nraw].end = ev->timestamp;
      c->raw[c->nraw].ring = ev->ring;
      c->nraw++;
    }
    c->kinds[kind]++;
  }
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct check *c = ctx;
  (void)lost;
  (void)exact;
  ocgc_stream_lost(c->st, ring);
  if (ring < 128) c->open_phase[ring] = -1;
}

static void on_pause(const struct ocgc_pause *p, void *ctx)
{
  struct check *c = ctx;
  c->pause_sum += p->duration_ns;
  if (c->npauses < MAX_RAW) c->pauses[c->npauses++] = *p;
}

/* Each pause against the raw collections that lie inside it. */
static void check_pauses(struct check *c)
{
  size_t i, j = 0;
  for (i = 0; i < c->npauses; i++) {
    const struct ocgc_pause *p = &c->pauses[i];
    uint64_t inside = 0;
    size_t k;
    while (j < c->nraw && c->raw[j].end < p->begin) j++;
    for (k = j; k < c->nraw && c->raw[k].begin <= p->end; k++)
      if (c->raw[k].ring == p->ring && c->raw[k].begin >= p->begin && c->raw[k].end <= p->end)
        inside += c->raw[k].end - c->raw[k].begin;
    if (p->duration_ns > inside) {
      if (c->over < 5)
        fprintf(stderr, "pause %" PRIu64 "..%" PRIu64 " lasts %" PRIu64 " ns, its collections %"
                PRIu64 " ns\n", p->begin, p->end, p->duration_ns, inside);
      c->over++;
    }
  }
}

static void sleep_ms(unsigned ms)
{
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}

static int open_source(int argc, char **argv, struct ocgc_source **src)
{
  if ((argc == 3 || argc == 4) && strcmp(argv[1], "--pid") == 0)
    return ocgc_source_open_pid(atoi(argv[2]), NULL, src);
  if (argc == 2) return ocgc_source_open_path(argv[1], NULL, src);
  fprintf(stderr, "usage: pause_check FILE | --pid PID [READY_FILE]\n");
  exit(1);
}

/* Poll both readers until nothing is left to read; for a live producer,
 * until it has exited (its ring says so) and then nothing is left. */
static int follow(const struct ocgc_source *src, struct ocgc_cursor *cur, struct ocgc_agg *agg,
                  int live)
{
  struct ocgc_cursor_stats cs = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  int64_t n, m;
  for (;;) {
    int gone = !live || ocgc_source_check_alive(src) != 0;
    n = ocgc_cursor_poll(cur, 0);
    m = ocgc_agg_poll(agg);
    if (n < 0 || m < 0) {
      fprintf(stderr, "poll: %s\n", ocgc_strerror(n < 0 ? (int)n : (int)m));
      return 1;
    }
    ocgc_cursor_stats(cur, &cs);
    if (n > 0 || m > 0 || cs.behind) continue;
    if (gone) return 0;
    sleep_ms(5);
  }
}

static void print_results(struct check *c, const struct ocgc_source *src, struct ocgc_agg *agg,
                          const struct ocgc_cursor_stats *cs)
{
  struct ocgc_snapshot *snap;
  struct ocgc_counters k = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  unsigned i;
  uint64_t all = 0;
  printf("rule %s\n", ocgc_stream_pause_rule(c->st) == OCGC_PAUSE_MARKS ? "marks" : "nesting");
  printf("pauses %zu\npause_sum_ns %" PRIu64 "\nover %" PRIu64 "\n", c->npauses, c->pause_sum,
         c->over);
  for (i = 0; i < OCGC_KIND_COUNT; i++) {
    printf("colls.%s %" PRIu64 "\n", ocgc_kind_name(i), c->kinds[i]);
    all += c->kinds[i];
  }
  printf("colls %" PRIu64 "\nlost %" PRIu64 "\n", all, cs->lost);
  if (ocgc_source_totals(src, &t) == 0) printf("gc_time_ns %" PRIu64 "\n", t.gc_time_ns);
  if (ocgc_agg_snapshot(agg, &snap) == 0) {
    ocgc_snapshot_counters(snap, &k);
    printf("agg_pauses %" PRIu64 "\nagg_pause_sum_ns %" PRIu64 "\nagg_gc_time_ns %" PRIu64 "\n",
           k.pauses, ocgc_hist_sum(ocgc_snapshot_pauses(snap)), k.gc_time_ns);
    ocgc_snapshot_free(snap);
  }
}

int main(int argc, char **argv)
{
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_stream_opts so = OCGC_OPTS_INIT(struct ocgc_stream_opts);
  struct ocgc_cursor_stats cs = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  static struct check c;
  struct ocgc_source *src;
  struct ocgc_cursor *cur;
  struct ocgc_agg *agg;
  int err, rc, live = argc >= 3;
  unsigned i;

  if ((err = open_source(argc, argv, &src)) != 0) {
    fprintf(stderr, "open: %s\n", ocgc_strerror(err));
    return 1;
  }
  c.src = src;
  for (i = 0; i < 128; i++) c.open_phase[i] = -1;
  c.raw = calloc(MAX_RAW, sizeof *c.raw);
  c.pauses = calloc(MAX_RAW, sizeof *c.pauses);
  so.on_pause = on_pause;
  so.ctx = &c;
  co.on_event = on_event;
  co.on_lost = on_lost;
  co.ctx = &c;
  if (c.raw == NULL || c.pauses == NULL || ocgc_stream_new(src, &so, &c.st) != 0 ||
      ocgc_cursor_new(src, &co, &cur) != 0 || ocgc_agg_new(src, NULL, &agg) != 0) {
    fprintf(stderr, "setup failed\n");
    return 1;
  }
  /* Attached: the test may let the program run (READY_FILE). */
  if (argc == 4) {
    FILE *f = fopen(argv[3], "w");
    if (f == NULL || fclose(f) != 0) {
      fprintf(stderr, "%s: cannot make it\n", argv[3]);
      return 1;
    }
  }
  rc = follow(src, cur, agg, live);
  ocgc_stream_finish(c.st);
  check_pauses(&c);
  ocgc_cursor_stats(cur, &cs);
  print_results(&c, src, agg, &cs);
  ocgc_agg_free(agg);
  ocgc_cursor_free(cur);
  ocgc_stream_free(c.st);
  ocgc_source_close(src);
  free(c.raw);
  free(c.pauses);
  return rc;
}
