/* stat.c - `ocgc stat PID [INTERVAL [COUNT]]`: one row of GC figures per
 * interval, like `jstat -gcutil`, as a table, JSON lines or CSV.
 *
 * What it owns: its options, one aggregator started at OCGC_START_NOW over
 * the target (common.h opens it), an interval recorder over it (libocgc's
 * ocgc_interval: counters' growth, rates and the interval's pauses, each
 * pause counted once) and the rows.  Each row is one interval, so the
 * rows add up: the sum of a counter over the rows equals its growth since
 * the attach (the counters of ocgc files come from the producer's exact
 * totals, so this holds even when events were lost; --json prints the
 * integer counts so that scripts can check it).  Pause percentiles are
 * the interval's histogram's, exact to its bucket precision (0.1%).
 *
 * Invariants: the aggregator is drained every TICK (or the interval, when
 * shorter) so the ring does not overflow between rows; interval ends are
 * scheduled from the attach time (start + k * interval), so rows do not
 * drift; SIGINT and SIGTERM only set a flag, and the loop ends cleanly
 * (exit 0) after freeing everything, without printing the interval in
 * progress (as jstat).  When the process exits (or is killed) the interval
 * in progress is printed as a last, shorter row and stat exits 0.  Rates
 * are over the producer's clock between the interval's ends (interval_s); time_s
 * is ocgc's own clock since the attach. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "json.h"

#define TICK_NS UINT64_C(50000000) /* poll the ring at least every 50 ms */
#define HEADER_EVERY 20            /* rows between headers when not on a tty */

enum stat_format { FMT_TABLE, FMT_JSON, FMT_CSV };

struct stat_opts {
  struct tool_target t;
  enum stat_format fmt;
  int timestamp;
  uint64_t interval_ns, count;
};

/* One row: what happened in one interval. */
struct row {
  double time_s;          /* end of the interval, seconds since the attach */
  double interval_s;      /* producer time between its ends */
  struct ocgc_counters g; /* the counters' growth (gauges: at its end) */
  struct ocgc_rates rates;
  int have_pauses;
  uint64_t p50_ns, p99_ns, max_ns;
};

/* The row of the interval [f], whose pauses are [h]. */
static void make_row(const struct ocgc_interval_figures *f, const struct ocgc_hist *h,
                     double time_s, struct row *r)
{
  memset(r, 0, sizeof *r);
  r->g = f->growth;
  r->time_s = time_s;
  r->rates = f->rates;
  r->interval_s = f->rates_known ? f->rates.seconds : 0;
  if ((r->have_pauses = ocgc_hist_count(h) > 0) != 0) {
    r->max_ns = ocgc_hist_max(h);
    r->p50_ns = ocgc_hist_percentile(h, 50);
    r->p99_ns = ocgc_hist_percentile(h, 99);
  }
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
  "allocated_bytes", "promoted_bytes", "allocated_mib_per_s", "promoted_mib_per_s",
  "promotion_pct", "gc_time_ns", "gc_time_pct", "pause_p50_us", "pause_p99_us",
  "pause_max_us", "heap_bytes", "events_lost", "exact",
};

/* By hand, not a loop over the counters' table (here and in
 * field_names): the columns are a fixed, documented set (ocgc(1)) that
 * mixes counts, rates and percentiles, and a chosen few of the counters
 * (no direct_major_bytes, top_heap_bytes, events_seen: a new counter is
 * not a new column). */
static void row_fields(const struct row *r, struct field f[NFIELDS])
{
  unsigned i = 0;
#define U(v) f[i].kind = F_U64, f[i].u = (v), i++
#define D(p, v) f[i].kind = F_DBL, f[i].prec = (p), f[i].d = (v), i++
#define US(v) f[i].kind = F_US, f[i].u = (v), i++
  D(6, r->interval_s);
  U(r->g.collections[OCGC_KIND_MINOR]);
  U(r->g.collections[OCGC_KIND_MAJOR_SLICE]);
  U(r->g.major_cycles);
  U(r->g.collections[OCGC_KIND_COMPACTION]);
  U(r->g.forced_majors);
  U(r->g.pauses);
  D(3, r->rates.collections_per_s[OCGC_KIND_MINOR]);
  D(3, r->rates.collections_per_s[OCGC_KIND_MAJOR_SLICE]);
  D(3, r->rates.major_cycles_per_s);
  U(r->g.allocated_bytes);
  U(r->g.promoted_bytes);
  D(6, r->rates.allocated_bytes_per_s / CM_MIB);
  D(6, r->rates.promoted_bytes_per_s / CM_MIB);
  D(3, r->rates.promotion_ratio * 100);
  U(r->g.gc_time_ns);
  D(3, r->rates.gc_time_share * 100);
  US(r->p50_ns);
  US(r->p99_ns);
  US(r->max_ns);
  U(r->g.heap_bytes);
  U(r->g.events_lost);
  f[i].kind = F_BOOL, f[i].u = (uint64_t)r->g.exact, i++;
#undef U
#undef D
#undef US
  for (i = 0; i < NFIELDS; i++) f[i].name = field_names[i];
}

/* One field in CSV: a percentile of an interval without pauses is empty. */
static void csv_value(const struct row *r, const struct field *f)
{
  switch (f->kind) {
  case F_U64: printf("%" PRIu64, f->u); break;
  case F_DBL: printf("%.*f", f->prec, f->d); break;
  case F_US: if (r->have_pauses) printf("%.3f", (double)f->u / 1e3); break;
  case F_BOOL: printf("%s", f->u ? "1" : "0"); break;
  }
}

/* One field in JSON: a percentile of an interval without pauses is null. */
static void json_value(struct json *j, const struct row *r, const struct field *f)
{
  json_key(j, f->name);
  switch (f->kind) {
  case F_U64: json_u64(j, f->u); break;
  case F_DBL: json_double(j, f->prec, f->d); break;
  case F_US:
    if (r->have_pauses) json_double(j, 3, (double)f->u / 1e3);
    else json_null(j);
    break;
  case F_BOOL: json_bool(j, f->u != 0); break;
  }
}

static void print_header(const struct out *o)
{
  unsigned i;
  switch (o->fmt) {
  case FMT_TABLE:
    if (o->timestamp) printf("%9s ", "TIME_s");
    printf("%8s %8s %8s %11s %11s %6s %6s %9s %9s %9s %9s %6s\n", "MINOR/s", "SLICE/s",
           "CYCLE/s", "ALLOC_MiB/s", "PROMO_MiB/s", "PROMO%", "GC%", "P50_us", "P99_us",
           "MAX_us", "HEAP_MiB", "LOST");
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
  printf("%8.1f %8.1f %8.2f %11.2f %11.2f %6.1f %6.2f", r->rates.collections_per_s[OCGC_KIND_MINOR],
         r->rates.collections_per_s[OCGC_KIND_MAJOR_SLICE], r->rates.major_cycles_per_s,
         r->rates.allocated_bytes_per_s / CM_MIB, r->rates.promoted_bytes_per_s / CM_MIB,
         r->rates.promotion_ratio * 100, r->rates.gc_time_share * 100);
  print_us_cell(r->have_pauses, r->p50_ns);
  print_us_cell(r->have_pauses, r->p99_ns);
  print_us_cell(r->have_pauses, r->max_ns);
  printf(" %9.1f %6" PRIu64 "\n", (double)r->g.heap_bytes / CM_MIB, r->g.events_lost);
}

static void print_row(struct out *o, const struct row *r)
{
  struct field f[NFIELDS];
  struct json j;
  unsigned i;
  row_fields(r, f);
  switch (o->fmt) {
  case FMT_TABLE:
    print_table_row(o, r);
    break;
  case FMT_JSON:
    /* time_s is always there: a line of JSON should say when it was. */
    json_init_file(&j, stdout, 0);
    json_obj(&j, JSON_INLINE);
    json_key(&j, "time_s");
    json_double(&j, 6, r->time_s);
    for (i = 0; i < NFIELDS; i++) json_value(&j, r, &f[i]);
    json_obj_end(&j);
    json_raw(&j, "\n");
    break;
  case FMT_CSV:
    if (o->timestamp) printf("%.6f,", r->time_s);
    for (i = 0; i < NFIELDS; i++) {
      if (i) putchar(',');
      csv_value(r, &f[i]);
    }
    printf("\n");
    break;
  }
  o->rows++;
  fflush(stdout);
}

/* ---- the loop -------------------------------------------------------------------- */

/* What the loop holds. */
struct stat_run {
  const struct stat_opts *opts;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_interval *iv;      /* the rows' intervals */
  uint64_t start;
  struct out out;
};

/* Read everything written since the last poll (bounded: a producer that
 * writes as fast as we read cannot keep us here past [deadline], nor from
 * a signal). */
static int drain(struct stat_run *s, uint64_t deadline)
{
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  d.stop = &tool_stop;
  d.deadline_ns = deadline;
  return ocgc_agg_drain(s->agg, &d, NULL);
}

static unsigned table_height(void)
{
  struct winsize ws;
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 2)
    return ws.ws_row - 1u; /* leave the header's line */
  return HEADER_EVERY;
}

/* The row of the interval that ends now. */
static int print_interval(struct stat_run *s)
{
  struct ocgc_interval_figures f = OCGC_OPTS_INIT(struct ocgc_interval_figures);
  struct row r;
  int err = ocgc_interval_next(s->iv, &f);
  if (err) return err;
  make_row(&f, ocgc_interval_pauses(s->iv), (double)(cm_mono_ns() - s->start) / 1e9, &r);
  print_row(&s->out, &r);
  return 0;
}

/* Rows until COUNT, the process's end or a signal. */
static int loop(struct stat_run *s)
{
  uint64_t interval = s->opts->interval_ns, now, next_row = s->start + interval;
  uint64_t tick = interval < TICK_NS ? interval : TICK_NS;
  int err = 0, last = 0;
  while (!last && !tool_stop) {
    now = cm_mono_ns();
    tool_sleep_until_ns(now + tick < next_row ? now + tick : next_row);
    if (tool_stop) break;
    if ((err = drain(s, next_row)) != 0) break;
    /* Gone or exited: read what it wrote last and print the partial row. */
    if ((last = ocgc_source_gone(s->src)) != 0) {
      if ((err = drain(s, 0)) != 0) break;
    } else if (cm_mono_ns() < next_row) {
      continue;
    }
    if ((err = print_interval(s)) != 0) break;
    next_row += interval;
    /* Behind by more than an interval (suspended, or a slow terminal):
     * start the schedule again rather than print a burst of rows. */
    if ((now = cm_mono_ns()) > next_row) next_row = now + interval;
    if (s->opts->count != 0 && s->out.rows >= s->opts->count) break;
  }
  return err;
}

/* Attach, take the first snapshot, print the header, and loop. */
static int run(struct stat_run *s)
{
  struct ocgc_agg_opts ao = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct tool_signals sig;
  int err;
  ao.start = OCGC_START_NOW;
  if ((err = ocgc_agg_new(s->src, &ao, &s->agg)) != 0 ||
      (err = ocgc_interval_new(s->agg, &s->iv)) != 0)
    return err;
  /* after the first interval began: the window has begun when this line is out */
  tool_say_ids(s->src, tool_target_label(&s->opts->t));
  tool_signals_catch(&sig);
  if (s->out.fmt == FMT_TABLE) s->out.header_every = table_height();
  print_header(&s->out);
  fflush(stdout);
  err = loop(s);
  tool_signals_restore(&sig);
  return err;
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
          "  ALLOC_MiB/s minor-heap allocation, MiB (2^20 bytes) per second\n"
          "  PROMO_MiB/s promoted to the major heap, MiB per second\n"
          "  PROMO%%      promoted / allocated\n"
          "  GC%%         share of the time spent in collections\n"
          "  P50_us P99_us MAX_us\n"
          "              pauses (each a stop of the program for the GC: the\n"
          "              collections of one stop are one pause) that ended in\n"
          "              the interval, in microseconds ('-': none)\n"
          "  HEAP_MiB    major heap size at the end of the interval\n"
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
          "  --ids 5.2|5.3|5.4\n"
          "                   the event numbering of a stock OCaml 5 ring (default:\n"
          "                   from the process's executable)\n"
          "  --help           this text\n\n"
          "The table repeats its header every screen (every %d rows when the output\n"
          "is not a terminal).\n",
          HEADER_EVERY);
}

/* The options and operands into *o: 0, or the exit code. */
static int parse_args(int argc, char **argv, struct stat_opts *o)
{
  static const struct option longopts[] = {
    {"timestamp", no_argument, NULL, 't'},
    TOOL_LONGOPT_JSON,
    {"csv", no_argument, NULL, 'c'},
    TOOL_LONGOPT_DIR,
    TOOL_LONGOPT_IDS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt, n, c, json = 0;
  memset(o, 0, sizeof *o);
  o->interval_ns = UINT64_C(1000000000);
  optind = 1;
  while ((opt = getopt_long(argc, argv, "th", longopts, NULL)) != -1) {
    if ((c = tool_common_opt(opt, optarg, &o->t, &json)) != 0) {
      if (c != 1) return c;
      if (opt == TOOL_OPT_JSON) o->fmt = FMT_JSON; /* the last of --json, --csv */
      continue;
    }
    switch (opt) {
    case 't': o->timestamp = 1; break;
    case 'c': o->fmt = FMT_CSV; break;
    case 'h': stat_usage(stdout); exit(0);
    default: stat_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  n = argc - optind;
  if (n < 1 || n > 3)
    return tool_usage_error("usage: ocgc stat [options] PID [INTERVAL [COUNT]] "
                            "('ocgc stat --help' tells more)");
  if (tool_target_pid(&o->t, argv[optind], NULL) != 0) return TOOL_EXIT_USAGE;
  if (n >= 2 && (tool_parse_duration(argv[optind + 1], &o->interval_ns) != 0 ||
                 o->interval_ns < 1000000u))
    return tool_usage_error("INTERVAL is a duration of at least 1ms, such as 1, 0.5s or "
                            "200ms, not '%s'", argv[optind + 1]);
  if (n == 3 && tool_parse_count(argv[optind + 2], &o->count) != 0)
    return tool_usage_error("COUNT is a number of rows (1 or more), not '%s'", argv[optind + 2]);
  return 0;
}

/* Open the target of [o], print its rows, close it: the exit code.  Its
 * messages name the running command (tool_name): `ocgc top` prints these
 * rows too. */
static int stat_target(struct stat_opts *o)
{
  struct stat_run s;
  int err, rc = 0;
  memset(&s, 0, sizeof s);
  s.opts = o;
  s.out.fmt = o->fmt;
  s.out.timestamp = o->timestamp;
  s.start = cm_mono_ns(); /* time_s counts from here */
  if ((err = tool_target_open(&o->t, &s.src)) != 0) return tool_exit_code(err);
  if ((err = run(&s)) != 0) rc = tool_target_error(&o->t, err);
  if (ferror(stdout) && rc == 0) rc = TOOL_EXIT_ERROR;
  ocgc_interval_free(s.iv);
  ocgc_agg_free(s.agg);
  ocgc_source_close(s.src);
  return rc;
}

int stat_rows(const struct tool_target *t, uint64_t interval_ns, uint64_t count)
{
  struct stat_opts o;
  memset(&o, 0, sizeof o);
  o.t = *t;
  o.fmt = FMT_TABLE;
  o.interval_ns = interval_ns;
  o.count = count;
  return stat_target(&o);
}

int cmd_stat(int argc, char **argv)
{
  struct stat_opts o;
  int rc = parse_args(argc, argv, &o);
  if (rc != 0) return rc;
  return stat_target(&o);
}
