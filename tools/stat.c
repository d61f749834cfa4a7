/* stat.c - `ocgc stat PID [INTERVAL [COUNT]]`: one row of GC figures per
 * interval, like `jstat -gcutil`, as a table, JSON lines or CSV.
 *
 * What it owns: attaching to one live process (ocgc_cmd_open), one
 * aggregator started at OCGC_START_NOW, and two snapshots: the one taken at
 * the end of the previous interval and the one just taken.  Every row is
 * the difference between those two, so each row covers exactly the time
 * between two snapshots and the rows add up: the sum of a counter over the
 * rows equals its growth since the attach (the counters of ocgc files come
 * from the producer's exact totals, so this holds even when events were
 * lost; --json prints the integer counts so that scripts can check it).
 *
 * Pause percentiles of one interval: libocgc's snapshots hold cumulative
 * pause histograms and the public API has no histogram subtraction, so the
 * interval's distribution is read as the difference of the two cumulative
 * histograms through ocgc_hist_count_le(): the k-th smallest pause of the
 * interval is the smallest v with le_new(v) - le_old(v) >= k, found by
 * binary search (le is monotone in v, and new = old + the interval's
 * pauses).  It agrees with ocgc_hist_percentile() on a histogram of the
 * interval alone, bucket for bucket (0.1%), except for two small effects:
 * each histogram caps its top bucket at its own max, so near the older max
 * the difference can be off by one within 0.1% of it; and a snapshot
 * counts the last pause provisionally (it could still grow if a collection
 * began within the aggregator's pause gap), so a pause that grew after a
 * snapshot is seen at its final length in the next interval and its
 * provisional length is taken away from it.  The interval's max is exact
 * whenever it is a new overall max (the common case for a max worth
 * reading); otherwise it comes from the same search.
 *
 * Invariants: rows are printed only from two snapshots of the same
 * aggregator; the aggregator is polled every TICK (or the interval, when
 * shorter) so the ring does not overflow between rows; interval ends are
 * scheduled from the attach time (start + k * interval), so rows do not
 * drift; SIGINT and SIGTERM only set a flag, and the main loop ends cleanly
 * (exit 0) after freeing everything, without printing the interval in
 * progress (as jstat).  When the process exits (or is killed) the interval
 * in progress is printed as a last, shorter row and stat exits 0; a stock
 * OCaml 5 file has no identity to check, so there the pid's existence
 * tells.  Rates are over the producer's clock between the snapshots
 * (interval_s); time_s is ocgc's own clock since the attach. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "util.h"

#define TICK_NS UINT64_C(50000000) /* poll the ring at least every 50 ms */
#define HEADER_EVERY 20            /* rows between headers when not on a tty */
#define HIST_TOP_NS UINT64_C(3600000000000) /* histograms stop at an hour */
#define MB 1e6

enum stat_format { FMT_TABLE, FMT_JSON, FMT_CSV };

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
  stop_signal = sig;
}

/* One row: what happened between two snapshots. */
struct row {
  double time_s;          /* end of the interval, seconds since the attach */
  double interval_s;      /* producer time between the snapshots */
  uint64_t collections[OCGC_KIND_COUNT], major_cycles, forced_majors;
  uint64_t allocated_bytes, promoted_bytes, gc_time_ns, pauses, lost;
  struct ocgc_rates rates;
  int have_pauses;
  uint64_t p50_ns, p99_ns, max_ns;
  uint64_t heap_bytes;
  int exact;
};

static uint64_t delta(uint64_t newer, uint64_t older)
{
  return newer >= older ? newer - older : 0;
}

/* Pauses <= v recorded between the older and the newer snapshot. */
static uint64_t le_diff(const struct ocgc_hist *older, const struct ocgc_hist *newer, uint64_t v)
{
  return delta(ocgc_hist_count_le(newer, v), ocgc_hist_count_le(older, v));
}

/* The smallest v in [1, hi] with le_diff(v) >= rank (see the top of the
 * file); hi when none is. */
static uint64_t rank_value(const struct ocgc_hist *older, const struct ocgc_hist *newer,
                           uint64_t rank, uint64_t hi)
{
  uint64_t lo = 0; /* le_diff(lo) < rank, or lo == 0 */
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (le_diff(older, newer, mid) >= rank) hi = mid;
    else lo = mid;
  }
  return hi;
}

static void interval_pauses(const struct ocgc_snapshot *older, const struct ocgc_snapshot *newer,
                            uint64_t n, struct row *r)
{
  const struct ocgc_hist *ho = ocgc_snapshot_pauses(older);
  const struct ocgc_hist *hn = ocgc_snapshot_pauses(newer);
  uint64_t max, rank;
  r->have_pauses = n > 0;
  if (n == 0) return;
  if (ocgc_hist_max(hn) > ocgc_hist_max(ho)) max = ocgc_hist_max(hn);
  else max = rank_value(ho, hn, n, HIST_TOP_NS);
  r->max_ns = max;
  /* rank of the p-th percentile: ceil(p/100 * n), at least 1 */
  rank = (n * 50 + 99) / 100;
  r->p50_ns = rank_value(ho, hn, rank ? rank : 1, max);
  rank = (n * 99 + 99) / 100;
  r->p99_ns = rank_value(ho, hn, rank ? rank : 1, max);
}

static void make_row(const struct ocgc_snapshot *older, const struct ocgc_snapshot *newer,
                     double time_s, struct row *r)
{
  struct ocgc_counters o, n;
  unsigned k;
  memset(r, 0, sizeof *r);
  ocgc_snapshot_counters(older, &o);
  ocgc_snapshot_counters(newer, &n);
  for (k = 0; k < OCGC_KIND_COUNT; k++) r->collections[k] = delta(n.collections[k], o.collections[k]);
  r->major_cycles = delta(n.major_cycles, o.major_cycles);
  r->forced_majors = delta(n.forced_majors, o.forced_majors);
  r->allocated_bytes = delta(n.allocated_bytes, o.allocated_bytes);
  r->promoted_bytes = delta(n.promoted_bytes, o.promoted_bytes);
  r->gc_time_ns = delta(n.gc_time_ns, o.gc_time_ns);
  r->pauses = delta(n.pauses, o.pauses);
  r->lost = delta(n.events_lost, o.events_lost);
  r->heap_bytes = n.heap_bytes;
  r->exact = n.exact;
  r->time_s = time_s;
  /* A producer that exited just after the older snapshot read its clock
   * may have an exit time before it: then the interval is empty, and the
   * rates are left at 0 while the counts still add up. */
  if (ocgc_rates(older, newer, &r->rates) == 0) r->interval_s = r->rates.seconds;
  else memset(&r->rates, 0, sizeof r->rates);
  interval_pauses(older, newer, r->pauses, r);
}

/* ---- printing ------------------------------------------------------------------ */

struct out {
  enum stat_format fmt;
  int timestamp;
  unsigned header_every; /* table: rows between headers */
  unsigned rows;         /* rows printed so far */
};

/* The fields of --json and --csv, in this order (the names are the
 * interface: snake_case, units in the name). */
enum field_kind { F_U64, F_DBL, F_US, F_BOOL };
struct field {
  const char *name;
  enum field_kind kind;
  int prec;      /* F_DBL: digits after the point */
  uint64_t u;    /* F_U64, F_US (ns), F_BOOL */
  double d;      /* F_DBL */
};

#define NFIELDS 23

static const char *const field_names[NFIELDS] = {
  "interval_s", "minor_collections", "major_slices", "major_cycles", "compactions",
  "forced_majors", "pauses", "minor_per_s", "major_slices_per_s", "major_cycles_per_s",
  "allocated_bytes", "promoted_bytes", "allocated_mb_per_s", "promoted_mb_per_s",
  "promotion_pct", "gc_time_ns", "gc_time_pct", "pause_p50_us", "pause_p99_us",
  "pause_max_us", "heap_bytes", "events_lost", "exact",
};

static void row_fields(const struct row *r, struct field f[NFIELDS])
{
  unsigned i = 0;
#define U(v) f[i].kind = F_U64, f[i].u = (v), i++
#define D(p, v) f[i].kind = F_DBL, f[i].prec = (p), f[i].d = (v), i++
#define US(v) f[i].kind = F_US, f[i].u = (v), i++
  D(6, r->interval_s);
  U(r->collections[OCGC_KIND_MINOR]);
  U(r->collections[OCGC_KIND_MAJOR_SLICE]);
  U(r->major_cycles);
  U(r->collections[OCGC_KIND_COMPACTION]);
  U(r->forced_majors);
  U(r->pauses);
  D(3, r->rates.collections_per_s[OCGC_KIND_MINOR]);
  D(3, r->rates.collections_per_s[OCGC_KIND_MAJOR_SLICE]);
  D(3, r->rates.major_cycles_per_s);
  U(r->allocated_bytes);
  U(r->promoted_bytes);
  D(6, r->rates.allocated_bytes_per_s / MB);
  D(6, r->rates.promoted_bytes_per_s / MB);
  D(3, r->rates.promotion_ratio * 100);
  U(r->gc_time_ns);
  D(3, r->rates.gc_time_share * 100);
  US(r->p50_ns);
  US(r->p99_ns);
  US(r->max_ns);
  U(r->heap_bytes);
  U(r->lost);
  f[i].kind = F_BOOL, f[i].u = (uint64_t)r->exact, i++;
#undef U
#undef D
#undef US
  for (i = 0; i < NFIELDS; i++) f[i].name = field_names[i];
}

/* One field's value: a percentile of an interval without pauses is null
 * in JSON and empty in CSV. */
static void print_value(const struct row *r, const struct field *f, int json)
{
  switch (f->kind) {
  case F_U64: printf("%" PRIu64, f->u); break;
  case F_DBL: printf("%.*f", f->prec, f->d); break;
  case F_US:
    if (r->have_pauses) printf("%.3f", (double)f->u / 1e3);
    else if (json) printf("null");
    break;
  case F_BOOL: printf("%s", json ? (f->u ? "true" : "false") : (f->u ? "1" : "0")); break;
  }
}

static void print_header(const struct out *o)
{
  unsigned i;
  switch (o->fmt) {
  case FMT_TABLE:
    if (o->timestamp) printf("%9s ", "TIME_s");
    printf("%8s %8s %8s %10s %10s %6s %6s %9s %9s %9s %9s %6s\n", "MINOR/s", "SLICE/s",
           "CYCLE/s", "ALLOC_MB/s", "PROMO_MB/s", "PROMO%", "GC%", "P50_us", "P99_us",
           "MAX_us", "HEAP_MB", "LOST");
    break;
  case FMT_CSV:
    if (o->timestamp) printf("time_s,");
    for (i = 0; i < NFIELDS; i++) printf("%s%s", i ? "," : "", field_names[i]);
    printf("\n");
    break;
  case FMT_JSON:
    break;
  }
}

static void print_us_cell(int have, uint64_t ns)
{
  if (have) printf(" %9.1f", (double)ns / 1e3);
  else printf(" %9s", "-");
}

static void print_table_row(struct out *o, const struct row *r)
{
  if (o->header_every > 0 && o->rows > 0 && o->rows % o->header_every == 0) print_header(o);
  if (o->timestamp) printf("%9.3f ", r->time_s);
  printf("%8.1f %8.1f %8.2f %10.2f %10.2f %6.1f %6.2f", r->rates.collections_per_s[OCGC_KIND_MINOR],
         r->rates.collections_per_s[OCGC_KIND_MAJOR_SLICE], r->rates.major_cycles_per_s,
         r->rates.allocated_bytes_per_s / MB, r->rates.promoted_bytes_per_s / MB,
         r->rates.promotion_ratio * 100, r->rates.gc_time_share * 100);
  print_us_cell(r->have_pauses, r->p50_ns);
  print_us_cell(r->have_pauses, r->p99_ns);
  print_us_cell(r->have_pauses, r->max_ns);
  printf(" %9.1f %6" PRIu64 "\n", (double)r->heap_bytes / MB, r->lost);
}

static void print_row(struct out *o, const struct row *r)
{
  struct field f[NFIELDS];
  unsigned i;
  row_fields(r, f);
  switch (o->fmt) {
  case FMT_TABLE:
    print_table_row(o, r);
    break;
  case FMT_JSON:
    /* time_s is always there: a line of JSON should say when it was. */
    printf("{\"time_s\": %.6f", r->time_s);
    for (i = 0; i < NFIELDS; i++) {
      printf(", \"%s\": ", f[i].name);
      print_value(r, &f[i], 1);
    }
    printf("}\n");
    break;
  case FMT_CSV:
    if (o->timestamp) printf("%.6f,", r->time_s);
    for (i = 0; i < NFIELDS; i++) {
      if (i) putchar(',');
      print_value(r, &f[i], 0);
    }
    printf("\n");
    break;
  }
  o->rows++;
  fflush(stdout);
}

/* ---- the loop -------------------------------------------------------------------- */

/* Sleep until CLOCK_MONOTONIC [when] or a signal. */
static void sleep_until(uint64_t when)
{
  struct timespec ts;
  ts.tv_sec = (time_t)(when / 1000000000u);
  ts.tv_nsec = (long)(when % 1000000000u);
  while (!stop_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

/* Read everything written since the last poll (bounded: a producer that
 * writes as fast as we read cannot keep us here, nor from a signal). */
static uint64_t drain_max; /* ocgc_drain_events() of the source */

static int drain(struct ocgc_agg *agg)
{
  return ocgc_drain_agg(agg, drain_max, &stop_signal);
}

static unsigned table_height(void)
{
  struct winsize ws;
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 2)
    return ws.ws_row - 1u; /* leave the header's line */
  return HEADER_EVERY;
}

static void stat_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc stat [-t] [--json|--csv] [--dir DIR] PID [INTERVAL [COUNT]]\n\n"
          "Attach to the running OCaml process PID and print a row of GC figures\n"
          "every INTERVAL (default 1s; a number of seconds or 500ms, 2s, 1m...),\n"
          "COUNT rows, or until the process exits (then the interval in progress is\n"
          "printed as a last, shorter row) or ocgc is interrupted; exit status 0.\n"
          "Each row covers the interval just ended, from the attach on:\n\n"
          "  MINOR/s     minor collections per second\n"
          "  SLICE/s     major slices per second\n"
          "  CYCLE/s     major cycles completed per second\n"
          "  ALLOC_MB/s  minor-heap allocation, MB (10^6 bytes) per second\n"
          "  PROMO_MB/s  promoted to the major heap, MB per second\n"
          "  PROMO%%      promoted / allocated\n"
          "  GC%%         share of the time spent in collections\n"
          "  P50_us P99_us MAX_us\n"
          "              pauses (collections back to back are one pause) that ended\n"
          "              in the interval, in microseconds ('-': none)\n"
          "  HEAP_MB     major heap size at the end of the interval\n"
          "  LOST        events overwritten before ocgc read them (the counters\n"
          "              stay exact; pauses in lost events are missing)\n\n"
          "  -t, --timestamp  first column: seconds since the attach\n"
          "  --json           one JSON object per row, with the integer counts of\n"
          "                   the interval too (minor_collections, allocated_bytes,\n"
          "                   ...) and time_s; absent percentiles are null\n"
          "  --csv            a header line, then comma-separated rows (fields as\n"
          "                   in --json; time_s only with -t)\n"
          "  --dir DIR        look for DIR/PID.events instead of searching the\n"
          "                   process's memory map\n"
          "  --help           this text\n\n"
          "The table repeats its header every screen (every %d rows when the output\n"
          "is not a terminal).\n",
          HEADER_EVERY);
}

int cmd_stat(int argc, char **argv)
{
  static const struct option longopts[] = {
    {"timestamp", no_argument, NULL, 't'},
    {"json", no_argument, NULL, 'j'},
    {"csv", no_argument, NULL, 'c'},
    {"dir", required_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  struct ocgc_agg_opts ao = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_source *src = NULL;
  struct ocgc_agg *agg = NULL;
  struct ocgc_snapshot *prev = NULL, *cur = NULL;
  struct sigaction sa;
  struct out o = {FMT_TABLE, 0, 0, 0};
  const char *dir = NULL;
  uint64_t interval = UINT64_C(1000000000), count = 0, start, next_row, now, tick;
  int opt, pid, err, alive, done = 0, rc = 0;

  optind = 1;
  while ((opt = getopt_long(argc, argv, "th", longopts, NULL)) != -1) {
    switch (opt) {
    case 't': o.timestamp = 1; break;
    case 'j': o.fmt = FMT_JSON; break;
    case 'c': o.fmt = FMT_CSV; break;
    case 'd': dir = optarg; break;
    case 'h': stat_usage(stdout); return 0;
    default: stat_usage(stderr); return OCGC_EXIT_USAGE;
    }
  }
  if (optind >= argc || argc - optind > 3) {
    fprintf(stderr, "ocgc stat: usage: ocgc stat [options] PID [INTERVAL [COUNT]] "
            "('ocgc stat --help' tells more)\n");
    return OCGC_EXIT_USAGE;
  }
  pid = ocgc_cmd_parse_pid(argv[optind]);
  if (pid < 0) {
    fprintf(stderr, "ocgc stat: '%s' is not a process id ('ocgc ls' lists the "
            "attachable processes)\n", argv[optind]);
    return OCGC_EXIT_USAGE;
  }
  if (argc - optind >= 2 &&
      (ocgc_parse_duration(argv[optind + 1], &interval) != 0 || interval < 1000000u)) {
    fprintf(stderr, "ocgc stat: INTERVAL is a duration of at least 1ms, such as 1, "
            "0.5s or 200ms, not '%s'\n", argv[optind + 1]);
    return OCGC_EXIT_USAGE;
  }
  if (argc - optind == 3) {
    char *end;
    errno = 0;
    count = strtoull(argv[optind + 2], &end, 10);
    if (argv[optind + 2][0] < '0' || argv[optind + 2][0] > '9' || *end != '\0' ||
        errno != 0 || count == 0) {
      fprintf(stderr, "ocgc stat: COUNT is a number of rows (1 or more), not '%s'\n",
              argv[optind + 2]);
      return OCGC_EXIT_USAGE;
    }
  }

  start = ocgc_now_ns(); /* time_s counts from here */
  err = ocgc_cmd_open("stat", pid, dir, NULL, &src);
  if (err) return ocgc_exit_code(err);
  ao.start = OCGC_START_NOW;
  drain_max = ocgc_drain_events(src);
  err = ocgc_agg_new(src, &ao, &agg);
  if (err == 0) err = ocgc_agg_snapshot(agg, &prev);
  if (err) {
    fprintf(stderr, "ocgc stat: process %d: %s\n", pid, ocgc_strerror(err));
    ocgc_agg_free(agg);
    ocgc_source_close(src);
    return ocgc_exit_code(err);
  }

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal; /* no SA_RESTART: the sleep must end */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  if (o.fmt == FMT_TABLE) o.header_every = table_height();
  print_header(&o);
  fflush(stdout);
  tick = interval < TICK_NS ? interval : TICK_NS;
  next_row = start + interval;
  while (!done && !stop_signal) {
    int last = 0;
    now = ocgc_now_ns();
    sleep_until(now + tick < next_row ? now + tick : next_row);
    if (stop_signal) break;
    if ((err = drain(agg)) != 0) break;
    /* Gone or exited: read what it wrote last and print the partial row.
     * A stock OCaml 5 file carries no identity: there only the pid tells. */
    alive = ocgc_source_check_alive(src);
    if (alive == -ENODATA && kill(pid, 0) != 0 && errno == ESRCH) alive = OCGC_E_STALE;
    if (alive == OCGC_E_STALE) {
      last = 1;
      if ((err = drain(agg)) != 0) break;
    } else if (ocgc_now_ns() < next_row) {
      continue;
    }
    if ((err = ocgc_agg_snapshot(agg, &cur)) != 0) break;
    {
      struct row r;
      make_row(prev, cur, (double)(ocgc_now_ns() - start) / 1e9, &r);
      print_row(&o, &r);
    }
    ocgc_snapshot_free(prev);
    prev = cur;
    cur = NULL;
    next_row += interval;
    /* Behind by more than an interval (suspended, or a slow terminal):
     * start the schedule again rather than print a burst of rows. */
    if ((now = ocgc_now_ns()) > next_row) next_row = now + interval;
    if (last || (count != 0 && o.rows >= count)) done = 1;
  }
  if (err) {
    fprintf(stderr, "ocgc stat: process %d: %s\n", pid, ocgc_strerror(err));
    rc = ocgc_exit_code(err);
  }
  if (ferror(stdout)) rc = rc ? rc : OCGC_EXIT_ERROR;
  ocgc_snapshot_free(prev);
  ocgc_snapshot_free(cur);
  ocgc_agg_free(agg);
  ocgc_source_close(src);
  return rc;
}
