/* cpu_window.c - a CPU profile being gathered from a running process
 * (cpu_window.h): its sampler, names, unwinder and profile (libocgc's
 * ocgc/cpu.h, symbols.h, unwind.h, cpuprof.h), its own cursor and stream
 * over the process's ring, and the turn that feeds them; the forms it is
 * written in, and the figures said at its end.  Shared by `ocgc profile
 * --cpu` (a window of a duration) and `ocgc run --cpu` (a whole run).
 *
 * Invariants:
 * - at each turn the ring is read before the samples, so every collection
 *   that began before the turn's start is given (or open, and then the
 *   settle stops at its begin) before the samples up to it are labelled;
 * - the frames of each sample are looked up as it is added (its labels),
 *   so the files of a process that exits before the end are read while
 *   it lives, and its profile is still named;
 * - the ring's share is of outermost collections within the window (from
 *   the sampler's open), a collection of every domain counted once;
 * - every string of the target's goes through json.h or libocgc's writers
 *   (escaped). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_window.h"
#include "json.h"

#define POLL_MAX_NS UINT64_C(50000000)
#define POLL_MIN_NS UINT64_C(5000000)
#define RING_DRAIN_NS UINT64_C(20000000)

struct cpu_window {
  int pid;
  char label[64];
  unsigned frequency;
  struct ocgc_source *src; /* borrowed */
  struct ocgc_stream *st;
  struct ocgc_cursor *cur;
  struct ocgc_cpu *cpu;
  struct ocgc_symbols *names;
  struct ocgc_unwind *unw;
  struct ocgc_cpuprof *prof;
  uint64_t t0, t1;     /* the window, CLOCK_MONOTONIC */
  uint64_t ring_gc_ns; /* outermost collections' time inside the window */
  int err;
};

/* ---- the ring: collections to the profile ------------------------------------------ */

static void on_collection(const struct ocgc_collection *c, void *ctx)
{
  struct cpu_window *w = ctx;
  uint64_t b = c->span.begin, e = c->span.end;
  if (c->stw_member) return; /* one collection of every domain: counted once */
  (void)ocgc_cpuprof_collection(w->prof, c->span.kind, c->span.cause, b, e);
  if (!c->outermost) return;
  if (b < w->t0) b = w->t0;
  if (w->t1 != 0 && e > w->t1) e = w->t1;
  if (e > b) w->ring_gc_ns += e - b;
}

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct cpu_window *w = ctx;
  ocgc_stream_event(w->st, ev);
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct cpu_window *w = ctx;
  (void)lost;
  (void)exact;
  ocgc_stream_lost(w->st, ring);
}

/* Read the ring; return the time up to which its collections are all
 * given: [now], or the begin of the oldest collection still open. */
static uint64_t read_ring(struct cpu_window *w, uint64_t now)
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
  struct cpu_window *w = ctx;
  struct ocgc_unwind_stack st;
  int err;
  ocgc_unwind_sample(w->unw, s, &st);
  if ((err = ocgc_cpuprof_add(w->prof, s->time_ns, &st)) != 0) {
    w->err = err;
    return 1;
  }
  return 0;
}

/* ---- opening and turning ----------------------------------------------------------- */

static int open_stream(struct cpu_window *w)
{
  struct ocgc_stream_opts so = OCGC_OPTS_INIT(struct ocgc_stream_opts);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  so.on_collection = on_collection;
  so.ctx = w;
  co.start = OCGC_START_NOW;
  co.on_event = on_event;
  co.on_lost = on_lost;
  co.ctx = w;
  if (ocgc_stream_new(w->src, &so, &w->st) != 0 || ocgc_cursor_new(w->src, &co, &w->cur) != 0) {
    ocgc_cursor_free(w->cur);
    ocgc_stream_free(w->st);
    w->cur = NULL;
    w->st = NULL;
    w->src = NULL;
    return -ENOMEM;
  }
  return 0;
}

int cpu_window_open(struct cpu_window **out, int pid, const char *label,
                    struct ocgc_source *src, const char *noring_why, unsigned frequency,
                    int no_lines)
{
  struct ocgc_cpu_opts co = OCGC_OPTS_INIT(struct ocgc_cpu_opts);
  struct ocgc_symbols_opts so = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  struct ocgc_cpuprof_opts po = OCGC_OPTS_INIT(struct ocgc_cpuprof_opts);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct cpu_window *w;
  uint64_t start_time = 0;
  int err, rc;
  *out = NULL;
  if ((w = calloc(1, sizeof *w)) == NULL) {
    tool_say("cannot make the profile: %s", ocgc_strerror(-ENOMEM));
    return TOOL_EXIT_ERROR;
  }
  w->pid = pid;
  w->frequency = frequency;
  snprintf(w->label, sizeof w->label, "%s", label);
  w->src = src;
  if (src != NULL && ocgc_source_info(src, &info) == 0 && info.has_ext)
    start_time = info.start_time;
  co.frequency_hz = frequency;
  if ((err = ocgc_cpu_open(pid, start_time, &co, &w->cpu)) != 0) {
    const char *hint = ocgc_cpu_denied_hint(err);
    /* a refusal: libocgc's one line (the setting, the capability) */
    if (hint != NULL) tool_say("%s: %s", label, hint);
    else tool_say("%s: cannot sample its CPU: %s", label, ocgc_strerror(err));
    rc = err == OCGC_E_PERF_DENIED ? TOOL_EXIT_DENIED
         : err == -ESRCH          ? TOOL_EXIT_NOTFOUND
         : err == OCGC_E_STALE    ? TOOL_EXIT_STALE
                                  : TOOL_EXIT_ERROR;
    cpu_window_free(w);
    return rc;
  }
  w->t0 = cm_mono_ns();
  if (src != NULL && open_stream(w) != 0) noring_why = "no memory for its reader";
  if (w->src == NULL && noring_why != NULL)
    tool_say("%s: no GC ring read (%s): gc_phase from the stacks only, gc_cause unknown", label,
             noring_why);
  so.no_lines = no_lines;
  if ((err = ocgc_symbols_open_pid(pid, start_time, &so, &w->names)) != 0 ||
      (err = ocgc_unwind_open(w->names, -1, NULL, &w->unw)) != 0) {
    tool_say("%s: cannot read its executable files (%s)", label, ocgc_strerror(err));
    cpu_window_free(w);
    return err == -ESRCH || err == -ENOENT ? TOOL_EXIT_NOTFOUND : TOOL_EXIT_ERROR;
  }
  po.frequency_hz = frequency;
  if ((err = ocgc_cpuprof_new(w->names, &po, &w->prof)) != 0) {
    tool_say("cannot make the profile: %s", ocgc_strerror(err));
    cpu_window_free(w);
    return TOOL_EXIT_ERROR;
  }
  *out = w;
  return 0;
}

uint64_t cpu_window_poll_ns(const struct cpu_window *w)
{
  uint64_t poll = UINT64_C(3000000000) / (w->frequency ? w->frequency : 100);
  return poll > POLL_MAX_NS ? POLL_MAX_NS : poll < POLL_MIN_NS ? POLL_MIN_NS : poll;
}

int cpu_window_turn(struct cpu_window *w)
{
  uint64_t until = read_ring(w, cm_mono_ns());
  int n = ocgc_cpu_read(w->cpu, on_sample, w);
  if (w->err != 0) {
    tool_say("cannot make the profile: %s", ocgc_strerror(w->err));
    return TOOL_EXIT_ERROR;
  }
  ocgc_cpuprof_settle(w->prof, until);
  return n < 0 ? n : 0;
}

void cpu_window_end(struct cpu_window *w)
{
  w->t1 = cm_mono_ns();
  /* the collections that ended since the last read */
  (void)read_ring(w, w->t1);
  if (w->st != NULL) ocgc_stream_settle(w->st);
  ocgc_cpuprof_finish(w->prof);
}

const struct ocgc_cpuprof *cpu_window_profile(const struct cpu_window *w)
{
  return w->prof;
}

uint64_t cpu_window_ns(const struct cpu_window *w)
{
  return (w->t1 ? w->t1 : cm_mono_ns()) - w->t0;
}

/* ---- the forms --------------------------------------------------------------------- */

static void json_out(FILE *f, void *arg)
{
  const struct cpu_window *w = arg;
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
  json_kv_u64(&j, "pid", (uint64_t)w->pid);
  json_kv_u64(&j, "frequency_hz", w->frequency);
  json_kv_u64(&j, "period_ns", UINT64_C(1000000000) / w->frequency);
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

int cpu_window_write(struct cpu_window *w, enum format format, int by_phase, const char *path)
{
  unsigned char *bytes = NULL;
  size_t len = 0;
  int err = 0, rc;
  if (format == FMT_PPROF) {
    struct ocgc_cpuprof_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_cpuprof_pprof_opts);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    o.duration_ns = (int64_t)cpu_window_ns(w);
    o.time_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - o.duration_ns;
    err = ocgc_cpuprof_pprof(w->prof, w->names, &o, &bytes, &len);
  } else if (format == FMT_FOLDED) {
    err = ocgc_cpuprof_folded(w->prof, w->names, by_phase, (char **)&bytes, &len);
  }
  if (err != 0) {
    tool_say("cannot write the profile: %s", ocgc_strerror(err));
    return TOOL_EXIT_ERROR;
  }
  rc = format == FMT_JSON ? profile_output(path, NULL, 0, json_out, w)
                          : profile_output(path, bytes, len, NULL, NULL);
  free(bytes);
  return rc;
}

void cpu_window_say(const struct cpu_window *w)
{
  struct ocgc_cpuprof_stats ps = OCGC_OPTS_INIT(struct ocgc_cpuprof_stats);
  struct ocgc_cpu_stats cs = OCGC_OPTS_INIT(struct ocgc_cpu_stats);
  uint64_t window = cpu_window_ns(w);
  char ring[96] = "no ring";
  ocgc_cpuprof_stats(w->prof, &ps);
  ocgc_cpu_stats(w->cpu, &cs);
  if (w->src != NULL)
    snprintf(ring, sizeof ring, "the ring: %.1f%% of the wall time in collections",
             window ? 100.0 * (double)w->ring_gc_ns / (double)window : 0.0);
  tool_say("%s: %" PRIu64 " samples in %.1f s from %" PRIu64 " threads (%" PRIu64
           " lost), %.1f%% in the collector by their stacks (%" PRIu64 " of them at no ring "
           "collection); %s",
           w->label, ps.samples, (double)window / 1e9, cs.threads_seen, cs.lost,
           ps.samples ? 100.0 * (double)ps.gc_samples / (double)ps.samples : 0.0,
           ps.gc_unmatched, ring);
}

void cpu_window_free(struct cpu_window *w)
{
  if (w == NULL) return;
  ocgc_cpuprof_free(w->prof);
  ocgc_unwind_close(w->unw);
  ocgc_symbols_close(w->names);
  ocgc_cpu_close(w->cpu);
  ocgc_cursor_free(w->cur);
  ocgc_stream_free(w->st);
  free(w);
}
