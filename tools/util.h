/* util.h - small things several `ocgc` subcommands need (private to
 * tools/). */
#ifndef OCGC_TOOLS_UTIL_H
#define OCGC_TOOLS_UTIL_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "ocgc/consumer.h"

/* "10", "10s", "1.5s", "500ms", "2m", "1h", "250us" -> nanoseconds (a bare
 * number is seconds).  Returns 0, or -1 if [s] is not a duration. */
int ocgc_parse_duration(const char *s, uint64_t *ns);

/* [s] for text output: every byte outside printable ASCII, and the
 * backslash, written as \xHH, so that a string the target controls (a
 * program name, a user-event name, a file name) can neither send escape
 * sequences to a terminal nor start a new "key value" line.  Writes into
 * buf[0..n) and returns buf; OCGC_ESC_SIZE(len) bytes hold any string of
 * len bytes whole, a smaller buf cuts it (never mid-escape). */
#define OCGC_ESC_SIZE(len) (4 * (len) + 1)
const char *ocgc_esc(const char *s, char *buf, size_t n);

/* Write [s] as a JSON string, quotes included. */
void ocgc_json_string(FILE *f, const char *s);

/* Open what the user named: process [pid] (ring searched in its memory map,
 * or [dir]/PID.events when dir is given), or the ring file [file] when pid
 * is 0.  On failure prints one line (prefixed "ocgc CMD: ") saying what is
 * wrong and what to do, and returns the error; else 0. */
int ocgc_cmd_open(const char *cmd, int pid, const char *dir, const char *file,
                  struct ocgc_source **out);

/* CLOCK_MONOTONIC in nanoseconds: the producer's clock on the same host. */
uint64_t ocgc_now_ns(void);

/* Sleep [ns] nanoseconds; a signal cuts it short (callers look at their
 * stop flags in their loops). */
void ocgc_sleep_ns(uint64_t ns);

/* Read until caught up: poll again while the last poll stopped short
 * (the cursor's budget: stats.behind), until [max_events] events were
 * passed (seen, skipped or lost), 100 polls in a row made no progress (a
 * producer holding its seqlock), or *stop (may be NULL) became nonzero:
 * a signal ends a drain within one poll's budget, 10 ms, whatever the
 * target writes.  Returns 0 or the poll's error. */
int ocgc_drain_agg(struct ocgc_agg *agg, uint64_t max_events, const volatile sig_atomic_t *stop);
int ocgc_drain_cursor(struct ocgc_cursor *cur, uint64_t max_events,
                      const volatile sig_atomic_t *stop);

/* A drain bound for [src]: four times the events its rings can hold (two
 * words each at least), so a whole file is read, and a producer writing as
 * fast as we read cannot hold a drain beyond that. */
uint64_t ocgc_drain_events(const struct ocgc_source *src);

#endif /* OCGC_TOOLS_UTIL_H */
