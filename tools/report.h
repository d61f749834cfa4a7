/* report.h - the GC report that `ocgc report` and `ocgc run` print
 * (private to tools/; code in report_print.c).
 *
 * A report is built from libocgc's public API only: an aggregator over one
 * source and the snapshots it gives (their counters include the span of
 * time the events cover).  Text for humans, or JSON in the versioned schema
 * docs/report.schema.json ("schema": "ocgc-report", "schema_version": 1;
 * described in docs/report-json.md).  Bump REPORT_SCHEMA_VERSION on any
 * change that removes or changes the meaning of a field. */
#ifndef OCGC_TOOLS_REPORT_H
#define OCGC_TOOLS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "ocgc/consumer.h"

#define REPORT_SCHEMA_VERSION 1

/* What reads the source: its aggregator. */
struct rep_follow {
  struct ocgc_source *src;
  struct ocgc_agg *agg;
};

/* Make the aggregator over [src], from [start].
 * Returns 0 or a negative error (then nothing is left to free). */
int rep_follow_init(struct rep_follow *f, struct ocgc_source *src,
                    enum ocgc_cursor_start start);
/* One poll of both readers: events the aggregator read, or a negative error. */
int64_t rep_follow_poll(struct rep_follow *f);
/* Poll until nothing is left, at most a bounded number of times (a live
 * producer that keeps writing cannot hold us), and no more once *stop
 * (may be NULL) is set; 0 or a negative error. */
int rep_follow_drain(struct rep_follow *f, const volatile sig_atomic_t *stop);
void rep_follow_fini(struct rep_follow *f);

/* What the report says about where its figures come from. */
enum rep_mode {
  REP_PID,  /* a window of a live process: counts are differences */
  REP_FILE, /* a ring file, from its oldest event */
  REP_RUN,  /* a program ocgc ran, its whole life */
};

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
};

/* Print the report of [snap] ([base]: the snapshot at the start of the
 * window, REP_PID only, else NULL) to [out], as text or JSON.  Returns 0
 * or a negative error (from the source). */
int rep_print(FILE *out, int json, const struct rep_meta *m, const struct rep_follow *f,
              const struct ocgc_snapshot *base, const struct ocgc_snapshot *snap);

/* "SIGKILL" for 9, ... ("SIG?" when unknown). */
const char *rep_signal_name(int sig);

#endif /* OCGC_TOOLS_REPORT_H */
