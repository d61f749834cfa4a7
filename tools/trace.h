/* trace.h - `ocgc trace` in two parts (private to tools/): trace.c owns
 * the command (its options, the output file, following the target) and
 * trace_events.c the translation of a source's events into Chrome/Perfetto
 * trace events (spans from libocgc's collection stream, held back and
 * written sorted, counters, instants, losses), through the JSON writer
 * (json.h) into a trace_out. */
#ifndef OCGC_TOOLS_TRACE_H
#define OCGC_TOOLS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "ocgc/consumer.h"

#define TRACE_MAX_HELD_DEFAULT OCGC_SPAN_ORDER_MAX_HELD /* spans held back in all rings (32 B each) */
#define TRACE_MAX_HELD_LIMIT (1u << 24) /* the most --max-held takes: 512 MiB */
#define TRACE_MAX_SIZE_DEFAULT (UINT64_C(256) << 20) /* --max-size */

/* The output: a buffer over write(2) that keeps the first error with its
 * errno (ENOSPC...), so that the command can say what went wrong. */
struct trace_out {
  int fd;
  int err;       /* first errno of a failed write, 0 if none */
  uint64_t bytes; /* all the bytes put */
  size_t n;
  char buf[1 << 16];
};

/* A json_put_fn over a struct trace_out. */
void trace_out_put(void *ctx, const char *s, size_t n);
/* Write what the buffer holds (errors in o->err). */
void trace_out_flush(struct trace_out *o);

struct trace_ring;

struct trace {
  struct json j;              /* the writer, over the output */
  const struct ocgc_source *src;
  struct ocgc_stream *stream; /* pairs the spans, claims the causes */
  enum ocgc_ids ids;
  uint64_t pid;               /* the trace's pid: the producer's */
  struct trace_ring *rings;
  unsigned nrings;
  uint64_t last_ts;           /* newest timestamp of any ring */
  uint64_t skipped_pending;   /* --file: events overwritten before we read */
  int skipped_exact;
  uint64_t spans, lost;       /* what the summary line says */
  uint64_t skipped;           /* the cursor's count at the end (trace_end) */
  uint64_t early;             /* early writes of held spans */
  size_t max_held;            /* --max-held */
  struct ocgc_span_order *order; /* holds spans back, gives them sorted */
  int oom;                    /* an allocation failed: the trace is not whole */
  int warned;                 /* the stderr line about early writes was written */
  int closing;                /* cutting every span: no early write meanwhile */
};

/* Set t up over [src] (pid: the target's, for a stock file without one)
 * and write the trace's head into [out].  Returns 0, -ENOMEM or the
 * source's error (then trace_free). */
int trace_start(struct trace *t, struct trace_out *out, const struct ocgc_source *src,
                uint64_t pid, size_t max_held);

/* A cursor's on_event and on_lost, ctx the trace. */
int trace_on_event(const struct ocgc_event *ev, void *ctx);
void trace_on_lost(unsigned ring, uint64_t lost, int exact, void *ctx);

/* Events [skipped] overwritten before the read began (--file): marked at
 * the first event. */
void trace_skipped(struct trace *t, uint64_t skipped, int exact);

/* Nothing more will come: close every open span (cut), mark what was lost,
 * and write the trace's tail ([what]: its source, for otherData). */
void trace_end(struct trace *t, const struct ocgc_cursor_stats *st, const char *what);

void trace_free(struct trace *t);

#endif /* OCGC_TOOLS_TRACE_H */
