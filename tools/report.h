/* report.h - the GC report that `ocgc report` and `ocgc run` print
 * (private to tools/): the figures in report_figures.c, the text in
 * report_print.c, the JSON in report_json.c (each form above the figures,
 * none calling up).
 *
 * A report is built from libocgc's public API only: an aggregator over one
 * source and the snapshots it gives (their counters include the span of
 * time the events cover).  Text for humans, or JSON in the versioned schema
 * docs/report.schema.json ("schema": "ocgc-report", "schema_version": 4;
 * described in docs/report-json.md).  Bump REPORT_SCHEMA_VERSION on any
 * change that removes or changes the meaning of a field. */
#ifndef OCGC_TOOLS_REPORT_H
#define OCGC_TOOLS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "ocgc/consumer.h"

#define REPORT_SCHEMA_VERSION 4
/* A report holding what version 4 cannot (major_slice_work, or source.ids
 * "5.4") says 5; every other report stays 4, byte for byte. */
#define REPORT_SCHEMA_VERSION_5 5

/* report_figures.c: the aggregator a report reads [src] with, from
 * [start], giving its pauses and losses to [tl] (NULL: none).  0 or an
 * error. */
int rep_agg_new(struct ocgc_source *src, enum ocgc_cursor_start start, struct ocgc_timeline *tl,
                struct ocgc_agg **out);

/* What the report says about where its figures come from. */
enum rep_mode {
  REP_PID,  /* a window of a live process: counts are differences */
  REP_FILE, /* a ring file, from its oldest event */
  REP_RUN,  /* a program ocgc ran, its whole life */
};

struct rep_cpu;
struct rep_flight;

struct rep_meta {
  enum rep_mode mode;
  int pid;                 /* REP_PID: the process; else 0 (the file says) */
  const char *path;        /* REP_FILE: the file; else NULL */
  char *const *command;    /* REP_RUN: argv of the program, NULL-terminated */
  uint64_t requested_ns;   /* REP_PID: --duration */
  int ended_early;         /* REP_PID: the process exited, or we were interrupted */
  const char *end_reason;  /* why it ended early ("process exited", ...) */
  int has_status;          /* REP_RUN: the program's wait status is known */
  int exit_code;           /* its exit code, or -1 if a signal killed it */
  int signal;              /* the signal that killed it, or 0 */
  int core_dumped;
  uint64_t ended_ns;       /* REP_RUN: CLOCK_MONOTONIC when ocgc saw it end */
  const struct ocgc_memprof *prof; /* the allocation profile of the report's
                                      window, or NULL: none (not sampled) */
  struct ocgc_symbols *syms;       /* its frames' names, or NULL: addresses */
  const struct rep_cpu *cpu;       /* the CPU profile of the window (--cpu), or
                                      NULL: not asked; ->have 0: asked, none */
  const struct rep_flight *flight; /* REP_FILE: the recording's flight block, or
                                      NULL / ->have 0: a plain ring file */
};

/* report_print.c: print the report of [snap] ([base]: the snapshot at
 * the start of the window, REP_PID only, else NULL) of [src] to [out], as
 * text or JSON.
 * Returns 0 or a negative errno (writing failed). */
int rep_print(FILE *out, int json, const struct rep_meta *m, const struct ocgc_source *src,
              const struct ocgc_snapshot *base, const struct ocgc_snapshot *snap);

/* ---- report_figures.c: what every form of the report uses ---------------------- */

/* The percentiles a report gives, with their names in JSON and in text. */
#define REP_NPCTS 7
extern const double rep_pcts[REP_NPCTS];
extern const char *const rep_pct_json[REP_NPCTS];

/* Phase ids to look at: every numbering libocgc knows fits (the snapshot
 * answers NULL beyond its own table). */
#define REP_MAX_PHASE_ID 64

/* The figures of a report, worked out once for every form. */
struct rep_figures {
  struct ocgc_source_info info;
  int have_info;
  int ext;                     /* have_info and an ocgc file */
  struct tool_ids ids;         /* the event numbering and why (ids.ids NULL: unknown) */
  struct ocgc_counters c;      /* newest, with counts made relative */
  uint64_t start_ns, end_ns;   /* the time the report covers, producer clock */
  uint64_t wall_ns;
  int wall_known;
};

/* The figures of a report, as every form works them out. */
void rep_figures_get(struct rep_figures *x, const struct rep_meta *m,
                     const struct ocgc_source *src, const struct ocgc_snapshot *base,
                     const struct ocgc_snapshot *snap);

const char *rep_state_name(const struct rep_meta *m, const struct rep_figures *x);
/* "SIGKILL" for 9, ... ("SIG?" when unknown). */
const char *rep_signal_name(int sig);
double rep_share(uint64_t part, uint64_t whole);
/* Names for causes and phases libocgc has none for: "cause_N", "phase_N". */
const char *rep_cause_name(unsigned c, char *buf, size_t n);
const char *rep_phase_name(const struct rep_figures *x, unsigned id, char *buf, size_t n);

/* report_json.c: the JSON form, as rep_print() gives it. */
void rep_print_json(FILE *out, const struct rep_meta *m, const struct rep_figures *x,
                    const struct ocgc_snapshot *snap);

/* report_profile.c: m->prof's top allocating and promoting functions, as
 * a text section (nothing without a profile) or the JSON member "profile"
 * (null without one). */
struct json;
void rep_profile_text(FILE *out, const struct rep_meta *m);
void rep_profile_json(struct json *j, const struct rep_meta *m);

/* report_slicework.c: the major slices' work of a stock OCaml 5.3+ ring
 * (ocgc/slicework.h), a text section or the JSON member "major_slice_work",
 * both only when the ring has those counters (then the JSON's
 * schema_version is REPORT_SCHEMA_VERSION_5); get: 1 and *w
 * filled when it has them, else 0. */
int rep_slicework_get(const struct ocgc_snapshot *snap, struct ocgc_slicework *w);
void rep_slicework_text(FILE *out, const struct ocgc_snapshot *snap);
void rep_slicework_json(struct json *j, const struct ocgc_snapshot *snap);

/* report_cpu.c: the CPU profile of a report's window (--cpu), taken
 * from a gathered window (cpu_window.h) after its end: cpu_window's own
 * figures, the samples of each gc_phase, the top functions by their
 * samples as the innermost frame, and the call tree by phase
 * (ocgc_profile_tree's shape, value[0] the samples, the root's children
 * "[phase]" frames).  For the JSON member "cpu" (null without one) and
 * the HTML report (html_cpu.c). */
#define REP_CPU_TOP 10
struct rep_cpu_fn {
  const char *name; /* escaped to printable ASCII by libocgc */
  uint64_t samples;
};
struct rep_cpu {
  int have;                   /* 1: the figures below are a profile's */
  uint64_t frequency_hz, window_ns, samples, gc_samples, gc_unmatched, lost, threads_seen;
  uint64_t phase[OCGC_GC_PHASE_COUNT]; /* samples by enum ocgc_gc_phase */
  double gc_share_samples;    /* gc_samples / samples */
  double gc_share_ring;       /* the ring's collections over the window's wall time */
  int ring_known;             /* 0: no ring was read (gc_share_ring null) */
  struct rep_cpu_fn top[REP_CPU_TOP];
  unsigned ntop;
  struct ocgc_profile_tree *tree;
  char *text;                 /* the folded lines the tree's names point into */
};
struct cpu_window;
/* Take [w]'s profile (ended: cpu_window_end) into *c: 0, or an exit
 * code after a line (c then has nothing). */
int rep_cpu_take(struct rep_cpu *c, struct cpu_window *w);
/* The figures and tree of folded lines "[phase];outer;...;inner COUNT"
 * ([folded] cut in place and pointed into: it must outlive c; the
 * figures of the window's JSON are not set).  0 or -ENOMEM. */
int rep_cpu_from_folded(struct rep_cpu *c, char *folded);
/* The phase of a frame "[minor]", or -1. */
int rep_cpu_phase_of(const char *frame);
void rep_cpu_free(struct rep_cpu *c);
void rep_cpu_json(struct json *j, const struct rep_meta *m);

/* report_flight.c: a recording's flight block (ocgc/flight.h) in the
 * report: the text section "Recording", the JSON members "exit" (how the
 * process ended, as ocgc run's) and "recording" (null for a ring file). */
struct rep_flight {
  int have;                        /* 1: the source is a recording */
  struct ocgc_flight_meta meta;
  struct ocgc_flight_second *sec;  /* its history, oldest first */
  unsigned n;
};
/* Read [src]'s flight block into *f (have 0: none, or one that does not
 * hold together, said on stderr): 0 or -ENOMEM. */
int rep_flight_take(struct rep_flight *f, const struct ocgc_source *src);
void rep_flight_free(struct rep_flight *f);
void rep_flight_text(FILE *out, const struct rep_meta *m);
/* The "exit" object of a recording whose exit is known (m->flight). */
void rep_flight_exit_json(struct json *j, const struct rep_meta *m);
void rep_flight_json(struct json *j, const struct rep_meta *m);

#endif /* OCGC_TOOLS_REPORT_H */
