/* watch_flight.c - a watched process's flight recorder: its history in
 * seconds (fed by its aggregator's pauses, its memory sampled once a
 * second), its identity read while it lives (a dead process's
 * executable is no longer in /proc), the triggers, and the recordings
 * made into the watch's folder (ocgc/flight.h, docs/flight-recorder.md).
 *
 * Invariants: a trigger only asks (fl->want); the recording is made after
 * the drain that fired it, at the turn, so no recording is written from
 * inside an aggregator's callback; a process whose ring went but that
 * lives on (an exec) is not a death; what a recording says of the process
 * is what the watch read, never a guess: a figure not read is 0 (unknown).
 * The memory: one history (ocgc_flight_hist_size) and this struct per
 * process. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/attach.h"
#include "procfs.h"
#include "watch_flight.h"

#define SAMPLE_EVERY_NS 1000000000u   /* memory sampled, triggers asked */
#define GROWTH_SPAN_S 10u             /* the heap's growth is taken over this */

struct wflight {
  struct ocgc_flight_hist *hist;     /* NULL: no history asked */
  char exe[256];                     /* read at its watch's start */
  char build_id[64];
  uint64_t pause_ns;                 /* the pause trigger (0: off) */
  int want;                          /* a trigger's reason, waiting for the turn (0: none) */
  char detail[128];
  uint64_t sampled_ns;               /* cm_mono_ns() of its last memory sample */
  uint64_t rss;                      /* resident bytes at that sample (0: unknown) */
};

int wflight_new(const struct ocgc_watch_opts *o, int pid, struct wflight **out)
{
  struct ocgc_flight_meta m = OCGC_OPTS_INIT(struct ocgc_flight_meta);
  struct wflight *fl;
  *out = NULL;
  if (o->flight_window_s == 0 && o->flight_dir == NULL) return 0;
  if ((fl = calloc(1, sizeof *fl)) == NULL) return -ENOMEM;
  if (ocgc_flight_hist_new(o->flight_window_s, &fl->hist) != 0) {
    free(fl);
    return -ENOMEM;
  }
  fl->pause_ns = o->flight_pause_ns;
  if (o->flight_dir != NULL && ocgc_flight_ident(pid, &m) == 0) {
    snprintf(fl->exe, sizeof fl->exe, "%s", m.exe);
    snprintf(fl->build_id, sizeof fl->build_id, "%s", m.build_id);
  }
  *out = fl;
  return 0;
}

void wflight_free(struct wflight *fl)
{
  if (fl == NULL) return;
  ocgc_flight_hist_free(fl->hist);
  free(fl);
}

/* The aggregator's on_pause: into the history, and the pause trigger. */
static void on_pause(const struct ocgc_agg_pause *p, void *ctx)
{
  struct wflight *fl = ctx;
  ocgc_flight_hist_on_pause(p, fl->hist);
  if (fl->pause_ns != 0 && fl->want == 0 && p->pause.duration_ns > fl->pause_ns) {
    fl->want = OCGC_FLIGHT_PAUSE;
    snprintf(fl->detail, sizeof fl->detail, "pause %" PRIu64 " us > %" PRIu64 " us",
             p->pause.duration_ns / 1000, fl->pause_ns / 1000);
  }
}

static void on_lost(unsigned ring, uint64_t lost, int exact, uint64_t after_ns, void *ctx)
{
  struct wflight *fl = ctx;
  ocgc_flight_hist_on_lost(ring, lost, exact, after_ns, fl->hist);
}

void wflight_agg_opts(struct wflight *fl, struct ocgc_agg_opts *go)
{
  if (fl == NULL) return;
  go->on_pause = on_pause;
  go->on_lost = on_lost;
  go->ctx = fl;
}

/* Resident bytes of [pid] (/proc/PID/statm, one small read), or 0. */
static uint64_t rss_of(int pid)
{
  char path[64], buf[256];
  unsigned long long size, res;
  long page = sysconf(_SC_PAGESIZE);
  ssize_t n;
  snprintf(path, sizeof path, "/proc/%d/statm", pid);
  if ((n = ocgc_proc_read_small(path, buf, sizeof buf)) <= 0) return 0;
  buf[n < (ssize_t)sizeof buf ? n : (ssize_t)sizeof buf - 1] = '\0';
  if (sscanf(buf, "%llu %llu", &size, &res) != 2 || page <= 0) return 0;
  return (uint64_t)res * (uint64_t)page;
}

/* The heap's growth in bytes a second over the last GROWTH_SPAN_S seconds
 * of history that have a heap figure, or 0. */
static uint64_t heap_growth(const struct wflight *fl)
{
  struct ocgc_flight_second s[OCGC_FLIGHT_MAX_WINDOW_S > 64 ? 64 : OCGC_FLIGHT_MAX_WINDOW_S];
  unsigned n = ocgc_flight_hist_seconds(fl->hist, s, sizeof s / sizeof s[0]), i;
  const struct ocgc_flight_second *last = NULL, *first = NULL;
  for (i = n; i-- > 0;) {
    if (s[i].heap == 0) continue;
    if (last == NULL) { last = &s[i]; continue; }
    first = &s[i];
    if (last->t - first->t >= GROWTH_SPAN_S * UINT64_C(1000000000)) break;
  }
  if (first == NULL || last->heap <= first->heap || last->t == first->t) return 0;
  return (last->heap - first->heap) * UINT64_C(1000000000) / (last->t - first->t);
}

/* The triggers of memory and heap growth, asked at a sample. */
static void ask_triggers(struct wflight *fl, const struct ocgc_watch_opts *o,
                         const struct ocgc_watched *pub)
{
  const struct ocgc_memcg *m = &pub->memcg;
  uint64_t g;
  if (fl->want != 0) return;
  if (o->flight_memcg_pct != 0 && m->known && m->limit != UINT64_MAX && m->limit != 0 &&
      m->usage > m->limit / 100 * o->flight_memcg_pct) {
    fl->want = OCGC_FLIGHT_MEMORY;
    snprintf(fl->detail, sizeof fl->detail, "memory cgroup at %" PRIu64 "%% of its limit > %u%%",
             m->usage / (m->limit / 100 ? m->limit / 100 : 1), o->flight_memcg_pct);
    return;
  }
  if (o->flight_heap_growth != 0 && (g = heap_growth(fl)) > o->flight_heap_growth) {
    fl->want = OCGC_FLIGHT_HEAP_GROWTH;
    snprintf(fl->detail, sizeof fl->detail, "heap growing %" PRIu64 " KiB/s > %" PRIu64 " KiB/s",
             g >> 10, o->flight_heap_growth >> 10);
  }
}

int wflight_sample_due(const struct wflight *fl, uint64_t now)
{
  return fl != NULL && now - fl->sampled_ns >= SAMPLE_EVERY_NS;
}

void wflight_turn(struct wflight *fl, const struct ocgc_watch_opts *o,
                  const struct ocgc_watched *pub, const struct ocgc_source *src, uint64_t now)
{
  if (fl == NULL) return;
  if (wflight_sample_due(fl, now)) {
    uint64_t rss = rss_of(pub->pid);
    struct ocgc_process_figures f = OCGC_OPTS_INIT(struct ocgc_process_figures);
    fl->sampled_ns = now;
    if (rss != 0) {
      fl->rss = rss;
      f.rss_bytes = rss;
      ocgc_flight_hist_sample(fl->hist, now, &f, &pub->memcg);
    }
    if (o->flight_dir != NULL) ask_triggers(fl, o, pub);
  }
  if (fl->want != 0 && o->flight_dir != NULL) {
    int reason = fl->want;
    char detail[sizeof fl->detail];
    snprintf(detail, sizeof detail, "%s", fl->detail);
    fl->want = 0;
    /* In the cooldown the folder refuses it before any work, and counts
     * it (cooled); it is asked again by the next pause or sample. */
    (void)wflight_record(fl, o, pub, src, reason, detail, NULL, 0);
  }
}

/* Whether [pub]'s process lives on (its ring went with an exec). */
static int lives_on(const struct ocgc_watched *pub)
{
  struct ocgc_proc_ident id;
  return ocgc_proc_ident(pub->pid, &id) == 0 && id.start_time == pub->start_ticks &&
         id.state != 'Z' && id.state != 'X';
}

void wflight_gone(struct wflight *fl, const struct ocgc_watch_opts *o,
                  const struct ocgc_watched *pub, const struct ocgc_source *src)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  if (fl == NULL || o->flight_dir == NULL || lives_on(pub)) return;
  if (ocgc_source_info(src, &info) != 0) return;
  /* An ocgc ring says whether the runtime went through its exit; a stock
   * one does not: recorded when the kernel said a signal ended it. */
  if (info.has_ext ? info.state == OCGC_STATE_EXITED
                   : !(pub->exit.known && pub->exit.how != OCGC_EXIT_EXITED))
    return;
  (void)wflight_record(fl, o, pub, src, OCGC_FLIGHT_DEATH, "", NULL, 0);
}

int wflight_record(struct wflight *fl, const struct ocgc_watch_opts *o,
                   const struct ocgc_watched *pub, const struct ocgc_source *src, int reason,
                   const char *detail, char *name, size_t n)
{
  struct ocgc_flight_meta m = OCGC_OPTS_INIT(struct ocgc_flight_meta);
  struct timespec ts;
  char file[128] = "";
  int err;
  if (o->flight_dir == NULL) return -ENOENT;
  m.reason = reason;
  snprintf(m.detail, sizeof m.detail, "%s", detail != NULL ? detail : "");
  if (reason == OCGC_FLIGHT_DEATH) m.exit = pub->exit;
  m.pid = pub->pid;
  m.start_ticks = pub->start_ticks;
  snprintf(m.program, sizeof m.program, "%s", pub->program);
  if (fl != NULL) {
    snprintf(m.exe, sizeof m.exe, "%s", fl->exe);
    snprintf(m.build_id, sizeof m.build_id, "%s", fl->build_id);
  }
  m.rss_bytes = fl != NULL && fl->rss != 0 ? fl->rss : pub->proc.rss_bytes;
  m.memcg = pub->memcg;
  clock_gettime(CLOCK_REALTIME, &ts);
  m.recorded_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  m.window_s = o->flight_window_s;
  err = ocgc_flight_dir_record(o->flight_dir, src, fl != NULL ? fl->hist : NULL, &m, file,
                               sizeof file);
  if (name != NULL && n > 0) snprintf(name, n, "%s", file);
  if (o->on_recorded != NULL) o->on_recorded(pub, reason, err == 0 ? file : NULL, err, o->ctx);
  return err;
}
