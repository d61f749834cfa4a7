/* cpuwindow.c - a CPU profile of a running process gathered over a window
 * (ocgc/cpuwindow.h): its sampler, names, unwinder and profile, its own
 * cursor and stream over the process's ring, the turn that feeds them,
 * the end and the figures.  Taken out of the ocgc command's cpu_window.c,
 * so that every agent (ocgc profile --cpu, run --cpu, serve's
 * /debug/pprof/profile) gathers a profile by the same rules; the command
 * keeps only its lines and forms.
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
 * - a turn drains the ring within RING_DRAIN_NS and reads at most the
 *   samples the sampler's rings hold: bounded whatever the target writes. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ocgc/cpuwindow.h"
#include "ocgc/cursor.h"
#include "ocgc/drain.h"
#include "ocgc/source.h"
#include "ocgc/stream.h"
#include "opts.h"

#define POLL_MAX_NS UINT64_C(50000000)
#define POLL_MIN_NS UINT64_C(5000000)
#define RING_DRAIN_NS UINT64_C(20000000)
#define MAX_FREQUENCY 1000u

struct ocgc_cpuwindow {
  int pid;
  unsigned frequency;
  struct ocgc_source *src; /* borrowed; NULL: no ring read */
  struct ocgc_stream *st;
  struct ocgc_cursor *cur;
  struct ocgc_cpu *cpu;
  struct ocgc_symbols *names;
  struct ocgc_unwind *unw;
  struct ocgc_cpuprof *prof;
  uint64_t t0, t1;     /* the window, CLOCK_MONOTONIC (t1: 0 until the end) */
  uint64_t ring_gc_ns; /* outermost collections' time inside the window */
  int err;             /* a sample's add failed */
};

/* ---- the ring: collections to the profile ------------------------------------------ */

static void on_collection(const struct ocgc_collection *c, void *ctx)
{
  struct ocgc_cpuwindow *w = ctx;
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
  struct ocgc_cpuwindow *w = ctx;
  ocgc_stream_event(w->st, ev);
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct ocgc_cpuwindow *w = ctx;
  (void)lost;
  (void)exact;
  ocgc_stream_lost(w->st, ring);
}

/* Read the ring; return the time up to which its collections are all
 * given: [now], or the begin of the oldest collection still open. */
static uint64_t read_ring(struct ocgc_cpuwindow *w, uint64_t now)
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
  struct ocgc_cpuwindow *w = ctx;
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

/* The window's own cursor and stream over [w->src]; without memory for
 * them the window reads no ring (w->src NULL). */
static void open_stream(struct ocgc_cpuwindow *w)
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
  }
}

int ocgc_cpuwindow_open(int pid, uint64_t start_time, struct ocgc_source *src,
                        const struct ocgc_cpuwindow_opts *opts, struct ocgc_cpuwindow **out,
                        enum ocgc_cpuwindow_part *failed)
{
  struct ocgc_cpuwindow_opts o;
  struct ocgc_cpu_opts co = OCGC_OPTS_INIT(struct ocgc_cpu_opts);
  struct ocgc_unwind_opts uo = OCGC_OPTS_INIT(struct ocgc_unwind_opts);
  struct ocgc_cpuprof_opts po = OCGC_OPTS_INIT(struct ocgc_cpuprof_opts);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_cpuwindow *w;
  int err;
  enum ocgc_cpuwindow_part dummy;
  if (failed == NULL) failed = &dummy;
  *failed = OCGC_CPUWINDOW_PROFILE;
  if (out == NULL) return -EINVAL;
  *out = NULL;
  if (pid <= 0 || (err = opts_read(&o, sizeof o, opts)) != 0) return -EINVAL;
  if (o.frequency_hz == 0) o.frequency_hz = 100;
  if (o.frequency_hz > MAX_FREQUENCY) return -EINVAL;
  if ((w = calloc(1, sizeof *w)) == NULL) return -ENOMEM;
  w->pid = pid;
  w->frequency = o.frequency_hz;
  w->src = src;
  if (src != NULL && ocgc_source_info(src, &info) == 0 && info.has_ext)
    start_time = info.start_time;
  co.frequency_hz = o.frequency_hz;
  co.max_threads = o.max_threads;
  if ((err = ocgc_cpu_open(pid, start_time, &co, &w->cpu)) != 0) {
    *failed = OCGC_CPUWINDOW_SAMPLER;
    ocgc_cpuwindow_free(w);
    return err;
  }
  w->t0 = cm_mono_ns();
  if (src != NULL) open_stream(w);
  uo.max_read_bytes = o.max_read_bytes;
  if ((err = ocgc_symbols_open_pid(pid, start_time, o.symbols, &w->names)) != 0 ||
      (err = ocgc_unwind_open(w->names, -1, &uo, &w->unw)) != 0) {
    *failed = OCGC_CPUWINDOW_FILES;
    ocgc_cpuwindow_free(w);
    return err;
  }
  po.frequency_hz = o.frequency_hz;
  if ((err = ocgc_cpuprof_new(w->names, &po, &w->prof)) != 0) {
    ocgc_cpuwindow_free(w);
    return err;
  }
  *out = w;
  return 0;
}

uint64_t ocgc_cpuwindow_poll_ns(const struct ocgc_cpuwindow *w)
{
  uint64_t poll = UINT64_C(3000000000) / (w != NULL && w->frequency ? w->frequency : 100);
  return poll > POLL_MAX_NS ? POLL_MAX_NS : poll < POLL_MIN_NS ? POLL_MIN_NS : poll;
}

int ocgc_cpuwindow_turn(struct ocgc_cpuwindow *w)
{
  uint64_t until;
  int n;
  if (w == NULL || w->t1 != 0) return -EINVAL;
  until = read_ring(w, cm_mono_ns());
  n = ocgc_cpu_read(w->cpu, on_sample, w);
  if (w->err != 0) return w->err;
  ocgc_cpuprof_settle(w->prof, until);
  return n < 0 ? n : 0;
}

void ocgc_cpuwindow_end(struct ocgc_cpuwindow *w)
{
  if (w == NULL || w->t1 != 0) return;
  w->t1 = cm_mono_ns();
  /* the collections that ended since the last read */
  (void)read_ring(w, w->t1);
  if (w->st != NULL) ocgc_stream_settle(w->st);
  ocgc_cpuprof_finish(w->prof);
}

int ocgc_cpuwindow_stats(const struct ocgc_cpuwindow *w, struct ocgc_cpuwindow_stats *out)
{
  struct ocgc_cpuwindow_stats s;
  struct ocgc_cpuprof_stats ps = OCGC_OPTS_INIT(struct ocgc_cpuprof_stats);
  struct ocgc_cpu_stats cs = OCGC_OPTS_INIT(struct ocgc_cpu_stats);
  if (w == NULL) return -EINVAL;
  memset(&s, 0, sizeof s);
  s.sz = sizeof s;
  ocgc_cpuprof_stats(w->prof, &ps);
  ocgc_cpu_stats(w->cpu, &cs);
  s.pid = w->pid;
  s.frequency_hz = w->frequency;
  s.window_ns = (w->t1 ? w->t1 : cm_mono_ns()) - w->t0;
  s.samples = ps.samples;
  s.gc_samples = ps.gc_samples;
  s.gc_unmatched = ps.gc_unmatched;
  s.overflow_samples = ps.overflow_samples;
  s.lost = cs.lost;
  s.threads_seen = cs.threads_seen;
  s.has_ring = w->src != NULL;
  s.ring_gc_ns = w->ring_gc_ns;
  s.ended = w->t1 != 0;
  s.gc_share_samples = s.samples ? (double)s.gc_samples / (double)s.samples : 0.0;
  s.gc_share_ring = s.has_ring && s.window_ns ? (double)s.ring_gc_ns / (double)s.window_ns : 0.0;
  return opts_write(out, &s, sizeof s);
}

const struct ocgc_cpuprof *ocgc_cpuwindow_profile(const struct ocgc_cpuwindow *w)
{
  return w != NULL ? w->prof : NULL;
}

struct ocgc_symbols *ocgc_cpuwindow_names(const struct ocgc_cpuwindow *w)
{
  return w != NULL ? w->names : NULL;
}

int ocgc_cpuwindow_pprof(const struct ocgc_cpuwindow *w, const struct ocgc_cpuprof_pprof_opts *opts,
                         unsigned char **out, size_t *len)
{
  struct ocgc_cpuprof_pprof_opts o;
  int err;
  if (w == NULL || w->t1 == 0) return -EINVAL;
  if ((err = opts_read(&o, sizeof o, opts)) != 0) return err;
  o.sz = sizeof o;
  if (o.duration_ns == 0) o.duration_ns = (int64_t)(w->t1 - w->t0);
  if (o.time_ns == 0) {
    /* the window's begin on the wall clock: now less the time since it */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    o.time_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec -
                (int64_t)(cm_mono_ns() - w->t0);
  }
  return ocgc_cpuprof_pprof(w->prof, w->names, &o, out, len);
}

void ocgc_cpuwindow_free(struct ocgc_cpuwindow *w)
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
