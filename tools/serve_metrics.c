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
 * ocaml_gc_*, and the process_* names of Prometheus client libraries. */

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "expo.h"
#include "serve.h"

struct family;
typedef void (*family_fn)(struct expo *e, const struct family *f, const struct serve_proc *p,
                          struct expo_label *l);
struct family {
  const char *name, *type, *help;
  family_fn fn;
  size_t off; /* counter(): the field of struct ocgc_counters */
};

#define NL 2 /* pid, program: the labels of every process series */

/* The kinds as the metrics name them (ocgc's major_finish is a major
 * cycle forced to its end: major_cycle). */
static const char *kind_label(unsigned k)
{
  return k == OCGC_KIND_MAJOR_FINISH ? "major_cycle" : ocgc_kind_name(k);
}

static void pauses(struct expo *e, const struct family *f, const struct serve_proc *p,
                   struct expo_label *l)
{
  struct ocgc_bucket_counts b;
  if (ocgc_snapshot_pause_buckets(p->snap, &b) == 0) expo_buckets(e, f->name, l, NL, &b);
}

static void durations(struct expo *e, const struct family *f, const struct serve_proc *p,
                      struct expo_label *l)
{
  unsigned k;
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    struct ocgc_bucket_counts b;
    l[NL] = (struct expo_label){"kind", kind_label(k)};
    if (ocgc_snapshot_kind_buckets(p->snap, k, &b) == 0) expo_buckets(e, f->name, l, NL + 1, &b);
  }
}

/* By kind and cause: the producer's exact table (ocgc files), else the
 * aggregator's (what its events showed). */
static void collections(struct expo *e, const struct family *f, const struct serve_proc *p,
                        struct expo_label *l)
{
  unsigned k, c;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
      struct ocgc_cause_row row = {0};
      uint64_t n;
      if (p->info.has_ext) n = p->have_totals ? p->totals.by_cause[k][c] : 0;
      else n = ocgc_snapshot_cause(p->snap, k, c, &row) == 0 ? row.count : 0;
      if (n == 0) continue;
      l[NL] = (struct expo_label){"kind", kind_label(k)};
      l[NL + 1] = (struct expo_label){"cause", ocgc_cause_name(c)};
      expo_u64(e, f->name, l, NL + 2, n);
    }
}

static struct ocgc_counters counters(const struct serve_proc *p)
{
  return p->counters;
}

/* A uint64_t of the counters, at f->off.  Stock OCaml 5 rings say nothing
 * of the heap nor of the end of a major cycle: those are left out for
 * them (ocgc_runtime_info says which runtime a process has). */
static void counter(struct expo *e, const struct family *f, const struct serve_proc *p,
                    struct expo_label *l)
{
  struct ocgc_counters c = counters(p);
  uint64_t v;
  if (!p->info.has_ext && (f->off == offsetof(struct ocgc_counters, heap_bytes) ||
                           f->off == offsetof(struct ocgc_counters, top_heap_bytes) ||
                           f->off == offsetof(struct ocgc_counters, major_cycles)))
    return;
  memcpy(&v, (const char *)&c + f->off, sizeof v);
  expo_u64(e, f->name, l, NL, v);
}

static void gc_time(struct expo *e, const struct family *f, const struct serve_proc *p,
                    struct expo_label *l)
{
  expo_ns(e, f->name, l, NL, counters(p).gc_time_ns);
}

static void allocated(struct expo *e, const struct family *f, const struct serve_proc *p,
                      struct expo_label *l)
{
  struct ocgc_counters c = counters(p);
  l[NL] = (struct expo_label){"heap", "minor"};
  expo_u64(e, f->name, l, NL + 1, c.allocated_bytes);
  l[NL] = (struct expo_label){"heap", "major"};
  expo_u64(e, f->name, l, NL + 1, c.direct_major_bytes);
}

static void heap_chunks(struct expo *e, const struct family *f, const struct serve_proc *p,
                        struct expo_label *l)
{
  if (p->have_totals) expo_u64(e, f->name, l, NL, p->totals.heap_chunks);
}

/* The GC settings, in base units: bytes, and ratios for OCaml's percents
 * (o=120 is 1.2). */
static void config(struct expo *e, const struct family *f, const struct serve_proc *p,
                   struct expo_label *l)
{
  uint64_t v;
  if (!p->have_config) return;
  memcpy(&v, (const char *)&p->config + f->off, sizeof v);
  if (f->off == offsetof(struct ocgc_gc_config, minor_heap_words)) expo_u64(e, f->name, l, NL, v * 8);
  else if (f->off == offsetof(struct ocgc_gc_config, allocation_policy)) expo_u64(e, f->name, l, NL, v);
  else expo_double(e, f->name, l, NL, (double)v / 100.0);
}

static void runtime_info(struct expo *e, const struct family *f, const struct serve_proc *p,
                         struct expo_label *l)
{
  const struct ocgc_source_info *in = &p->info;
  l[NL] = (struct expo_label){"version", in->has_ext ? in->ocaml_version : "5"};
  l[NL + 1] = (struct expo_label){"variant", !in->has_ext ? "stock"
                                  : in->flags & OCGC_EXT_NATIVE ? "native" : "bytecode"};
  l[NL + 2] = (struct expo_label){"ocgc_version", in->has_ext ? in->ocgc_version : NULL};
  expo_u64(e, f->name, l, NL + 3, 1);
}

static void events(struct expo *e, const struct family *f, const struct serve_proc *p,
                   struct expo_label *l)
{
  expo_u64(e, f->name, l, NL, p->have_written ? p->written : counters(p).events_seen);
}

/* ---- the process family, from /proc/PID ---- */

/* Split by mode only, as node_exporter's node_cpu_seconds_total: a series
 * of the sum beside them would count twice under sum(). */
static void cpu(struct expo *e, const struct family *f, const struct serve_proc *p,
                struct expo_label *l)
{
  l[NL] = (struct expo_label){"mode", "user"};
  expo_ns(e, f->name, l, NL + 1, p->ps.utime_ns);
  l[NL] = (struct expo_label){"mode", "system"};
  expo_ns(e, f->name, l, NL + 1, p->ps.stime_ns);
}

static void rss(struct expo *e, const struct family *f, const struct serve_proc *p,
                struct expo_label *l)
{
  expo_u64(e, f->name, l, NL, p->ps.rss_bytes);
}

static void vsize(struct expo *e, const struct family *f, const struct serve_proc *p,
                  struct expo_label *l)
{
  expo_u64(e, f->name, l, NL, p->ps.vsize_bytes);
}

static void start_time(struct expo *e, const struct family *f, const struct serve_proc *p,
                       struct expo_label *l)
{
  if (p->ps.start_time_ns > 0) expo_ns(e, f->name, l, NL, p->ps.start_time_ns);
}

static void open_fds(struct expo *e, const struct family *f, const struct serve_proc *p,
                     struct expo_label *l)
{
  if (p->ps.have_fds) expo_u64(e, f->name, l, NL, p->ps.open_fds);
}

static void max_fds(struct expo *e, const struct family *f, const struct serve_proc *p,
                    struct expo_label *l)
{
  if (!p->ps.have_max_fds) return;
  if (p->ps.max_fds == UINT64_MAX) expo_double(e, f->name, l, NL, INFINITY);
  else expo_u64(e, f->name, l, NL, p->ps.max_fds);
}

static void threads(struct expo *e, const struct family *f, const struct serve_proc *p,
                    struct expo_label *l)
{
  expo_u64(e, f->name, l, NL, p->ps.threads);
}

static void ctxt(struct expo *e, const struct family *f, const struct serve_proc *p,
                 struct expo_label *l)
{
  if (!p->ps.have_ctxt) return;
  l[NL] = (struct expo_label){"type", "voluntary"};
  expo_u64(e, f->name, l, NL + 1, p->ps.voluntary_ctxt);
  l[NL] = (struct expo_label){"type", "involuntary"};
  expo_u64(e, f->name, l, NL + 1, p->ps.involuntary_ctxt);
}

static void faults(struct expo *e, const struct family *f, const struct serve_proc *p,
                   struct expo_label *l)
{
  l[NL] = (struct expo_label){"type", "minor"};
  expo_u64(e, f->name, l, NL + 1, p->ps.minflt);
  l[NL] = (struct expo_label){"type", "major"};
  expo_u64(e, f->name, l, NL + 1, p->ps.majflt);
}

static void poll_every(struct expo *e, const struct family *f, const struct serve_proc *p,
                       struct expo_label *l)
{
  expo_ns(e, f->name, l, NL, p->poll_every_ns);
}

static void stale(struct expo *e, const struct family *f, const struct serve_proc *p,
                  struct expo_label *l)
{
  expo_u64(e, f->name, l, NL, (uint64_t)(p->stale != 0));
}

static const struct family families[] = {
  {"ocaml_gc_pause_seconds", "histogram",
   "Stops of the mutator by the GC (one observation per pause), from the events read.", pauses, 0},
  {"ocaml_gc_duration_seconds", "histogram",
   "Durations of the collections of each kind, from the events read.", durations, 0},
  {"ocaml_gc_collections_total", "counter", "Collections by kind and cause.", collections, 0},
  {"ocaml_gc_major_cycles_total", "counter", "Major GC cycles completed.", counter,
   offsetof(struct ocgc_counters, major_cycles)},
  {"ocaml_gc_time_seconds_total", "counter", "Time spent in the GC.", gc_time, 0},
  {"ocaml_gc_allocated_bytes_total", "counter",
   "Bytes allocated in the minor heap, and directly in the major heap (promotion is "
   "ocaml_gc_promoted_bytes_total).", allocated, 0},
  {"ocaml_gc_promoted_bytes_total", "counter", "Bytes promoted from the minor heap to the major "
   "heap.", counter, offsetof(struct ocgc_counters, promoted_bytes)},
  {"ocaml_gc_heap_size_bytes", "gauge", "Size of the major heap.", counter,
   offsetof(struct ocgc_counters, heap_bytes)},
  {"ocaml_gc_heap_top_bytes", "gauge", "Largest size the major heap has had.", counter,
   offsetof(struct ocgc_counters, top_heap_bytes)},
  {"ocaml_gc_heap_chunks", "gauge", "Chunks in the major heap.", heap_chunks, 0},
  {"ocaml_gc_config_minor_heap_size_bytes", "gauge", "Size of the minor heap (Gc minor_heap_size), "
   "as of the last collection or Gc.set.", config, offsetof(struct ocgc_gc_config, minor_heap_words)},
  {"ocaml_gc_config_space_overhead_ratio", "gauge", "Gc space_overhead as a ratio (o=120 is 1.2), "
   "as of the last collection or Gc.set.", config, offsetof(struct ocgc_gc_config, space_overhead)},
  {"ocaml_gc_config_max_overhead_ratio", "gauge", "Gc max_overhead as a ratio (10000: never "
   "compact), as of the last collection or Gc.set.", config, offsetof(struct ocgc_gc_config, max_overhead)},
  {"ocaml_gc_config_allocation_policy", "gauge", "Gc allocation_policy (0 next-fit, 1 first-fit, "
   "2 best-fit), as of the last collection or Gc.set.", config,
   offsetof(struct ocgc_gc_config, allocation_policy)},
  {"ocaml_runtime_info", "info", "The OCaml runtime of the process (always 1).", runtime_info, 0},
  {"ocgc_ring_events_lost_total", "counter",
   "Events overwritten in the ring before this exporter read them.", counter,
   offsetof(struct ocgc_counters, events_lost)},
  {"ocgc_ring_events_total", "counter", "Events the runtime wrote into its ring (stock OCaml 5 "
   "rings: the events this exporter read).", events, 0},
  {"ocgc_serve_poll_interval_seconds", "gauge", "Time between two drains of the process's ring "
   "on its own schedule (shorter while it writes much).", poll_every, 0},
  {"ocgc_serve_stale", "gauge", "1 when the process's figures are not from this scrape's read "
   "(its ring was slow to read, or left alone for a while after that), else 0.", stale, 0},
  {"process_cpu_seconds_total", "counter", "CPU time spent, by mode (user, system).", cpu, 0},
  {"process_resident_memory_bytes", "gauge", "Resident memory size.", rss, 0},
  {"process_virtual_memory_bytes", "gauge", "Virtual memory size.", vsize, 0},
  {"process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch.",
   start_time, 0},
  {"process_open_fds", "gauge", "Open file descriptors.", open_fds, 0},
  {"process_max_fds", "gauge", "Maximum number of open file descriptors.", max_fds, 0},
  {"process_threads", "gauge", "Threads of the process.", threads, 0},
  {"process_context_switches_total", "counter", "Context switches.", ctxt, 0},
  {"process_page_faults_total", "counter", "Page faults.", faults, 0},
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
  expo_family(e, "ocgc_serve_scrape_duration_seconds", "gauge",
              "Time the last read of every watched ring and /proc took (bounded: "
              "see ocgc_serve_stale).");
  expo_ns(e, "ocgc_serve_scrape_duration_seconds", NULL, 0, s->refresh_ns);
  own_u64(e, "ocgc_serve_watched_processes", "gauge", "Processes watched.", s->nprocs);
  if (s->all)
    own_u64(e, "ocgc_serve_unreadable_processes", "gauge",
            "Processes whose memory maps the last look for rings could not read "
            "(another user's: see the privileges in ocgc-serve.service).",
            s->denied);
  if (s->all)
    own_u64(e, "ocgc_serve_refused_processes", "gauge",
            "Processes with a ring that the last look for rings did not watch: over "
            "--max-processes or --max-per-user, or their ring would not open.",
            s->refused);
  own_u64(e, "ocgc_serve_evicted_total", "counter",
          "Watched rings that kept failing, let go for a new process when a bound was met.",
          s->evicted);
  own_u64(e, "ocgc_serve_stale_processes", "gauge",
          "Watched processes whose figures are not from this scrape's read (ocgc_serve_stale).",
          s->stale);
  own_u64(e, "ocgc_serve_late_scrapes_total", "counter",
          "Scrapes answered from the figures of an earlier read, because the reads of this "
          "one did not end in time.",
          __atomic_load_n(&s->late, __ATOMIC_RELAXED));
  own_u64(e, "ocgc_serve_slow_clients_total", "counter",
          "Connections cut because a request's head did not come whole within 10 s "
          "(a client trickling its headers).",
          __atomic_load_n(&s->heads_cut, __ATOMIC_RELAXED));
  own_u64(e, "ocgc_serve_polls_total", "counter",
          "Drains of a watched ring, on its own schedule or for a scrape.", s->polls);
  own_u64(e, "ocgc_serve_errors_total", "counter",
          "Rings that could not be opened or read, listings and --textfile writes that "
          "failed.",
          s->errors + __atomic_load_n(&s->tf_errors, __ATOMIC_RELAXED));
}

void serve_set_metrics(const struct serve_set *s, expo_put_fn put, void *ctx, enum expo_format f)
{
  struct expo e;
  size_t i;
  expo_init(&e, put, ctx, f);
  for (i = 0; i < sizeof families / sizeof families[0]; i++) {
    const struct serve_proc *p;
    expo_family(&e, families[i].name, families[i].type, families[i].help);
    for (p = s->procs; p != NULL; p = p->next) {
      struct expo_label l[EXPO_MAX_LABELS] = {{"pid", p->pid_label}, {"program", p->label}};
      if (p->snap == NULL) continue; /* never read whole yet: nothing to serve */
      families[i].fn(&e, &families[i], p, l);
    }
  }
  own(&e, s);
  expo_finish(&e);
}
