/* metrics.c - the families of a watch (ocgc/expo.h: ocgc_watch_expose),
 * one after the other (the format wants a family's lines together), each
 * with a line per watched process labelled pid and program, or per program
 * for a watch made by_program (programs.c); the ends of processes
 * (ocaml_process_exits_total) per program and how in both (exits.c: a
 * process that ended has no series of its own).
 *
 * Invariants: counters come from what only grows while a process lives:
 * the aggregator's counters (exact from the producer's totals in ocgc
 * files), the totals' cause table (kept from the last consistent read),
 * both held by watch.c never below what was exposed before, even from a
 * producer that lies, and /proc's counts; a figure a process cannot give
 * (stock OCaml 5 rings have no totals; another user's /proc/PID/fd) is
 * left out, never written as 0.  Names follow the OpenTelemetry-style
 * ocaml.gc.* translated to ocaml_gc_*, and the process_* names of
 * Prometheus client libraries prefixed with ocaml_: unprefixed, they are
 * an exporter's own (node_exporter serves its own process_*, and dropped
 * ours from a textfile as a clash). */

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "exits.h"
#include "metrics_slicework.h"
#include "ocgc/expo.h"
#include "programs.h"
#include "watched.h"

/* A group of series: one process (p), or with --by program one program's
 * processes (g).  Each family below says what it shows of either. */
struct view {
  const struct ocgc_watched *p;
  const struct program *g;
};

struct family;
typedef void (*family_fn)(struct ocgc_expo *e, const struct family *f, const struct view *v,
                          struct ocgc_expo_label *l, unsigned nl);
/* The groupings a family has series in; EXITS: by program in both (a
 * process that ended has no series of its own), from exits.c. */
enum scope { BOTH, PROCESS, PROGRAM, EXITS };
struct family {
  const char *name, *type, *help;
  family_fn fn;
  size_t off; /* config(): the field of struct ocgc_gc_config; memprof(): of
                 struct ocgc_memprof_summary */
  enum scope scope;
};

/* Whether the group says what only ocgc's runtime tells (the heap, the
 * end of a major cycle): stock OCaml 5 rings do not, and their series are
 * left out rather than served as 0 (ocaml_runtime_info says which). */
static int has_ext(const struct view *v)
{
  return v->p != NULL ? v->p->info.has_ext : v->g->shown.has_ext || v->g->live.has_ext;
}

/* The counters a series shows: the process's, or the program's sums
 * held (only their monotone counts are summed: programs.h). */
static const struct ocgc_counters *counts(const struct view *v)
{
  return v->g != NULL ? &v->g->shown.c : &v->p->counters;
}

static void histogram(struct ocgc_expo *e, const char *name, struct ocgc_expo_label *l, unsigned nl,
                      const struct ocgc_bucket_counts *b)
{
  if (b->nbounds > 0) ocgc_expo_buckets(e, name, l, nl, b);
}

static void pauses(struct ocgc_expo *e, const struct family *f, const struct view *v,
                   struct ocgc_expo_label *l, unsigned nl)
{
  struct ocgc_bucket_counts b = OCGC_OPTS_INIT(struct ocgc_bucket_counts);
  if (v->g != NULL) histogram(e, f->name, l, nl, &v->g->shown.pauses);
  else if (ocgc_snapshot_pause_buckets(v->p->snap, &b) == 0) histogram(e, f->name, l, nl, &b);
}

static void durations(struct ocgc_expo *e, const struct family *f, const struct view *v,
                      struct ocgc_expo_label *l, unsigned nl)
{
  unsigned k;
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    struct ocgc_bucket_counts b = OCGC_OPTS_INIT(struct ocgc_bucket_counts);
    l[nl] = (struct ocgc_expo_label){"kind", ocgc_kind_name(k)};
    if (v->g != NULL) histogram(e, f->name, l, nl + 1, &v->g->shown.kinds[k]);
    else if (ocgc_snapshot_kind_buckets(v->p->snap, k, &b) == 0)
      histogram(e, f->name, l, nl + 1, &b);
  }
}

/* By kind and cause: the producer's exact table (ocgc files), else the
 * aggregator's (what its events showed). */
static void collections(struct ocgc_expo *e, const struct family *f, const struct view *v,
                        struct ocgc_expo_label *l, unsigned nl)
{
  unsigned k, c;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
      uint64_t n = v->g != NULL ? v->g->shown.w.by_cause[k][c] : ocgc_watched_collections(v->p, k, c);
      if (n == 0) continue;
      l[nl] = (struct ocgc_expo_label){"kind", ocgc_kind_name(k)};
      l[nl + 1] = (struct ocgc_expo_label){"cause", ocgc_cause_name(c)};
      ocgc_expo_u64(e, f->name, l, nl + 2, n);
    }
}

/* A counter, from the process or from the program's sums held.  By hand,
 * not a loop over the counters' table: each series has its own name, help
 * and labels (the families below), and only some figures are series. */
#define COUNTER(fname, value, ext_only)                                                          \
  static void fname(struct ocgc_expo *e, const struct family *f, const struct view *v,                \
                    struct ocgc_expo_label *l, unsigned nl)                                           \
  {                                                                                              \
    if ((ext_only) && !has_ext(v)) return;                                                       \
    ocgc_expo_u64(e, f->name, l, nl, (value));                                                   \
  }
COUNTER(major_cycles, counts(v)->major_cycles, 1)
COUNTER(promoted, counts(v)->promoted_bytes, 0)
COUNTER(events_lost, counts(v)->events_lost, 0)
COUNTER(events, v->g != NULL ? v->g->shown.w.events : ocgc_watched_events(v->p), 0)
#undef COUNTER

static void gc_time(struct ocgc_expo *e, const struct family *f, const struct view *v,
                    struct ocgc_expo_label *l, unsigned nl)
{
  ocgc_expo_ns(e, f->name, l, nl, counts(v)->gc_time_ns);
}

static void allocated(struct ocgc_expo *e, const struct family *f, const struct view *v,
                      struct ocgc_expo_label *l, unsigned nl)
{
  l[nl] = (struct ocgc_expo_label){"heap", "minor"};
  ocgc_expo_u64(e, f->name, l, nl + 1, counts(v)->allocated_bytes);
  l[nl] = (struct ocgc_expo_label){"heap", "major"};
  ocgc_expo_u64(e, f->name, l, nl + 1, counts(v)->direct_major_bytes);
}

/* The heap: a program's is the sum of its living processes' heaps, its
 * top the highest of theirs. */
static void heap_size(struct ocgc_expo *e, const struct family *f, const struct view *v,
                      struct ocgc_expo_label *l, unsigned nl)
{
  if (!has_ext(v)) return;
  ocgc_expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->live.heap_bytes : v->p->counters.heap_bytes);
}

static void heap_top(struct ocgc_expo *e, const struct family *f, const struct view *v,
                     struct ocgc_expo_label *l, unsigned nl)
{
  if (!has_ext(v)) return;
  ocgc_expo_u64(e, f->name, l, nl,
           v->g != NULL ? v->g->live.top_heap_bytes : v->p->counters.top_heap_bytes);
}

/* The heap after the last major cycle: a program's, its living
 * processes' summed (those that have ended a cycle). */
static void heap_live(struct ocgc_expo *e, const struct family *f, const struct view *v,
                      struct ocgc_expo_label *l, unsigned nl)
{
  if (v->g != NULL) {
    if (v->g->live.have_live) ocgc_expo_u64(e, f->name, l, nl, v->g->live.live_bytes);
  } else if (v->p->have_totals && v->p->totals.live_words != 0) {
    ocgc_expo_u64(e, f->name, l, nl, v->p->totals.live_words * 8);
  }
}

static void heap_chunks(struct ocgc_expo *e, const struct family *f, const struct view *v,
                        struct ocgc_expo_label *l, unsigned nl)
{
  if (v->g != NULL) {
    if (v->g->live.has_ext) ocgc_expo_u64(e, f->name, l, nl, v->g->live.heap_chunks);
  } else if (v->p->have_totals) {
    ocgc_expo_u64(e, f->name, l, nl, v->p->totals.heap_chunks);
  }
}

/* The GC settings, in base units: bytes, and ratios for OCaml's percents
 * (o=120 is 1.2).  A program's: its processes', when they all agree. */
static void config(struct ocgc_expo *e, const struct family *f, const struct view *v,
                   struct ocgc_expo_label *l, unsigned nl)
{
  const struct ocgc_gc_config *cfg;
  uint64_t val;
  if (v->g != NULL) cfg = v->g->live.config_state == 1 ? &v->g->live.config : NULL;
  else cfg = v->p->have_config ? &v->p->config : NULL;
  if (cfg == NULL) return;
  memcpy(&val, (const char *)cfg + f->off, sizeof val);
  if (f->off == offsetof(struct ocgc_gc_config, minor_heap_words)) ocgc_expo_u64(e, f->name, l, nl, val * 8);
  else if (f->off == offsetof(struct ocgc_gc_config, allocation_policy)) ocgc_expo_u64(e, f->name, l, nl, val);
  else ocgc_expo_double(e, f->name, l, nl, (double)val / 100.0);
}

static void info_series(struct ocgc_expo *e, const char *name, struct ocgc_expo_label *l, unsigned nl,
                        const char *version, const char *variant, const char *ocgc_version)
{
  l[nl] = (struct ocgc_expo_label){"version", version};
  l[nl + 1] = (struct ocgc_expo_label){"variant", variant};
  l[nl + 2] = (struct ocgc_expo_label){"ocgc_version", ocgc_version[0] != '\0' ? ocgc_version : NULL};
  ocgc_expo_u64(e, name, l, nl + 3, 1);
}

/* A process's runtime; a program's, one series per distinct runtime of
 * its living processes. */
static void runtime_info(struct ocgc_expo *e, const struct family *f, const struct view *v,
                         struct ocgc_expo_label *l, unsigned nl)
{
  if (v->g != NULL) {
    unsigned i;
    for (i = 0; i < v->g->live.ninfos; i++) {
      const struct runtime_label *in = &v->g->live.infos[i];
      info_series(e, f->name, l, nl, in->version, in->variant, in->ocgc_version);
    }
  } else {
    struct runtime_label in;
    watched_runtime(v->p, &in);
    info_series(e, f->name, l, nl, in.version, in.variant, in.ocgc_version);
  }
}

static void processes(struct ocgc_expo *e, const struct family *f, const struct view *v,
                      struct ocgc_expo_label *l, unsigned nl)
{
  ocgc_expo_u64(e, f->name, l, nl, v->g->live.processes);
}

/* A stock OCaml 5.3+ process's major-slice work (metrics_slicework.c; off:
 * which series).  Per process only: a program's sums of them are not kept. */
static void slicework(struct ocgc_expo *e, const struct family *f, const struct view *v,
                      struct ocgc_expo_label *l, unsigned nl)
{
  metrics_slicework(e, f->name, (enum metrics_slicework_series)f->off, v->p->snap, l, nl);
}

/* ---- the process family, from /proc/PID ---- */

/* Split by mode only, as node_exporter's node_cpu_seconds_total: a series
 * of the sum beside them would count twice under sum(). */
static void cpu(struct ocgc_expo *e, const struct family *f, const struct view *v,
                struct ocgc_expo_label *l, unsigned nl)
{
  l[nl] = (struct ocgc_expo_label){"mode", "user"};
  ocgc_expo_ns(e, f->name, l, nl + 1, v->g != NULL ? v->g->shown.w.utime_ns : v->p->proc.utime_ns);
  l[nl] = (struct ocgc_expo_label){"mode", "system"};
  ocgc_expo_ns(e, f->name, l, nl + 1, v->g != NULL ? v->g->shown.w.stime_ns : v->p->proc.stime_ns);
}

static void rss(struct ocgc_expo *e, const struct family *f, const struct view *v,
                struct ocgc_expo_label *l, unsigned nl)
{
  ocgc_expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->live.rss_bytes : v->p->proc.rss_bytes);
}

static void vsize(struct ocgc_expo *e, const struct family *f, const struct view *v,
                  struct ocgc_expo_label *l, unsigned nl)
{
  ocgc_expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->live.vsize_bytes : v->p->proc.vsize_bytes);
}

static void start_time(struct ocgc_expo *e, const struct family *f, const struct view *v,
                       struct ocgc_expo_label *l, unsigned nl)
{
  if (v->p->proc.start_time_ns > 0) ocgc_expo_ns(e, f->name, l, nl, v->p->proc.start_time_ns);
}

static void open_fds(struct ocgc_expo *e, const struct family *f, const struct view *v,
                     struct ocgc_expo_label *l, unsigned nl)
{
  if (v->g != NULL) {
    if (v->g->live.have_fds) ocgc_expo_u64(e, f->name, l, nl, v->g->live.open_fds);
  } else if (v->p->proc.have_fds) {
    ocgc_expo_u64(e, f->name, l, nl, v->p->proc.open_fds);
  }
}

static void max_fds(struct ocgc_expo *e, const struct family *f, const struct view *v,
                    struct ocgc_expo_label *l, unsigned nl)
{
  const struct ocgc_watched *p = v->p;
  if (!p->proc.have_max_fds) return;
  if (p->proc.max_fds == UINT64_MAX) ocgc_expo_double(e, f->name, l, nl, INFINITY);
  else ocgc_expo_u64(e, f->name, l, nl, p->proc.max_fds);
}

static void threads(struct ocgc_expo *e, const struct family *f, const struct view *v,
                    struct ocgc_expo_label *l, unsigned nl)
{
  ocgc_expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->live.threads : v->p->proc.threads);
}

static void ctxt(struct ocgc_expo *e, const struct family *f, const struct view *v,
                 struct ocgc_expo_label *l, unsigned nl)
{
  if (v->p != NULL && !v->p->proc.have_ctxt) return;
  l[nl] = (struct ocgc_expo_label){"type", "voluntary"};
  ocgc_expo_u64(e, f->name, l, nl + 1,
           v->g != NULL ? v->g->shown.w.voluntary_ctxt : v->p->proc.voluntary_ctxt);
  l[nl] = (struct ocgc_expo_label){"type", "involuntary"};
  ocgc_expo_u64(e, f->name, l, nl + 1,
           v->g != NULL ? v->g->shown.w.involuntary_ctxt : v->p->proc.involuntary_ctxt);
}

static void faults(struct ocgc_expo *e, const struct family *f, const struct view *v,
                   struct ocgc_expo_label *l, unsigned nl)
{
  l[nl] = (struct ocgc_expo_label){"type", "minor"};
  ocgc_expo_u64(e, f->name, l, nl + 1, v->g != NULL ? v->g->shown.w.minflt : v->p->proc.minflt);
  l[nl] = (struct ocgc_expo_label){"type", "major"};
  ocgc_expo_u64(e, f->name, l, nl + 1, v->g != NULL ? v->g->shown.w.majflt : v->p->proc.majflt);
}

static void poll_every(struct ocgc_expo *e, const struct family *f, const struct view *v,
                       struct ocgc_expo_label *l, unsigned nl)
{
  ocgc_expo_ns(e, f->name, l, nl, v->p->poll_every_ns);
}

static void stale(struct ocgc_expo *e, const struct family *f, const struct view *v,
                  struct ocgc_expo_label *l, unsigned nl)
{
  ocgc_expo_u64(e, f->name, l, nl, (uint64_t)(v->p->stale != 0));
}

/* A figure of the process's allocation profile (off: its field of struct
 * ocgc_memprof_summary); none for a ring without one. */
static void memprof(struct ocgc_expo *e, const struct family *f, const struct view *v,
                    struct ocgc_expo_label *l, unsigned nl)
{
  uint64_t x;
  if (!v->p->have_memprof) return;
  memcpy(&x, (const char *)&v->p->memprof + f->off, sizeof x);
  ocgc_expo_u64(e, f->name, l, nl, x);
}

/* The bytes the samples stand for: their words x 8 (the profile's rule,
 * ocgc_profile_values). */
static void memprof_bytes(struct ocgc_expo *e, const struct family *f, const struct view *v,
                          struct ocgc_expo_label *l, unsigned nl)
{
  uint64_t w = v->p->memprof.words;
  if (!v->p->have_memprof) return;
  ocgc_expo_u64(e, f->name, l, nl, w > UINT64_MAX / 8 ? UINT64_MAX : w * 8);
}

/* A program's ends by how: exited, killed and oom always (a rate sees the
 * first end), unknown once one was. */
static void exits(struct ocgc_expo *e, const char *name, const struct exits *t)
{
  const struct exit_prog *g;
  for (g = t->list; g != NULL; g = g->next) {
    int how;
    for (how = OCGC_EXIT_EXITED; how <= OCGC_EXIT_OOM + 1; how++) {
      int h = how <= OCGC_EXIT_OOM ? how : OCGC_EXIT_UNKNOWN;
      struct ocgc_expo_label l[OCGC_EXPO_MAX_LABELS] = {{"program", g->label},
                                                       {"how", ocgc_exit_how_name(h)}};
      if (h == OCGC_EXIT_UNKNOWN && g->n[h] == 0) continue;
      ocgc_expo_u64(e, name, l, 2, g->n[h]);
    }
  }
}

static const struct family families[] = {
  {"ocaml_gc_pause_seconds", "histogram",
   "Stops of the mutator by the GC (one observation per pause), from the events read.", pauses,
   0, BOTH},
  {"ocaml_gc_duration_seconds", "histogram",
   "Durations of the collections of each kind, from the events read.", durations, 0, BOTH},
  {"ocaml_gc_collections_total", "counter", "Collections by kind and cause.", collections, 0, BOTH},
  {"ocaml_gc_major_cycles_total", "counter", "Major GC cycles completed.", major_cycles, 0, BOTH},
  {"ocaml_gc_time_seconds_total", "counter", "Time spent in the GC.", gc_time, 0, BOTH},
  {"ocaml_gc_allocated_bytes_total", "counter",
   "Bytes allocated in the minor heap, and directly in the major heap (promotion is "
   "ocaml_gc_promoted_bytes_total).", allocated, 0, BOTH},
  {"ocaml_gc_promoted_bytes_total", "counter", "Bytes promoted from the minor heap to the major "
   "heap.", promoted, 0, BOTH},
  {"ocaml_gc_heap_size_bytes", "gauge", "Size of the major heap (by program: summed over its "
   "living processes).", heap_size, 0, BOTH},
  {"ocaml_gc_heap_top_bytes", "gauge", "Largest size the major heap has had (by program: the "
   "largest of its living processes').", heap_top, 0, BOTH},
  {"ocaml_gc_heap_chunks", "gauge", "Chunks in the major heap.", heap_chunks, 0, BOTH},
  {"ocaml_gc_heap_live_bytes", "gauge", "The major heap not free when the last major cycle "
   "ended (live blocks and fragments): the heap after GC (by program: summed over its living "
   "processes that ended a cycle).", heap_live, 0, BOTH},
  {"ocaml_gc_config_minor_heap_size_bytes", "gauge", "Size of the minor heap (Gc minor_heap_size), "
   "as of the last collection or Gc.set (by program: when its processes agree).", config,
   offsetof(struct ocgc_gc_config, minor_heap_words), BOTH},
  {"ocaml_gc_config_space_overhead_ratio", "gauge", "Gc space_overhead as a ratio (o=120 is 1.2), "
   "as of the last collection or Gc.set (by program: when its processes agree).", config,
   offsetof(struct ocgc_gc_config, space_overhead), BOTH},
  {"ocaml_gc_config_max_overhead_ratio", "gauge", "Gc max_overhead as a ratio (10000: never "
   "compact), as of the last collection or Gc.set (by program: when its processes agree).",
   config, offsetof(struct ocgc_gc_config, max_overhead), BOTH},
  {"ocaml_gc_config_allocation_policy", "gauge", "Gc allocation_policy (0 next-fit, 1 first-fit, "
   "2 best-fit), as of the last collection or Gc.set (by program: when its processes agree).",
   config, offsetof(struct ocgc_gc_config, allocation_policy), BOTH},
  {"ocaml_gc_major_slice_work_units", "histogram", "Work each major slice set out to do, in GC "
   "work units (about a word marked or swept): max(its target - the runtime's work counter, its "
   "budget), from the counters stock OCaml 5.3+ writes before each slice.", slicework,
   MSW_WORK_HIST, PROCESS},
  {"ocaml_gc_major_work_done_units_total", "counter", "GC work units the major GC did since the "
   "process began, every domain's (the runtime's work counter; stock OCaml 5.3+).", slicework,
   MSW_DONE, PROCESS},
  {"ocaml_gc_major_work_asked_units_total", "counter", "GC work units allocation and custom "
   "blocks asked of the major GC since the process began (the runtime's alloc counter; asked - "
   "done is how far the GC is behind; stock OCaml 5.3+).", slicework, MSW_ASKED, PROCESS},
  {"ocaml_gc_major_slice_drivers_total", "counter", "Major slices by what set their work: "
   "allocation, dependent (custom blocks' dependent memory), extra (custom blocks' resources, "
   "Gc speed), budget (an explicit quantity: Gc.major_slice n, a full major), none (stock OCaml "
   "5.3+).", slicework, MSW_DRIVERS, PROCESS},
  {"ocaml_runtime_info", "info", "The OCaml runtime of the process (by program: each runtime "
   "its living processes have; always 1).", runtime_info, 0, BOTH},
  {"ocgc_serve_program_processes", "gauge", "Living processes of the program watched.", processes,
   0, PROGRAM},
  {"ocgc_ring_events_lost_total", "counter",
   "Events overwritten in the ring before this exporter read them, since it began to watch "
   "the process (not those written before and overwritten as it caught up).", events_lost, 0, BOTH},
  {"ocgc_ring_events_total", "counter", "Events the runtime wrote into its ring (stock OCaml 5 "
   "rings: the events this exporter read).", events, 0, BOTH},
  {"ocgc_serve_poll_interval_seconds", "gauge", "Time between two drains of the process's ring "
   "on its own schedule (shorter while it writes much).", poll_every, 0, PROCESS},
  {"ocgc_serve_stale", "gauge", "1 when the process's figures are not from this scrape's read "
   "(its ring was slow to read, or left alone for a while after that), else 0.", stale, 0, PROCESS},
  {"ocaml_memprof_rate_bytes", "gauge", "Mean bytes allocated between two samples of the "
   "runtime's allocation profile (ocgc profile, /debug/pprof/allocs); 0: sampling is off.",
   memprof, offsetof(struct ocgc_memprof_summary, rate_bytes), PROCESS},
  {"ocaml_memprof_sampled_bytes_total", "counter", "Bytes allocated since sampling began, as the "
   "profile's samples estimate them (each sample stands for the rate's bytes).", memprof_bytes, 0,
   PROCESS},
  {"ocaml_memprof_samples_total", "counter", "Samples the allocation profile took.", memprof,
   offsetof(struct ocgc_memprof_summary, samples), PROCESS},
  {"ocaml_memprof_stacks", "gauge", "Call stacks in the allocation profile's table.", memprof,
   offsetof(struct ocgc_memprof_summary, stacks), PROCESS},
  {"ocaml_memprof_table_rows", "gauge", "Rows of the allocation profile's table (one is the "
   "overflow row).", memprof, offsetof(struct ocgc_memprof_summary, table_rows), PROCESS},
  {"ocaml_memprof_overflow_samples_total", "counter", "Samples whose call stack the full table "
   "had no row for (counted in its overflow row).", memprof,
   offsetof(struct ocgc_memprof_summary, overflow_samples), PROCESS},
  {"ocaml_process_cpu_seconds_total", "counter", "CPU time spent, by mode (user, system).", cpu, 0,
   BOTH},
  {"ocaml_process_resident_memory_bytes", "gauge", "Resident memory size.", rss, 0, BOTH},
  {"ocaml_process_virtual_memory_bytes", "gauge", "Virtual memory size.", vsize, 0, BOTH},
  {"ocaml_process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch.",
   start_time, 0, PROCESS},
  {"ocaml_process_open_fds", "gauge", "Open file descriptors.", open_fds, 0, BOTH},
  {"ocaml_process_max_fds", "gauge", "Maximum number of open file descriptors.", max_fds, 0,
   PROCESS},
  {"ocaml_process_threads", "gauge", "Threads of the process.", threads, 0, BOTH},
  {"ocaml_process_context_switches_total", "counter", "Context switches.", ctxt, 0, BOTH},
  {"ocaml_process_page_faults_total", "counter", "Page faults.", faults, 0, BOTH},
  {"ocaml_process_exits_total", "counter", "Watched processes that ended, by program and how: "
   "exited (an exit status), killed (a signal), oom (the kernel's OOM killer: a SIGKILL while "
   "its memory cgroup's OOM kills grew), unknown (the kernel did not say); an exec or a process "
   "let go alive is not an end.", NULL, 0, EXITS},
};


void ocgc_watch_expose(const struct ocgc_watch *w, struct ocgc_expo *e)
{
  const struct programs *progs = watch_programs(w);
  size_t i;
  for (i = 0; i < sizeof families / sizeof families[0]; i++) {
    const struct family *fam = &families[i];
    if (fam->scope == (progs != NULL ? PROCESS : PROGRAM)) continue;
    ocgc_expo_family(e, fam->name, fam->type, fam->help);
    if (fam->scope == EXITS) {
      exits(e, fam->name, watch_exits(w));
      continue;
    }
    if (progs != NULL) {
      const struct program *g;
      for (g = progs->list; g != NULL; g = g->next) {
        struct ocgc_expo_label l[OCGC_EXPO_MAX_LABELS] = {{"program", g->label}};
        struct view v = {NULL, g};
        if (g->shown_ever) fam->fn(e, fam, &v, l, 1);
      }
    } else {
      const struct ocgc_watched *p;
      for (p = ocgc_watch_next(w, NULL); p != NULL; p = ocgc_watch_next(w, p)) {
        char pid[16], label[OCGC_EXPO_LABEL_MAX + 4];
        struct ocgc_expo_label l[OCGC_EXPO_MAX_LABELS] = {{"pid", pid}, {"program", label}};
        struct view v = {p, NULL};
        if (p->snap == NULL) continue; /* never read whole yet: nothing to expose */
        snprintf(pid, sizeof pid, "%d", p->pid);
        watched_label(p, label);
        fam->fn(e, fam, &v, l, 2);
      }
    }
  }
}
