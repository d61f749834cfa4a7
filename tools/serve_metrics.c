/* serve_metrics.c - what `ocgc serve` puts in /metrics (serve.h): the
 * families of its watch (libocgc's ocgc_watch_expose: every process's or
 * program's series), then the exporter's own figures (ocgc_serve_*: no
 * pid, they are not a process's).
 *
 * Invariants: the counters of the exporter's own only grow (its watch's
 * and its atomics'); the families are written whole, each once. */

#include <stdio.h>

#include "serve.h"

/* One family of the exporter's own, with its one sample: the name is
 * written once. */
static void own_u64(struct ocgc_expo *e, const char *name, const char *type, const char *help,
                    uint64_t v)
{
  ocgc_expo_family(e, name, type, help);
  ocgc_expo_u64(e, name, NULL, 0, v);
}

/* The exporter's own figures (no pid: they are not a process's). */
static void own(struct ocgc_expo *e, const struct serve_set *s)
{
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  ocgc_watch_stats(s->watch, &st);
  ocgc_expo_family(e, "ocgc_serve_scrape_duration_seconds", "gauge",
              "Time the last read of every watched ring and /proc took (bounded: "
              "see ocgc_serve_stale).");
  ocgc_expo_ns(e, "ocgc_serve_scrape_duration_seconds", NULL, 0, st.refresh_ns);
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
  if (s->all)
    own_u64(e, "ocgc_serve_unknown_release_processes", "gauge",
            "Processes with a stock OCaml 5 ring that the last look for rings did not watch "
            "because their OCaml release is newer than every event numbering known (counted "
            "in ocgc_serve_refused_processes too): ocgc report, stat, trace, dump and top "
            "read them when told the numbering (--ids).",
            st.unknown_release);
  if (s->all)
    own_u64(e, "ocgc_serve_rings_notified_total", "counter",
            "Processes watched from the moment their ring appeared in a watched folder "
            "(inotify), not by the listing of every second.",
            st.notified);
  if (s->all)
    own_u64(e, "ocgc_serve_processes_missed_total", "counter",
            "Processes whose ring appeared in a watched folder but that ended before it could "
            "be opened: their figures are in no series (or names of pids not running put in "
            "a watched folder by its owner).",
            st.missed);
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
          "Connections cut because a request's head did not come whole within 10 s, "
          "or was the oldest unfinished one when a newcomer needed its place "
          "(a client trickling its headers).",
          __atomic_load_n(&s->heads_cut, __ATOMIC_RELAXED));
  own_u64(e, "ocgc_serve_polls_total", "counter",
          "Drains of a watched ring, on its own schedule or for a scrape.", st.polls);
  if (s->pprof != NULL) { /* counters alone: relaxed loads of relaxed adds (serve_pprof.c) */
    own_u64(e, "ocgc_serve_pprof_profiles_total", "counter",
            "Profiles served (/debug/pprof/allocs, /debug/pprof/heap and /debug/pprof/profile).",
            __atomic_load_n(&s->pprof->served, __ATOMIC_RELAXED));
    own_u64(e, "ocgc_serve_pprof_windows", "gauge",
            "Profile windows (/debug/pprof/...&seconds=S) under way: an allocation window's first "
            "copy taken, a CPU window sampling.",
            __atomic_load_n(&s->pprof->windows, __ATOMIC_RELAXED));
    own_u64(e, "ocgc_serve_pprof_busy_total", "counter",
            "Profile requests refused for want of room: 503 (8 being made already, or 2 CPU "
            "profiles) or 429 (4 of that client's).",
            __atomic_load_n(&s->pprof->busy, __ATOMIC_RELAXED));
    own_u64(e, "ocgc_serve_pprof_abandoned_total", "counter",
            "Profile windows dropped because their client left before the answer.",
            __atomic_load_n(&s->pprof->abandoned, __ATOMIC_RELAXED));
  }
  if (s->flight != NULL) serve_flight_metrics(s->flight, e);
  own_u64(e, "ocgc_serve_errors_total", "counter",
          "Rings that could not be opened or read, listings and --textfile writes that "
          "failed.",
          st.errors + __atomic_load_n(&s->tf_errors, __ATOMIC_RELAXED));
}

void serve_set_metrics(const struct serve_set *s, ocgc_put_fn put, void *ctx,
                       enum ocgc_expo_format f)
{
  struct ocgc_expo e;
  ocgc_expo_init(&e, put, ctx, f);
  ocgc_watch_expose(s->watch, &e);
  own(&e, s);
  ocgc_expo_finish(&e);
}
