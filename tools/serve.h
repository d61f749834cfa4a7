/* serve.h - what `ocgc serve`'s HTTP side (serve.c) and its figures
 * (serve_metrics.c) share (private to tools/): the set of watched
 * processes, which only serve.c's poll thread reads and writes once it
 * runs (every read of target memory happens there, under no lock), and
 * the response buffer. */
#ifndef OCGC_TOOLS_SERVE_H
#define OCGC_TOOLS_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "expo.h"
#include "ocgc/consumer.h"
#include "procstat.h"

/* A response body, grown as written up to SERVE_BUF_MAX (then failed). */
#define SERVE_BUF_MAX (64u << 20)
struct serve_buf {
  char *s;
  size_t n, cap;
  int failed;
};
void serve_buf_put(void *ctx, const char *s, size_t n);

/* At most this many processes are watched (more are counted as errors). */
#define SERVE_MAX_WATCHED 4096

/* A watched process: its ring, its aggregator, and what the last refresh
 * read of it. */
struct serve_proc {
  struct serve_proc *next;
  int pid;
  uint64_t start_ticks;       /* with pid, its identity (/proc/PID/stat) */
  char pid_label[16];
  char program[80];           /* untrusted bytes: escaped by each writer */
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  uint64_t drain_max;         /* tool_drain_events() of src */
  uint64_t ring_events;       /* about how many events one ring holds */
  uint64_t poll_every_ns;     /* its own schedule: the time between drains */
  uint64_t next_poll_ns;      /* tool_now_ns() of its next drain */
  uint64_t passed;            /* events its cursor has passed (seen, lost, skipped) */
  uint64_t alive_ns;          /* tool_now_ns() when /proc last said it lives */
  struct ocgc_source_info info;
  struct ocgc_snapshot *snap; /* at the last refresh (NULL before) */
  struct ocgc_counters counters; /* of snap, each counter never less than before */
  int have_counters;
  struct ocgc_totals totals;  /* the last consistent totals read (the cause
                                 table never less than before) */
  int have_totals;
  struct ocgc_gc_config config; /* the GC settings (ocgc files of ext_version >= 2) */
  int have_config;
  uint64_t written;           /* events written (ocgc files), summed over rings,
                                 never less than at the read before */
  int have_written;           /* written has been read once */
  int said_error;             /* a read failed and stderr was told */
  struct procstat ps;
  /* A ring whose read does not settle in time (a producer stopped in the
   * middle of a publication, a liar) is served from its last values,
   * marked stale, and left alone for backoff_ns, doubled each time. */
  int stale;                  /* the figures served are not from the last refresh */
  int stuck;                  /* its last drain ended behind, passing nothing */
  unsigned slow_reads;        /* slow or stuck reads in a row */
  uint64_t backoff_ns;        /* 0: reads in time; else read by poll turns
                                 only, not for scrapes, until one is in time */
  uint64_t retry_ns;          /* tool_now_ns() before which it is not read again */
};

struct serve_set {
  int all;                    /* --all: every process ocgc_list() finds */
  const char *dir;            /* --dir: rings are DIR/PID.events */
  struct serve_proc *procs;   /* watched, a list */
  size_t nprocs;
  uint64_t listed_ns;         /* tool_now_ns() at the last listing (0: never) */
  uint64_t errors;            /* opens, drains and listings that failed */
  uint64_t denied;            /* --all: processes whose maps the last listing
                                 could not read (not ours, without privilege) */
  uint64_t refresh_ns;        /* how long the last refresh took */
  uint64_t polls;             /* drains of a ring, by schedule or for a scrape */
  uint64_t stale;             /* processes served from older values (last refresh) */
  uint64_t late;              /* scrapes answered before their refresh ended
                                 (counted by serve.c, atomically) */
  uint64_t tf_errors;         /* --textfile writes that failed (serve.c's main
                                 thread, atomically) */
  /* Asked at every ring: nonzero when the caller wants the turn to end
   * (a scrape is waiting); may be NULL. */
  int (*yield)(void *ctx);
  void *yield_ctx;
};

/* A ring whose refresh or drain takes longer than this, or whose drain
 * ends stuck, is slow; after SERVE_SLOW_READS such reads in a row it is
 * served from its last values, and left alone for a while (100 ms, doubled each time up to 60 s: a producer that lies now
 * and then is read again soon, one frozen for good costs a read a minute). */
#define SERVE_RING_SLOW_NS 50000000u        /* 50 ms */
#define SERVE_RING_BUDGET_NS 20000000u      /* a drain's time, at most (then it
                                               goes on at the next turn) */
#define SERVE_SLOW_READS 3                  /* in a row, before it is left alone */
#define SERVE_BACKOFF_MIN_NS 100000000u     /* 100 ms */
#define SERVE_BACKOFF_MAX_NS 60000000000u   /* 60 s */

/* Each ring is drained on its own schedule, by serve_set_poll() between
 * scrapes, so that it does not overflow while nobody scrapes: often enough
 * that a quarter of the ring is written between two drains, never more
 * often than every SERVE_POLL_MIN_NS nor less than every SERVE_POLL_MAX_NS. */
#define SERVE_POLL_MIN_NS 10000000u    /* 10 ms */
#define SERVE_ALIVE_EVERY_NS 1000000000u /* /proc read for a busy ring */
#define SERVE_POLL_MAX_NS 250000000u   /* 250 ms: a ring that wakes from idle
                                          loses at most what it writes in that
                                          time, and an idle ring costs a few
                                          loads and one /proc read per turn */

/* Watch process [pid] (a PID of the command line): 0, or after a line
 * saying why it cannot be, the exit code. */
int serve_set_add_pid(struct serve_set *s, int pid);

/* Bring the set up to date until [deadline] (tool_now_ns()): list again
 * (--all, at most once a second), drain every watched ring (bounded),
 * snapshot it, read its /proc figures, and drop each process that is gone;
 * a ring left alone (backed off) or not reached by the deadline keeps its
 * last figures, marked stale.  Never fails: what fails is counted in
 * s->errors. */
void serve_set_refresh(struct serve_set *s, uint64_t deadline);

/* Drain the rings whose turn has come at [now] (tool_now_ns()), list again
 * (--all, at most once a second) and drop the processes that are gone;
 * returns the tool_now_ns() of the next turn (at most SERVE_POLL_MAX_NS
 * away), or now if s->yield asked it to stop early.  Never fails: failures
 * are counted in s->errors. */
uint64_t serve_set_poll(struct serve_set *s, uint64_t now);

/* The exposition of the set as refreshed last, in format [f]. */
void serve_set_metrics(const struct serve_set *s, struct serve_buf *out, enum expo_format f);

/* A text page listing the watched processes, every string escaped. */
void serve_set_index(const struct serve_set *s, struct serve_buf *out);

void serve_set_free(struct serve_set *s);

/* --textfile PATH (serve_textfile.c): the exposition written for
 * node_exporter's textfile collector every [every_ns]. */
struct serve_textfile {
  const char *path;
  uint64_t every_ns;
  int failing;                /* -errno of the last write, 0 if it succeeded */
};

/* Replace t->path by [b] atomically: 0, or -errno, said on stderr the first
 * time it happens (and "written again" once it works again). */
int serve_textfile_write(struct serve_textfile *t, const struct serve_buf *b);

/* Remove t->path, so that node_exporter does not serve figures nobody
 * updates any more. */
void serve_textfile_remove(struct serve_textfile *t);

#endif /* OCGC_TOOLS_SERVE_H */
