/* programs.h - a watch's processes summed by program (private; code in
 * programs.c), for a watch made with by_program, so that the series count
 * of an exposition is fixed by the programs, not by the processes that come
 * and go.  What it reads of a process is watched.h's view. */
#ifndef OCGC_PROGRAMS_H
#define OCGC_PROGRAMS_H

#include "ocgc/expo.h"
#include "ocgc/watch.h"
#include "watched.h"

/* Programs with series of their own, at most; the rest share one. */
#define PROGRAMS_MAX 512
#define PROGRAMS_OTHER "(other programs)"
/* Processes that went, per program, whose figures are remembered so that
 * one watched again is not counted twice. */
#define PROGRAMS_RETIRED_KEPT 4

/* The counters of a process, or summed over a program's: what a program's
 * series add up and hold. */
struct sums {
  /* the monotone counts of OCGC_COUNTER_FIELDS, summed and held by its
   * loop (counter_fields.h); its gauges, times and flags stay 0 */
  struct ocgc_counters c;
  struct {
    uint64_t by_cause[OCGC_KIND_COUNT][OCGC_CAUSE_COUNT];
    uint64_t events;          /* ocgc_watched_events(), not c.events_seen */
    uint64_t utime_ns, stime_ns, voluntary_ctxt, involuntary_ctxt, minflt, majflt;
  } w;                        /* the rest of the counters: summed, held word by word */
  struct ocgc_bucket_counts pauses, kinds[OCGC_KIND_COUNT];
  int has_ext;
};

struct retired {
  int used, pid;
  uint64_t start_ticks;
  struct sums s;
};

struct program {
  struct program *next;
  char label[OCGC_EXPO_LABEL_MAX + 4];
  int other;                  /* PROGRAMS_OTHER */
  struct sums gone;           /* of its processes that went */
  struct sums now;            /* gone + the living ones, at the last update */
  struct sums shown;          /* what is exposed: never less than before */
  int shown_ever;
  uint64_t live_ns;           /* cm_mono_ns() when it last had a living process */
  unsigned last_processes;    /* living processes at the last update */
  struct {                    /* its living processes' gauges, summed */
    unsigned processes;
    int has_ext, have_fds;
    uint64_t heap_bytes, top_heap_bytes, heap_chunks, rss_bytes, vsize_bytes, threads, open_fds;
    int have_live;            /* one of them ended a major cycle */
    uint64_t live_bytes;      /* the heap after its last cycle, summed */
    int config_state;         /* 0: none yet; 1: every one's read, all equal; 2: not */
    struct ocgc_gc_config config;
    struct runtime_label infos[4]; /* their runtimes, each distinct one (at most 4) */
    unsigned ninfos;
  } live;
  struct retired retired[PROGRAMS_RETIRED_KEPT];
  unsigned next_retired;
};

struct programs {
  struct program *list;       /* every program seen */
  unsigned n;
};

/* [p] goes (its figures read one last time): they stay in its program's
 * sums. */
void programs_retire(struct programs *g, const struct ocgc_watched *p);
/* [p] is watched (again?): if it went before, its figures leave the gone
 * sums, for it counts them itself. */
void programs_revive(struct programs *g, const struct ocgc_watched *p);
/* The programs' sums, from the processes of the set as refreshed: begin,
 * then each process of the set once (programs_count), then end.  The
 * watch hands them down one by one; programs.c never reads the watch. */
void programs_begin(struct programs *g);
void programs_count(struct programs *g, const struct ocgc_watched *p);
void programs_end(struct programs *g);
void programs_free(struct programs *g);

/* The programs of [w], or NULL if it was not made by_program (watch.c). */
const struct programs *watch_programs(const struct ocgc_watch *w);

#endif /* OCGC_PROGRAMS_H */
