/* profile_cpu.c - `ocgc profile PID --cpu`: a CPU profile of a running
 * process over a window, each sample labelled with what the collector was
 * doing (libocgc's ocgc/cpuprof.h), written as pprof, folded stacks or
 * JSON.
 *
 * What it owns: the command line, the window's loop (the process's ring
 * read, then its CPU samples read, unwound and added, then the profile
 * settled up to where the ring is known complete), the figures said at
 * the end (the samples' GC share beside the one the ring measures), and
 * the forms.  The sampler, the unwinder, the labels and the writers are
 * libocgc's; the output file is profile.c's (profile_output).
 *
 * Invariants:
 * - the ring is read before the samples at each turn, so every collection
 *   that began before the turn's start is given (or open, and then the
 *   settle stops at its begin) before the samples up to it are labelled;
 * - a process without a ring (a stock runtime, or none found) is still
 *   profiled: its gc_phase from the stacks, its gc_cause "unknown";
 * - SIGINT and SIGTERM end the window early, an exec or the process's
 *   exit ends it: the profile of what was gathered is written; a refusal
 *   of perf_event_open is libocgc's one line, exit 8;
 * - every string of the target's goes through json.h or libocgc's writers
 *   (escaped); pprof, which is binary, never to a terminal. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "json.h"
#include "profile.h"

#define DEFAULT_DURATION_NS UINT64_C(30000000000) /* Go's /debug/pprof/profile */
#define MAX_FREQUENCY 1000u
#define POLL_MAX_NS UINT64_C(50000000)
#define POLL_MIN_NS UINT64_C(5000000)
#define RING_DRAIN_NS UINT64_C(20000000)

struct cpu_args {
  struct tool_target t;
  uint64_t duration_ns;
  unsigned frequency;
  int no_lines, by_phase;
  enum format format;
  const char *out;
};

struct window {
  const struct cpu_args *a;
  struct ocgc_source *src;
  struct ocgc_stream *st;
  struct ocgc_cursor *cur;
  struct ocgc_cpu *cpu;
  struct ocgc_symbols *names;
  struct ocgc_unwind *unw;
  struct ocgc_cpuprof *prof;
  uint64_t t0, t1;    /* the window, CLOCK_MONOTONIC */
  uint64_t ring_gc_ns; /* outermost collections' time inside the window */
  int err;
};

static void cpu_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc profile PID --cpu [--duration D] [--frequency HZ]\n"
          "                        [--format pprof|folded|json] [--by-phase] [-o FILE]\n"
          "                        [--no-lines] [--dir DIR]\n"
          "\n"
          "A CPU profile of process PID over a window: its threads sampled from outside\n"
          "(perf_event_open, cpu-clock), each stack unwound without frame pointers and\n"
          "labelled gc_phase (mutator, minor, major_mark, major_sweep, major_clean,\n"
          "major, compaction, collector) and gc_cause (the ring's cause of the\n"
          "collection, for samples in the collector).\n"
          "\n"
          "  --duration D     the window (default 30s); SIGINT ends it early\n"
          "  --frequency HZ   samples a second of CPU per thread (default 100, 1..%u)\n"
          "  --format F       pprof (default; samples/count and cpu/nanoseconds, as Go's),\n"
          "                   folded (\"a;b;c N\" lines) or json\n"
          "  --by-phase       folded: each line's first frame is [gc_phase]\n"
          "  -o FILE          write FILE (replaced whole) instead of stdout\n"
          "  --no-lines       function names only: no DWARF read\n"
          "  --dir DIR        the ring is DIR/PID.events (not searched)\n"
          "\n"
          "Sampling needs what perf needs: root, CAP_PERFMON, or\n"
          "kernel.perf_event_paranoid <= 2 for a process of one's own; a refusal is exit %d.\n",
          MAX_FREQUENCY, TOOL_EXIT_DENIED);
}

static int parse_args(int argc, char **argv, struct cpu_args *a)
{
  static const struct option longopts[] = {
    {"cpu", no_argument, NULL, 'c'},
    {"duration", required_argument, NULL, 'd'},
    {"frequency", required_argument, NULL, 'F'},
    {"format", required_argument, NULL, 'f'},
    {"by-phase", no_argument, NULL, 'b'},
    {"output", required_argument, NULL, 'o'},
    {"no-lines", no_argument, NULL, 'n'},
    TOOL_LONGOPT_DIR,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt, c;
  uint64_t hz;
  optind = 1;
  a->duration_ns = DEFAULT_DURATION_NS;
  a->frequency = 100;
  while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
    if ((c = tool_common_opt(opt, optarg, &a->t, NULL)) != 0) {
      if (c != 1) return c;
      continue;
    }
    switch (opt) {
    case 'c': break;
    case 'd':
      if (tool_parse_duration(optarg, &a->duration_ns) != 0 || a->duration_ns == 0)
        return tool_usage_error("--duration takes a duration (\"30s\"), not '%s'", optarg);
      break;
    case 'F':
      if (tool_parse_count(optarg, &hz) != 0 || hz == 0 || hz > MAX_FREQUENCY)
        return tool_usage_error("--frequency takes 1 to %u samples a second, not '%s'",
                                MAX_FREQUENCY, optarg);
      a->frequency = (unsigned)hz;
      break;
    case 'f':
      if (strcmp(optarg, "pprof") == 0) a->format = FMT_PPROF;
      else if (strcmp(optarg, "folded") == 0) a->format = FMT_FOLDED;
      else if (strcmp(optarg, "json") == 0) a->format = FMT_JSON;
      else return tool_usage_error("--format is pprof, folded or json, not '%s'", optarg);
      break;
    case 'b': a->by_phase = 1; break;
    case 'o': a->out = optarg; break;
    case 'n': a->no_lines = 1; break;
    case 'h': cpu_usage(stdout); exit(0);
    default: cpu_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    cpu_usage(stderr);
    return TOOL_EXIT_USAGE;
  }
  if ((c = tool_target_pid(&a->t, argv[optind], NULL)) != 0) return c;
  if (a->format == FMT_PPROF && a->out == NULL && isatty(STDOUT_FILENO))
    return tool_usage_error("pprof is binary: give -o FILE, or send stdout to a file or pipe");
  return 0;
}

/* ---- the ring: collections to the profile ------------------------------------------ */

static void on_collection(const struct ocgc_collection *c, void *ctx)
{
  struct window *w = ctx;
  uint64_t b = c->span.begin, e = c->span.end;
  if (c->stw_member) return; /* one collection of every domain: counted once */
  (void)ocgc_cpuprof_collection(w->prof, c->span.kind, c->span.cause, b, e);
  if (!c->outermost) return;
  if (b < w->t0) b = w->t0;
  if (e > b) w->ring_gc_ns += e - b;
}

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct window *w = ctx;
  ocgc_stream_event(w->st, ev);
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct window *w = ctx;
  (void)lost;
  (void)exact;
  ocgc_stream_lost(w->st, ring);
}

/* Read the ring; return the time up to which its collections are all
 * given: [now], or the begin of the oldest collection still open. */
static uint64_t read_ring(struct window *w, uint64_t now)
{
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  uint64_t until = now;
  unsigned r;
  if (w->cur == NULL) return now;
  d.deadline_ns = now + RING_DRAIN_NS;
  (void)ocgc_cursor_drain(w->cur, &d, NULL);
  if (ocgc_source_info(w->src, &info) != 0) return now;
  for (r = 0; r < info.max_domains && r < 128; r++) {
    struct ocgc_span s;
    if (ocgc_stream_depth(w->st, r) > 0 && ocgc_stream_open_span(w->st, r, 0, &s) == 0 &&
        s.begin < until)
      until = s.begin;
  }
  return until;
}

/* ---- the samples -------------------------------------------------------------------- */

static int on_sample(const struct ocgc_cpu_sample *s, void *ctx)
{
  struct window *w = ctx;
  struct ocgc_unwind_stack st;
  int err;
  ocgc_unwind_sample(w->unw, s, &st);
  if ((err = ocgc_cpuprof_add(w->prof, s->time_ns, &st)) != 0) {
    w->err = err;
    return 1;
  }
  return 0;
}

/* Open the ring (a process without one is still profiled; said once the
 * sampling is known to be allowed, so that a refusal is one line). */
static int open_ring(struct window *w)
{
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_stream_opts so = OCGC_OPTS_INIT(struct ocgc_stream_opts);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  int err;
  ao.dir = w->a->t.dir;
  ao.ids = w->a->t.ids;
  if ((err = ocgc_source_open_pid(w->a->t.pid, &ao, &w->src)) != 0) {
    w->src = NULL;
    return err;
  }
  so.on_collection = on_collection;
  so.ctx = w;
  co.start = OCGC_START_NOW;
  co.on_event = on_event;
  co.on_lost = on_lost;
  co.ctx = w;
  if (ocgc_stream_new(w->src, &so, &w->st) != 0 || ocgc_cursor_new(w->src, &co, &w->cur) != 0) {
      ocgc_cursor_free(w->cur);
    ocgc_stream_free(w->st);
    ocgc_source_close(w->src);
    w->cur = NULL;
    w->st = NULL;
    w->src = NULL;
    return -ENOMEM;
  }
  return 0;
}

/* The window: until its end, a stop signal, an exec or the process's end. */
static int run_window(struct window *w)
{
  const struct cpu_args *a = w->a;
  uint64_t poll = UINT64_C(3000000000) / a->frequency;
  int n = 0;
  if (poll > POLL_MAX_NS) poll = POLL_MAX_NS;
  if (poll < POLL_MIN_NS) poll = POLL_MIN_NS;
  w->t0 = cm_mono_ns();
  for (;;) {
    uint64_t now, until;
    int last;
    tool_sleep_ns(poll);
    now = cm_mono_ns();
    last = tool_stop || now - w->t0 >= a->duration_ns;
    until = read_ring(w, now);
    n = ocgc_cpu_read(w->cpu, on_sample, w);
    if (w->err != 0) break;
    ocgc_cpuprof_settle(w->prof, until);
    if (n == OCGC_E_STALE || n < 0 || last) break;
  }
  w->t1 = cm_mono_ns();
  /* the collections that ended since the last read */
  (void)read_ring(w, w->t1);
  if (w->st != NULL) ocgc_stream_settle(w->st);
  ocgc_cpuprof_finish(w->prof);
  if (w->err != 0) {
    tool_say("cannot make the profile: %s", ocgc_strerror(w->err));
    return TOOL_EXIT_ERROR;
  }
  if (tool_stop)
    tool_say("stopped: the window is %.1f s, not the %.1f s asked",
             (double)(w->t1 - w->t0) / 1e9, (double)a->duration_ns / 1e9);
  else if (n == OCGC_E_STALE)
    tool_say("%s exec'd or exited after %.1f s: the profile is of the samples before",
             tool_target_label(&a->t), (double)(w->t1 - w->t0) / 1e9);
  else if (n < 0)
    tool_say("%s: reading its samples failed after %.1f s (%s): the profile is of the samples "
             "before", tool_target_label(&a->t), (double)(w->t1 - w->t0) / 1e9,
             ocgc_strerror(n));
  return 0;
}

/* ---- the forms --------------------------------------------------------------------- */

static void json_out(FILE *f, void *arg)
{
  const struct window *w = arg;
  struct ocgc_cpuprof_stats ps = OCGC_OPTS_INIT(struct ocgc_cpuprof_stats);
  struct ocgc_cpu_stats cs = OCGC_OPTS_INIT(struct ocgc_cpu_stats);
  const struct ocgc_cpuprof_row *rows;
  size_t i, n = ocgc_cpuprof_rows(w->prof, &rows);
  uint64_t window = w->t1 - w->t0;
  struct json j;
  ocgc_cpuprof_stats(w->prof, &ps);
  ocgc_cpu_stats(w->cpu, &cs);
  json_init_file(&j, f, 0);
  json_obj(&j, JSON_LINES);
  json_kv_u64(&j, "pid", (uint64_t)w->a->t.pid);
  json_kv_u64(&j, "frequency_hz", w->a->frequency);
  json_kv_u64(&j, "period_ns", UINT64_C(1000000000) / w->a->frequency);
  json_kv_u64(&j, "window_ns", window);
  json_kv_u64(&j, "samples", ps.samples);
  json_kv_u64(&j, "gc_samples", ps.gc_samples);
  json_kv_u64(&j, "gc_unmatched", ps.gc_unmatched);
  json_kv_u64(&j, "overflow_samples", ps.overflow_samples);
  json_kv_u64(&j, "lost", cs.lost);
  json_kv_u64(&j, "threads_seen", cs.threads_seen);
  json_key(&j, "gc_share_samples");
  json_double(&j, 6, ps.samples ? (double)ps.gc_samples / (double)ps.samples : 0.0);
  json_key(&j, "gc_share_ring");
  if (w->src != NULL) json_double(&j, 6, window ? (double)w->ring_gc_ns / (double)window : 0.0);
  else json_null(&j);
  json_key(&j, "stacks");
  json_arr(&j, JSON_LINES);
  for (i = 0; i < n; i++) {
    const struct ocgc_cpuprof_row *r = &rows[i];
    const char *cause = r->cause >= 0 ? ocgc_cause_name((unsigned)r->cause) : NULL;
    unsigned d;
    json_obj(&j, JSON_INLINE);
    json_kv_u64(&j, "samples", r->samples);
    json_kv_str(&j, "gc_phase", ocgc_gc_phase_name(r->phase));
    json_kv_str(&j, "gc_cause", r->phase == OCGC_GC_MUTATOR ? NULL : cause ? cause : "unknown");
    json_kv_str(&j, "gc_call", ocgc_gc_call_name(r->call));
    json_kv_bool(&j, "overflow", r->overflow);
    json_kv_str(&j, "end", r->overflow ? NULL : ocgc_unwind_end_name(r->end));
    json_key(&j, "frames");
    json_arr(&j, JSON_INLINE);
    for (d = 0; d < r->depth; d++) {
      struct ocgc_symbol sym;
      char hex[24];
      snprintf(hex, sizeof hex, "0x%" PRIx64, r->frames[d]);
      ocgc_symbols_lookup(w->names, r->frames[d], d > 0, &sym);
      json_obj(&j, JSON_INLINE);
      json_kv_str(&j, "address", hex);
      json_kv_str(&j, "function", sym.function);
      json_kv_str(&j, "symbol", sym.symbol);
      json_kv_str(&j, "file", sym.file);
      json_kv_u64_or_null(&j, "line", sym.line != 0, sym.line);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj_end(&j);
  json_raw(&j, "\n");
}

static int emit(struct window *w)
{
  const struct cpu_args *a = w->a;
  unsigned char *bytes = NULL;
  size_t len = 0;
  int err = 0, rc;
  if (a->format == FMT_PPROF) {
    struct ocgc_cpuprof_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_cpuprof_pprof_opts);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    o.duration_ns = (int64_t)(w->t1 - w->t0);
    o.time_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - o.duration_ns;
    err = ocgc_cpuprof_pprof(w->prof, w->names, &o, &bytes, &len);
  } else if (a->format == FMT_FOLDED) {
    err = ocgc_cpuprof_folded(w->prof, w->names, a->by_phase, (char **)&bytes, &len);
  }
  if (err != 0) {
    tool_say("cannot write the profile: %s", ocgc_strerror(err));
    return TOOL_EXIT_ERROR;
  }
  rc = a->format == FMT_JSON ? profile_output(a->out, NULL, 0, json_out, w)
                             : profile_output(a->out, bytes, len, NULL, NULL);
  free(bytes);
  return rc;
}

/* The figures of the window, one line on stderr: the GC share the samples
 * give beside the one the ring measures. */
static void say_figures(const struct window *w)
{
  struct ocgc_cpuprof_stats ps = OCGC_OPTS_INIT(struct ocgc_cpuprof_stats);
  struct ocgc_cpu_stats cs = OCGC_OPTS_INIT(struct ocgc_cpu_stats);
  uint64_t window = w->t1 - w->t0;
  char ring[96] = "no ring";
  ocgc_cpuprof_stats(w->prof, &ps);
  ocgc_cpu_stats(w->cpu, &cs);
  if (w->src != NULL)
    snprintf(ring, sizeof ring, "the ring: %.1f%% of the wall time in collections",
             window ? 100.0 * (double)w->ring_gc_ns / (double)window : 0.0);
  tool_say("%s: %" PRIu64 " samples in %.1f s from %" PRIu64 " threads (%" PRIu64
           " lost), %.1f%% in the collector by their stacks (%" PRIu64 " of them at no ring "
           "collection); %s",
           tool_target_label(&w->a->t), ps.samples, (double)window / 1e9, cs.threads_seen,
           cs.lost, ps.samples ? 100.0 * (double)ps.gc_samples / (double)ps.samples : 0.0,
           ps.gc_unmatched, ring);
}

int cmd_profile_cpu(int argc, char **argv)
{
  struct cpu_args a;
  struct window w;
  struct tool_signals sig;
  struct ocgc_cpu_opts co = OCGC_OPTS_INIT(struct ocgc_cpu_opts);
  struct ocgc_symbols_opts so = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  struct ocgc_cpuprof_opts po = OCGC_OPTS_INIT(struct ocgc_cpuprof_opts);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  uint64_t start_time = 0;
  int rc, err, ring_err;
  memset(&a, 0, sizeof a);
  memset(&w, 0, sizeof w);
  if ((rc = parse_args(argc, argv, &a)) != 0) return rc;
  w.a = &a;
  /* caught before the opening (reading the files' CFI takes a while): a
   * stop then ends the window at its first turn */
  tool_signals_catch(&sig);
  ring_err = open_ring(&w);
  if (w.src != NULL && ocgc_source_info(w.src, &info) == 0 && info.has_ext)
    start_time = info.start_time;
  co.frequency_hz = a.frequency;
  if ((err = ocgc_cpu_open(a.t.pid, start_time, &co, &w.cpu)) != 0) {
    const char *hint = ocgc_cpu_denied_hint(err);
    /* a refusal: libocgc's one line (the setting, the capability) */
    if (hint != NULL) tool_say("%s: %s", tool_target_label(&a.t), hint);
    else tool_say("%s: cannot sample its CPU: %s", tool_target_label(&a.t), ocgc_strerror(err));
    rc = err == OCGC_E_PERF_DENIED ? TOOL_EXIT_DENIED
         : err == -ESRCH          ? TOOL_EXIT_NOTFOUND
         : err == OCGC_E_STALE    ? TOOL_EXIT_STALE
                                  : TOOL_EXIT_ERROR;
    goto out;
  }
  if (ring_err != 0)
    tool_say("%s: no GC ring read (%s): gc_phase from the stacks only, gc_cause unknown",
             tool_target_label(&a.t), ocgc_strerror(ring_err));
  so.no_lines = a.no_lines;
  if ((err = ocgc_symbols_open_pid(a.t.pid, start_time, &so, &w.names)) != 0 ||
      (err = ocgc_unwind_open(w.names, -1, NULL, &w.unw)) != 0) {
    tool_say("%s: cannot read its executable files (%s)", tool_target_label(&a.t),
             ocgc_strerror(err));
    rc = err == -ESRCH || err == -ENOENT ? TOOL_EXIT_NOTFOUND : TOOL_EXIT_ERROR;
    goto out;
  }
  po.frequency_hz = a.frequency;
  if ((err = ocgc_cpuprof_new(w.names, &po, &w.prof)) != 0) {
    tool_say("cannot make the profile: %s", ocgc_strerror(err));
    rc = TOOL_EXIT_ERROR;
    goto out;
  }
  rc = run_window(&w);
  if (rc == 0) {
    say_figures(&w);
    rc = emit(&w);
  }
out:
  tool_signals_restore(&sig);
  ocgc_cpuprof_free(w.prof);
  ocgc_unwind_close(w.unw);
  ocgc_symbols_close(w.names);
  ocgc_cpu_close(w.cpu);
  ocgc_cursor_free(w.cur);
  ocgc_stream_free(w.st);
  ocgc_source_close(w.src);
  return rc;
}
