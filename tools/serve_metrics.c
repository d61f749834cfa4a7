/* serve_metrics.c - what `ocgc serve` puts in /metrics (serve.h): one
 * family after the other (the format wants a family's lines together),
 * each with a line per watched process labelled pid and program.
 *
 * Invariants: counters come from what only grows while a process lives:
 * the aggregator's counters (exact from the producer's totals in ocgc
 * files), the totals' cause table (kept from the last consistent read),
 * both held by serve_set.c never below what was served before, even from a
 * producer that lies, and /proc's counts; a figure a process cannot give (stock OCaml 5 rings have
 * no totals; another user's /proc/PID/fd) is left out, never written as 0.
 * Names follow the OpenTelemetry-style ocaml.gc.* translated to
 * ocaml_gc_*, and the process_* names of Prometheus client libraries
 * prefixed with ocaml_: unprefixed, they are the exporter's own (node_exporter
 * serves its own process_*, and dropped ours from --textfile as a clash). */

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "expo.h"
#include "serve.h"

/* A group of series: one process (p), or with --by program one program's
 * processes (g).  Each family below says what it shows of either. */
struct view {
  const struct ocgc_watched *p;
  const struct serve_prog *g;
};

struct family;
typedef void (*family_fn)(struct expo *e, const struct family *f, const struct view *v,
                          struct expo_label *l, unsigned nl);
enum scope { BOTH, PROCESS, PROGRAM }; /* the groupings a family has series in */
struct family {
  const char *name, *type, *help;
  family_fn fn;
  size_t off; /* config(): the field of struct ocgc_gc_config */
  enum scope scope;
};

/* Whether the group says what only ocgc's runtime tells (the heap, the
 * end of a major cycle): stock OCaml 5 rings do not, and their series are
 * left out rather than served as 0 (ocaml_runtime_info says which). */
static int has_ext(const struct view *v)
{
  return v->p != NULL ? v->p->info.has_ext : v->g->shown.has_ext || v->g->live.has_ext;
}

static void histogram(struct expo *e, const char *name, struct expo_label *l, unsigned nl,
                      const struct ocgc_bucket_counts *b)
{
  if (b->nbounds > 0) expo_buckets(e, name, l, nl, b);
}

static void pauses(struct expo *e, const struct family *f, const struct view *v,
                   struct expo_label *l, unsigned nl)
{
  struct ocgc_bucket_counts b = OCGC_OPTS_INIT(struct ocgc_bucket_counts);
  if (v->g != NULL) histogram(e, f->name, l, nl, &v->g->shown.pauses);
  else if (ocgc_snapshot_pause_buckets(v->p->snap, &b) == 0) histogram(e, f->name, l, nl, &b);
}

static void durations(struct expo *e, const struct family *f, const struct view *v,
                      struct expo_label *l, unsigned nl)
{
  unsigned k;
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    struct ocgc_bucket_counts b = OCGC_OPTS_INIT(struct ocgc_bucket_counts);
    l[nl] = (struct expo_label){"kind", ocgc_kind_name(k)};
    if (v->g != NULL) histogram(e, f->name, l, nl + 1, &v->g->shown.kinds[k]);
    else if (ocgc_snapshot_kind_buckets(v->p->snap, k, &b) == 0)
      histogram(e, f->name, l, nl + 1, &b);
  }
}

/* By kind and cause: the producer's exact table (ocgc files), else the
 * aggregator's (what its events showed). */
static void collections(struct expo *e, const struct family *f, const struct view *v,
                        struct expo_label *l, unsigned nl)
{
  unsigned k, c;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
      uint64_t n = v->g != NULL ? v->g->shown.w.by_cause[k][c] : ocgc_watched_collections(v->p, k, c);
      if (n == 0) continue;
      l[nl] = (struct expo_label){"kind", ocgc_kind_name(k)};
      l[nl + 1] = (struct expo_label){"cause", ocgc_cause_name(c)};
      expo_u64(e, f->name, l, nl + 2, n);
    }
}

/* A counter, from the process or from the program's sums held. */
#define COUNTER(fname, proc_value, prog_field, ext_only)                                         \
  static void fname(struct expo *e, const struct family *f, const struct view *v,                \
                    struct expo_label *l, unsigned nl)                                           \
  {                                                                                              \
    if ((ext_only) && !has_ext(v)) return;                                                       \
    expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->shown.w.prog_field : (proc_value));         \
  }
COUNTER(major_cycles, v->p->counters.major_cycles, major_cycles, 1)
COUNTER(promoted, v->p->counters.promoted_bytes, promoted_bytes, 0)
COUNTER(events_lost, v->p->counters.events_lost, events_lost, 0)
COUNTER(events, ocgc_watched_events(v->p), events, 0)
#undef COUNTER

static void gc_time(struct expo *e, const struct family *f, const struct view *v,
                    struct expo_label *l, unsigned nl)
{
  expo_ns(e, f->name, l, nl, v->g != NULL ? v->g->shown.w.gc_time_ns : v->p->counters.gc_time_ns);
}

static void allocated(struct expo *e, const struct family *f, const struct view *v,
                      struct expo_label *l, unsigned nl)
{
  l[nl] = (struct expo_label){"heap", "minor"};
  expo_u64(e, f->name, l, nl + 1,
           v->g != NULL ? v->g->shown.w.allocated_bytes : v->p->counters.allocated_bytes);
  l[nl] = (struct expo_label){"heap", "major"};
  expo_u64(e, f->name, l, nl + 1,
           v->g != NULL ? v->g->shown.w.direct_major_bytes : v->p->counters.direct_major_bytes);
}

/* The heap: a program's is the sum of its living processes' heaps, its
 * top the highest of theirs. */
static void heap_size(struct expo *e, const struct family *f, const struct view *v,
                      struct expo_label *l, unsigned nl)
{
  if (!has_ext(v)) return;
  expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->live.heap_bytes : v->p->counters.heap_bytes);
}

static void heap_top(struct expo *e, const struct family *f, const struct view *v,
                     struct expo_label *l, unsigned nl)
{
  if (!has_ext(v)) return;
  expo_u64(e, f->name, l, nl,
           v->g != NULL ? v->g->live.top_heap_bytes : v->p->counters.top_heap_bytes);
}

static void heap_chunks(struct expo *e, const struct family *f, const struct view *v,
                        struct expo_label *l, unsigned nl)
{
  if (v->g != NULL) {
    if (v->g->live.has_ext) expo_u64(e, f->name, l, nl, v->g->live.heap_chunks);
  } else if (v->p->have_totals) {
    expo_u64(e, f->name, l, nl, v->p->totals.heap_chunks);
  }
}

/* The GC settings, in base units: bytes, and ratios for OCaml's percents
 * (o=120 is 1.2).  A program's: its processes', when they all agree. */
static void config(struct expo *e, const struct family *f, const struct view *v,
                   struct expo_label *l, unsigned nl)
{
  const struct ocgc_gc_config *cfg;
  uint64_t val;
  if (v->g != NULL) cfg = v->g->live.config_state == 1 ? &v->g->live.config : NULL;
  else cfg = v->p->have_config ? &v->p->config : NULL;
  if (cfg == NULL) return;
  memcpy(&val, (const char *)cfg + f->off, sizeof val);
  if (f->off == offsetof(struct ocgc_gc_config, minor_heap_words)) expo_u64(e, f->name, l, nl, val * 8);
  else if (f->off == offsetof(struct ocgc_gc_config, allocation_policy)) expo_u64(e, f->name, l, nl, val);
  else expo_double(e, f->name, l, nl, (double)val / 100.0);
}

void serve_proc_runtime(const struct ocgc_watched *p, char *version, char *variant,
                        char *ocgc_version, size_t n)
{
  const struct ocgc_source_info *in = &p->info;
  snprintf(version, n, "%s", in->has_ext ? in->ocaml_version : "5");
  snprintf(variant, n, "%s", !in->has_ext ? "stock" : in->flags & OCGC_EXT_NATIVE ? "native"
                                                                                : "bytecode");
  snprintf(ocgc_version, n, "%s", in->has_ext ? in->ocgc_version : "");
}

static void info_series(struct expo *e, const char *name, struct expo_label *l, unsigned nl,
                        const char *version, const char *variant, const char *ocgc_version)
{
  l[nl] = (struct expo_label){"version", version};
  l[nl + 1] = (struct expo_label){"variant", variant};
  l[nl + 2] = (struct expo_label){"ocgc_version", ocgc_version[0] != '\0' ? ocgc_version : NULL};
  expo_u64(e, name, l, nl + 3, 1);
}

/* A process's runtime; a program's, one series per distinct runtime of
 * its living processes. */
static void runtime_info(struct expo *e, const struct family *f, const struct view *v,
                         struct expo_label *l, unsigned nl)
{
  if (v->g != NULL) {
    unsigned i;
    for (i = 0; i < v->g->live.ninfos; i++) {
      const struct serve_prog_info *in = &v->g->live.infos[i];
      info_series(e, f->name, l, nl, in->version, in->variant, in->ocgc_version);
    }
  } else {
    char version[16], variant[16], ocgc_version[16];
    serve_proc_runtime(v->p, version, variant, ocgc_version, sizeof version);
    info_series(e, f->name, l, nl, version, variant, ocgc_version);
  }
}

static void processes(struct expo *e, const struct family *f, const struct view *v,
                      struct expo_label *l, unsigned nl)
{
  expo_u64(e, f->name, l, nl, v->g->live.processes);
}

/* ---- the process family, from /proc/PID ---- */

/* Split by mode only, as node_exporter's node_cpu_seconds_total: a series
 * of the sum beside them would count twice under sum(). */
static void cpu(struct expo *e, const struct family *f, const struct view *v,
                struct expo_label *l, unsigned nl)
{
  l[nl] = (struct expo_label){"mode", "user"};
  expo_ns(e, f->name, l, nl + 1, v->g != NULL ? v->g->shown.w.utime_ns : v->p->proc.utime_ns);
  l[nl] = (struct expo_label){"mode", "system"};
  expo_ns(e, f->name, l, nl + 1, v->g != NULL ? v->g->shown.w.stime_ns : v->p->proc.stime_ns);
}

static void rss(struct expo *e, const struct family *f, const struct view *v,
                struct expo_label *l, unsigned nl)
{
  expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->live.rss_bytes : v->p->proc.rss_bytes);
}

static void vsize(struct expo *e, const struct family *f, const struct view *v,
                  struct expo_label *l, unsigned nl)
{
  expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->live.vsize_bytes : v->p->proc.vsize_bytes);
}

static void start_time(struct expo *e, const struct family *f, const struct view *v,
                       struct expo_label *l, unsigned nl)
{
  if (v->p->proc.start_time_ns > 0) expo_ns(e, f->name, l, nl, v->p->proc.start_time_ns);
}

static void open_fds(struct expo *e, const struct family *f, const struct view *v,
                     struct expo_label *l, unsigned nl)
{
  if (v->g != NULL) {
    if (v->g->live.have_fds) expo_u64(e, f->name, l, nl, v->g->live.open_fds);
  } else if (v->p->proc.have_fds) {
    expo_u64(e, f->name, l, nl, v->p->proc.open_fds);
  }
}

static void max_fds(struct expo *e, const struct family *f, const struct view *v,
                    struct expo_label *l, unsigned nl)
{
  const struct ocgc_watched *p = v->p;
  if (!p->proc.have_max_fds) return;
  if (p->proc.max_fds == UINT64_MAX) expo_double(e, f->name, l, nl, INFINITY);
  else expo_u64(e, f->name, l, nl, p->proc.max_fds);
}

static void threads(struct expo *e, const struct family *f, const struct view *v,
                    struct expo_label *l, unsigned nl)
{
  expo_u64(e, f->name, l, nl, v->g != NULL ? v->g->live.threads : v->p->proc.threads);
}

static void ctxt(struct expo *e, const struct family *f, const struct view *v,
                 struct expo_label *l, unsigned nl)
{
  if (v->p != NULL && !v->p->proc.have_ctxt) return;
  l[nl] = (struct expo_label){"type", "voluntary"};
  expo_u64(e, f->name, l, nl + 1,
           v->g != NULL ? v->g->shown.w.voluntary_ctxt : v->p->proc.voluntary_ctxt);
  l[nl] = (struct expo_label){"type", "involuntary"};
  expo_u64(e, f->name, l, nl + 1,
           v->g != NULL ? v->g->shown.w.involuntary_ctxt : v->p->proc.involuntary_ctxt);
}

static void faults(struct expo *e, const struct family *f, const struct view *v,
                   struct expo_label *l, unsigned nl)
{
  l[nl] = (struct expo_label){"type", "minor"};
  expo_u64(e, f->name, l, nl + 1, v->g != NULL ? v->g->shown.w.minflt : v->p->proc.minflt);
  l[nl] = (struct expo_label){"type", "major"};
  expo_u64(e, f->name, l, nl + 1, v->g != NULL ? v->g->shown.w.majflt : v->p->proc.majflt);
}

static void poll_every(struct expo *e, const struct family *f, const struct view *v,
                       struct expo_label *l, unsigned nl)
{
  expo_ns(e, f->name, l, nl, v->p->poll_every_ns);
}

static void stale(struct expo *e, const struct family *f, const struct view *v,
                  struct expo_label *l, unsigned nl)
{
  expo_u64(e, f->name, l, nl, (uint64_t)(v->p->stale != 0));
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
  {"ocaml_runtime_info", "info", "The OCaml runtime of the process (by program: each runtime "
   "its living processes have; always 1).", runtime_info, 0, BOTH},
  {"ocgc_serve_program_processes", "gauge", "Living processes of the program watched.", processes,
   0, PROGRAM},
  {"ocgc_ring_events_lost_total", "counter",
   "Events overwritten in the ring before this exporter read them.", events_lost, 0, BOTH},
  {"ocgc_ring_events_total", "counter", "Events the runtime wrote into its ring (stock OCaml 5 "
   "rings: the events this exporter read).", events, 0, BOTH},
  {"ocgc_serve_poll_interval_seconds", "gauge", "Time between two drains of the process's ring "
   "on its own schedule (shorter while it writes much).", poll_every, 0, PROCESS},
  {"ocgc_serve_stale", "gauge", "1 when the process's figures are not from this scrape's read "
   "(its ring was slow to read, or left alone for a while after that), else 0.", stale, 0, PROCESS},
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
};

/* One family of the exporter's own, with its one sample: the name is
 * written once. */
static void own_u64(struct expo *e, const char *name, const char *type, const char *help,
                    uint64_t v)
{
  expo_family(e, name, type, help);
  expo_u64(e, name, NULL, 0, v);
}

/* The exporter's own figures (no pid: they are not a process's). */
static void own(struct expo *e, const struct serve_set *s)
{
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  ocgc_watch_stats(s->watch, &st);
  expo_family(e, "ocgc_serve_scrape_duration_seconds", "gauge",
              "Time the last read of every watched ring and /proc took (bounded: "
              "see ocgc_serve_stale).");
  expo_ns(e, "ocgc_serve_scrape_duration_seconds", NULL, 0, st.refresh_ns);
  own_u64(e, "ocgc_serve_watched_processes", "gauge", "Processes watched.", st.processes);
  own_u64(e, "ocgc_serve_sees_every_user", "gauge",
          "1 when the exporter may look into every user's processes and rings "
          "(CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH: see ocgc-serve.service), else 0: "
          "other users' programs are not seen.", (uint64_t)s->sees_every_user);
  if (s->all)
    own_u64(e, "ocgc_serve_unreadable_processes", "gauge",
            "Processes with a ring (a PID.events in --dir) whose memory maps the last look "
            "for rings could not read: another user's, without privilege.",
            st.unreadable);
  if (s->all)
    own_u64(e, "ocgc_serve_refused_processes", "gauge",
            "Processes with a ring that the last look for rings did not watch: over "
            "--max-processes or --max-per-user, or their ring would not open.",
            st.refused);
  own_u64(e, "ocgc_serve_evicted_total", "counter",
          "Watched rings that kept failing, let go for a new process when a bound was met.",
          st.evicted);
  own_u64(e, "ocgc_serve_stale_processes", "gauge",
          "Watched processes whose figures are not from this scrape's read (ocgc_serve_stale).",
          st.stale);
  own_u64(e, "ocgc_serve_late_scrapes_total", "counter",
          "Scrapes answered from the figures of an earlier read, because the reads of this "
          "one did not end in time.",
          __atomic_load_n(&s->late, __ATOMIC_RELAXED));
  own_u64(e, "ocgc_serve_slow_clients_total", "counter",
          "Connections cut because a request's head did not come whole within 10 s "
          "(a client trickling its headers).",
          __atomic_load_n(&s->heads_cut, __ATOMIC_RELAXED));
  own_u64(e, "ocgc_serve_polls_total", "counter",
          "Drains of a watched ring, on its own schedule or for a scrape.", st.polls);
  own_u64(e, "ocgc_serve_errors_total", "counter",
          "Rings that could not be opened or read, listings and --textfile writes that "
          "failed.",
          st.errors + __atomic_load_n(&s->tf_errors, __ATOMIC_RELAXED));
}

void serve_set_metrics(const struct serve_set *s, expo_put_fn put, void *ctx, enum expo_format f)
{
  struct expo e;
  size_t i;
  expo_init(&e, put, ctx, f);
  for (i = 0; i < sizeof families / sizeof families[0]; i++) {
    const struct family *fam = &families[i];
    if (fam->scope == (s->by_program ? PROCESS : PROGRAM)) continue;
    expo_family(&e, fam->name, fam->type, fam->help);
    if (s->by_program) {
      const struct serve_prog *g;
      for (g = s->progs; g != NULL; g = g->next) {
        struct expo_label l[EXPO_MAX_LABELS] = {{"program", g->label}};
        struct view v = {NULL, g};
        if (g->shown_ever) fam->fn(&e, fam, &v, l, 1);
      }
    } else {
      const struct ocgc_watched *p;
      for (p = ocgc_watch_next(s->watch, NULL); p != NULL; p = ocgc_watch_next(s->watch, p)) {
        char pid[16], label[SERVE_LABEL_MAX + 4];
        struct expo_label l[EXPO_MAX_LABELS] = {{"pid", pid}, {"program", label}};
        snprintf(pid, sizeof pid, "%d", p->pid);
        serve_label(p, label);
        struct view v = {p, NULL};
        if (p->snap == NULL) continue; /* never read whole yet: nothing to serve */
        fam->fn(&e, fam, &v, l, 2);
      }
    }
  }
  own(&e, s);
  expo_finish(&e);
}
