/* serve_set.c - the processes `ocgc serve` watches (serve.h): the PIDs of
 * the command line, or with --all every process ocgc_list() finds, each
 * with its own source and aggregator (from the oldest event its ring
 * holds), drained on its own schedule (serve_set_poll, from serve.c's poll
 * thread) and at each refresh, then snapshotted and read from /proc.
 *
 * Invariants: a process is known by its pid and its start time, so a pid
 * reused by a new process is a new entry; a process that tool_alive() says
 * is gone (or whose /proc entry went) is dropped right after its last
 * drain, before anything is written, so nothing of a dead process is
 * served; a ring whose read takes longer than SERVE_RING_SLOW_NS is served
 * from its last figures, marked stale, and not read again before its
 * backoff ends, so no target holds the others' figures back for long;
 * libocgc handles are used by one thread, serve.c's poll thread. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <regex.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "common.h"
#include "serve.h"
#include "utf8.h"

#define LIST_EVERY_NS 1000000000u
#define REFUSED_FORGET_NS 60000000000u /* 60 s */

static void proc_free(struct serve_proc *p)
{
  ocgc_snapshot_free(p->snap);
  ocgc_agg_free(p->agg);
  ocgc_source_close(p->src);
  free(p);
}

/* /proc/PID/comm, for rings that name no program (stock OCaml 5). */
static void read_comm(int pid, char *buf, size_t n)
{
  char path[64];
  FILE *f;
  snprintf(path, sizeof path, "/proc/%d/comm", pid);
  buf[0] = '\0';
  if ((f = fopen(path, "re")) == NULL) return;
  if (fgets(buf, (int)n, f) != NULL) buf[strcspn(buf, "\n")] = '\0';
  fclose(f);
}

/* Follow [src], the ring of [pid] (taken over, closed on failure): 0 or
 * libocgc's error. */
static int proc_add(struct serve_set *s, struct ocgc_source *src, int pid, uint64_t start_ticks)
{
  struct ocgc_agg_opts go = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct serve_proc *p = calloc(1, sizeof *p);
  int err;
  if (p == NULL) { ocgc_source_close(src); return -ENOMEM; }
  p->src = src;
  go.start = OCGC_START_OLDEST;
  /* /metrics has no per-phase histogram, and its histograms have fixed
   * buckets: counted at them, with no fine histogram (a few hundred bytes
   * per process that stay in the cache, nothing to copy at a scrape). */
  go.no_phases = 1;
  go.bounds_ns = expo_buckets_ns;
  go.nbounds = EXPO_NBUCKETS;
  go.bounds_only = 1;
  if ((err = ocgc_agg_new(p->src, &go, &p->agg)) != 0 ||
      (p->info.sz = sizeof p->info, err = ocgc_source_info(p->src, &p->info)) != 0) {
    proc_free(p);
    return err;
  }
  p->pid = pid;
  p->start_ticks = start_ticks;
  p->drain_max = ocgc_source_drain_bound(p->src);
  /* An event is 2 to 3 words, most often (spans and counters). */
  p->ring_events = p->info.ring_words / 3 + 1;
  p->poll_every_ns = SERVE_POLL_MIN_NS * 10;
  p->next_poll_ns = 0; /* at once */
  snprintf(p->pid_label, sizeof p->pid_label, "%d", pid);
  if (p->info.has_ext) snprintf(p->program, sizeof p->program, "%s", p->info.program);
  else read_comm(pid, p->program, sizeof p->program);
  tool_utf8_cut(p->program, SERVE_LABEL_MAX, p->label);
  p->next = s->procs;
  s->procs = p;
  s->nprocs++;
  serve_byprog_revive(s, p);
  return 0;
}

static int watched(const struct serve_set *s, int pid, uint64_t start_ticks)
{
  const struct serve_proc *p;
  for (p = s->procs; p != NULL; p = p->next)
    if (p->pid == pid && p->start_ticks == start_ticks) return 1;
  return 0;
}

/* [pid]'s entry in the memo of the listings (refused_ids), or NULL. */
static const struct serve_ident *memo_of(const struct serve_set *s, int pid, uint64_t start_ticks)
{
  size_t i;
  for (i = 0; i < s->nrefused; i++)
    if (s->refused_ids[i].pid == pid && s->refused_ids[i].start_ticks == start_ticks)
      return &s->refused_ids[i];
  return NULL;
}

/* Remember [pid], so that the next listings do not read its maps and open
 * its ring again, each second, for nothing (thousands of rings over the
 * bounds would make every listing slow): refused for want of room, or
 * [unselected] by --program.  Forgotten when a watched process goes
 * (there is room again) and every REFUSED_FORGET_NS (a failing ring may
 * have appeared to take the place of; a process may have exec'd into a
 * program --program selects); past SERVE_REFUSED_MEMO entries, not
 * remembered. */
static void remember(struct serve_set *s, int pid, uint64_t start_ticks, int unselected)
{
  if (s->nrefused == s->refused_cap) {
    size_t cap = s->refused_cap ? s->refused_cap * 2 : 256;
    struct serve_ident *p;
    if (cap > SERVE_REFUSED_MEMO || (p = realloc(s->refused_ids, cap * sizeof *p)) == NULL) return;
    s->refused_ids = p;
    s->refused_cap = cap;
  }
  s->refused_ids[s->nrefused].pid = pid;
  s->refused_ids[s->nrefused].start_ticks = start_ticks;
  s->refused_ids[s->nrefused].unselected = unselected;
  s->nrefused++;
}

static void refuse(struct serve_set *s, int pid, uint64_t start_ticks)
{
  s->listing_refused++;
  remember(s, pid, start_ticks, 0);
}

/* ocgc_list_opts's skip: a process watched already, refused or not
 * selected lately, or (--user) another user's, costs no maps read. */
static unsigned proc_uid(int pid);
static int skip_known(int pid, uint64_t start_time, void *ctx)
{
  struct serve_set *s = ctx;
  const struct serve_ident *m;
  if (watched(s, pid, start_time)) return 1;
  if (s->have_uid && proc_uid(pid) != s->uid) return 1;
  if ((m = memo_of(s, pid, start_time)) == NULL) return 0;
  if (!m->unselected) s->listing_refused++;
  return 1;
}

/* The owner of /proc/PID (its real uid; 0 if it cannot be read). */
static unsigned proc_uid(int pid)
{
  char path[32];
  struct stat st;
  snprintf(path, sizeof path, "/proc/%d", pid);
  return stat(path, &st) == 0 ? (unsigned)st.st_uid : 0;
}

static void proc_figures(struct serve_set *s, struct serve_proc *p);

/* One ring's drain, within its read budget: 0 or the poll's error;
 * *stuck (see ocgc_drain_result). */
static int proc_read(struct serve_proc *p, int *stuck)
{
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  struct ocgc_drain_result r = OCGC_OPTS_INIT(struct ocgc_drain_result);
  int err;
  d.max_events = p->drain_max; /* not read again at each drain */
  d.deadline_ns = cm_mono_ns() + SERVE_RING_BUDGET_NS;
  err = ocgc_agg_drain(p->agg, &d, &r);
  *stuck = r.stuck;
  return err;
}

/* Take [p] out of the list at [pp], and free it; --by program, its last
 * figures stay in its program's (read once more: an exit's last
 * collections are in the totals it left). */
static void proc_remove(struct serve_set *s, struct serve_proc **pp, struct serve_proc *p)
{
  if (s->by_program && p->snap != NULL) {
    int stuck;
    if (p->backoff_ns == 0) {
      (void)proc_read(p, &stuck);
      proc_figures(s, p);
    }
    serve_byprog_retire(s, p);
  }
  *pp = p->next;
  s->nprocs--;
  proc_free(p);
  s->dropped = 1;
}

/* Take [victim] (in the list) out, and free it: its place goes to another. */
static void proc_unlink(struct serve_set *s, struct serve_proc *victim)
{
  struct serve_proc **pp;
  for (pp = &s->procs; *pp != NULL; pp = &(*pp)->next)
    if (*pp == victim) {
      proc_remove(s, pp, victim);
      return;
    }
}

/* Room for one more process of [uid]: 0, after dropping a watched ring
 * that keeps failing (of [uid] when its quota is the bound) if need be, or
 * -1 (the bounds are met by rings that read). */
static int make_room(struct serve_set *s, unsigned uid)
{
  unsigned max = s->max_procs ? s->max_procs : SERVE_MAX_WATCHED;
  unsigned per_user = s->max_per_user ? s->max_per_user : SERVE_MAX_PER_USER;
  struct serve_proc *p, *victim = NULL, *victim_any = NULL;
  size_t mine = 0;
  for (p = s->procs; p != NULL; p = p->next) {
    if (p->uid == uid) mine++;
    if (!SERVE_FAILING(p)) continue;
    if (victim_any == NULL) victim_any = p;
    if (victim == NULL && p->uid == uid) victim = p;
  }
  if (mine >= per_user) {
    if (victim == NULL) return -1;
  } else if (s->nprocs >= max) {
    if ((victim = victim_any) == NULL) return -1;
  } else {
    return 0;
  }
  proc_unlink(s, victim);
  s->evicted++;
  return 0;
}

int serve_set_add_pid(struct serve_set *s, int pid)
{
  struct procstat ps;
  struct tool_target t = {0};
  struct ocgc_source *src;
  int err;
  t.pid = pid;
  t.dir = s->dir;
  snprintf(t.label, sizeof t.label, "process %d", pid);
  if ((err = tool_target_open(&t, &src)) != 0) return tool_exit_code(err); /* said why */
  if (procstat_read(pid, &ps) != 0) ps.start_ticks = 0;
  if (watched(s, pid, ps.start_ticks)) { ocgc_source_close(src); return 0; } /* given twice */
  if ((err = proc_add(s, src, pid, ps.start_ticks)) != 0) return tool_target_error(&t, err);
  s->procs->uid = proc_uid(pid);
  return 0;
}

static int list_one(const struct ocgc_list_entry *e, void *ctx)
{
  struct serve_set *s = ctx;
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *src;
  unsigned uid;
  if (e->state != OCGC_LIST_RUNNING || watched(s, e->pid, e->start_time)) return 0;
  /* --program: a name of the target's choosing, matched as it is (the
   * regex's time is bounded by the name's 128 bytes); one that does not
   * match is not looked at again for a while. */
  if (s->program_re != NULL && regexec(s->program_re, e->program, 0, NULL, 0) != 0) {
    remember(s, e->pid, e->start_time, 1);
    return 0;
  }
  ao.dir = s->dir;
  uid = proc_uid(e->pid);
  /* Opened first: only a ring that opens as valid takes a failing one's
   * place.  One that does not open is counted, not remembered: it may be
   * a ring being made, which the next listing opens. */
  if (ocgc_source_open_pid(e->pid, &ao, &src) != 0) {
    s->errors++;
    s->listing_refused++;
    return 0;
  }
  if (make_room(s, uid) != 0) {
    ocgc_source_close(src);
    refuse(s, e->pid, e->start_time);
    return 0;
  }
  if (proc_add(s, src, e->pid, e->start_time) != 0) {
    s->errors++;
    s->listing_refused++;
    return 0;
  }
  s->procs->uid = uid;
  return 0;
}

/* A read of [p]'s ring failed with [err]: counted, and said on stderr the
 * first time for this process (a daemon must not fill its log with one
 * line per poll of a ring that stays corrupt). */
static void proc_error(struct serve_set *s, struct serve_proc *p, int err)
{
  char prog[TOOL_ESC_SIZE(sizeof p->program)];
  s->errors++;
  p->fails++;
  if (p->said_error) return;
  p->said_error = 1;
  tool_say("process %d (%s): %s (counted in ocgc_serve_errors_total; said once)", p->pid,
           tool_esc(p->program, prog, sizeof prog), ocgc_strerror(err));
}

static uint64_t passed(const struct ocgc_cursor_stats *st)
{
  return st->seen + st->skipped + st->lost;
}

/* Drain [p] (bounded), and set its next turn from what the drain found:
 * four times sooner if it lost events or found more than half a ring,
 * twice sooner if more than a quarter, twice later if less than a
 * sixteenth: steps by a factor, so that one burst does not make the
 * schedule swing, and a ring that wakes from idle is caught up with in a
 * few turns. */
static void proc_drain(struct serve_set *s, struct serve_proc *p, uint64_t now)
{
  struct ocgc_cursor_stats a = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_cursor_stats b = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t n, every = p->poll_every_ns;
  int err;
  ocgc_agg_cursor_stats(p->agg, &a);
  err = proc_read(p, &p->stuck);
  if (err != 0) proc_error(s, p, err);
  else p->fails = 0;
  ocgc_agg_cursor_stats(p->agg, &b);
  s->polls++;
  n = passed(&b) - passed(&a);
  p->passed = passed(&b);
  if (b.lost > a.lost || n > p->ring_events / 2) every /= 4;
  else if (n > p->ring_events / 4) every /= 2;
  else if (n < p->ring_events / 16) every *= 2;
  if (every < SERVE_POLL_MIN_NS) every = SERVE_POLL_MIN_NS;
  if (every > SERVE_POLL_MAX_NS) every = SERVE_POLL_MAX_NS;
  p->poll_every_ns = every;
  p->next_poll_ns = now + every;
}

/* [p]'s read that began at [t0] ended at [now]: a slow one, or one whose
 * drain was stuck (a seqlock held for the whole budget), makes it stale
 * and backs it off (served from its last values meanwhile) once
 * SERVE_SLOW_READS reads in a row were so; one in time clears that.  The time of a read of target memory is the one thing
 * a target cannot lie about to us. */
static void proc_timed(struct serve_proc *p, uint64_t t0, uint64_t now)
{
  if (now - t0 <= SERVE_RING_SLOW_NS && !p->stuck) {
    p->backoff_ns = 0;
    p->slow_reads = 0;
    return;
  }
  /* A producer preempted in the middle of an update, or one that lies now
   * and then, is slow once; one that stays so is left alone. */
  if (++p->slow_reads < SERVE_SLOW_READS) return;
  p->stale = 1;
  p->backoff_ns = p->backoff_ns == 0 ? SERVE_BACKOFF_MIN_NS : p->backoff_ns * 2;
  if (p->backoff_ns > SERVE_BACKOFF_MAX_NS) p->backoff_ns = SERVE_BACKOFF_MAX_NS;
  p->retry_ns = now + p->backoff_ns;
  if (p->next_poll_ns < p->retry_ns) p->next_poll_ns = p->retry_ns;
}

static int yield_asked(const struct serve_set *s)
{
  return s->yield != NULL && s->yield(s->yield_ctx);
}

/* [p], at [pp], is gone: out of the list, and its slot free for another. */
static void proc_drop(struct serve_set *s, struct serve_proc **pp, struct serve_proc *p)
{
  proc_remove(s, pp, p);
  s->slot_freed = 1;
}

/* After processes went: give the memory they held back to the system
 * (glibc keeps freed blocks in its arenas; a burst of hundreds of
 * processes would otherwise leave the exporter at its peak for good). */
static void give_back(struct serve_set *s)
{
  if (!s->dropped) return;
  s->dropped = 0;
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

/* ocgc_list_opts's denied: a process whose maps we may not read.  Whether
 * it has a ring cannot be told from here (its maps, descriptors and ring
 * folder are closed to us); it counts as unreadable when its ring shows in
 * the folder of --dir, and only then: every other user's process is not
 * an OCaml program we miss. */
static void denied_one(int pid, uint64_t start_time, void *ctx)
{
  struct serve_set *s = ctx;
  char path[4096];
  struct stat st;
  (void)start_time;
  if (s->dir == NULL || snprintf(path, sizeof path, "%s/%d.events", s->dir, pid) >= (int)sizeof path)
    return;
  if (lstat(path, &st) == 0) s->listing_unreadable++;
}

/* --all: look for new processes, at most once a second. */
static void list_due(struct serve_set *s, uint64_t now)
{
  struct ocgc_list_opts lo = OCGC_OPTS_INIT(struct ocgc_list_opts);
  struct ocgc_list_stats st = OCGC_OPTS_INIT(struct ocgc_list_stats);
  if (!s->all || (s->listed_ns != 0 && now - s->listed_ns < LIST_EVERY_NS)) return;
  lo.skip = skip_known;
  lo.denied = denied_one;
  s->listing_refused = 0;
  s->listing_unreadable = 0;
  if (s->slot_freed || now - s->refused_since_ns >= REFUSED_FORGET_NS) {
    s->nrefused = 0;
    s->refused_since_ns = now;
    s->slot_freed = 0;
  }
  if (ocgc_list_opts(&lo, list_one, s, &st) < 0) s->errors++;
  else {
    s->unreadable = s->listing_unreadable;
    s->refused = s->listing_refused;
  }
  s->listed_ns = now;
}

uint64_t serve_set_poll(struct serve_set *s, uint64_t now)
{
  struct serve_proc **pp = &s->procs;
  uint64_t next = now + SERVE_POLL_MAX_NS;
  list_due(s, now);
  while (*pp != NULL) {
    struct serve_proc *p = *pp;
    if (yield_asked(s)) return now;
    if (p->next_poll_ns <= now) {
      uint64_t before = p->passed, t0 = cm_mono_ns();
      int check;
      proc_drain(s, p, now);
      /* A ring that moved was written by its live process (no other
       * writes it): /proc is read only for one that stood still, or once
       * a second; a scrape always reads it (serve_set_refresh). */
      check = p->passed == before || now - p->alive_ns >= SERVE_ALIVE_EVERY_NS;
      if (check && !tool_alive(p->src)) {
        proc_drop(s, pp, p);
        continue;
      }
      if (check) p->alive_ns = now;
      proc_timed(p, t0, cm_mono_ns());
    }
    if (p->next_poll_ns < next) next = p->next_poll_ns;
    pp = &p->next;
  }
  give_back(s);
  return next;
}

/* *now, or [before] if that is more: what a Prometheus counter shows. */
static void no_less(uint64_t *now, uint64_t before)
{
  if (*now < before) *now = before;
}

/* The counters of the new snapshot, each never less than before: an honest
 * producer's only grow, and a lying one must not make a scraper see a
 * counter reset (and a rate out of nothing). */
static void read_counters(struct serve_proc *p)
{
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters), *o = &p->counters;
  ocgc_snapshot_counters(p->snap, &c);
  if (p->have_counters) {
    unsigned k;
    for (k = 0; k < OCGC_KIND_COUNT; k++) no_less(&c.collections[k], o->collections[k]);
    no_less(&c.major_cycles, o->major_cycles);
    no_less(&c.allocated_bytes, o->allocated_bytes);
    no_less(&c.promoted_bytes, o->promoted_bytes);
    no_less(&c.direct_major_bytes, o->direct_major_bytes);
    no_less(&c.gc_time_ns, o->gc_time_ns);
    no_less(&c.events_seen, o->events_seen);
    no_less(&c.events_lost, o->events_lost);
  }
  *o = c;
  p->have_counters = 1;
}

/* The totals' cause table read, each cell never less than before (as
 * read_counters). */
static void read_totals(struct serve_proc *p, struct ocgc_totals *t)
{
  unsigned k, c;
  if (p->have_totals)
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      for (c = 0; c < OCGC_CAUSE_SLOTS; c++) no_less(&t->by_cause[k][c], p->totals.by_cause[k][c]);
  p->totals = *t;
  p->have_totals = 1;
}

/* The events written into [p]'s rings (ocgc files), summed: kept from the
 * last read of every ring, and never less than before (the counter a
 * scraper sees must not go backwards while the process lives). */
static void read_written(struct serve_proc *p)
{
  uint64_t sum = 0, w;
  unsigned r;
  if (!p->info.has_ext) return;
  for (r = 0; r < p->info.max_domains; r++) {
    if (ocgc_source_written(p->src, r, &w) != 0) return;
    sum += w;
  }
  if (!p->have_written || sum > p->written) p->written = sum;
  p->have_written = 1;
}

/* Snapshot [p] and read what its ring says besides (a snapshot that fails
 * leaves the last one, or none before its first). */
static void proc_figures(struct serve_set *s, struct serve_proc *p)
{
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  /* In place: no allocation at each scrape once the histograms exist. */
  if (ocgc_agg_snapshot_update(p->agg, &p->snap) == 0) read_counters(p);
  else s->errors++;
  if (ocgc_source_totals(p->src, &t) == 0) read_totals(p, &t);
  p->config.sz = sizeof p->config;
  p->have_config = ocgc_source_gc_config(p->src, &p->config) == 0;
  read_written(p);
}

/* Drain, snapshot and read one process: 0, or -1 if it is gone. */
static int proc_refresh(struct serve_set *s, struct serve_proc *p, uint64_t now)
{
  proc_drain(s, p, now);
  if (!tool_alive(p->src) || procstat_read(p->pid, &p->ps) != 0) return -1;
  proc_figures(s, p);
  return 0;
}

void serve_set_refresh(struct serve_set *s, uint64_t deadline)
{
  struct serve_proc **pp = &s->procs;
  uint64_t t0 = cm_mono_ns(), now = t0, stale = 0;
  list_due(s, t0);
  while (*pp != NULL) {
    struct serve_proc *p = *pp;
    now = cm_mono_ns();
    if (now >= deadline || (p->backoff_ns != 0 && p->snap != NULL)) {
      /* Out of time, or slow: its last figures, marked so.  A slow ring is
       * read again by the poll turns only (serve_set_poll, once its
       * backoff ends), never while a scrape waits, but until it has
       * figures to serve (each read bounded); a read in time brings it
       * back here. */
      p->stale = 1;
      stale++;
      pp = &p->next;
      continue;
    }
    p->stale = 0;
    if (proc_refresh(s, p, t0) != 0) {
      proc_drop(s, pp, p);
      continue;
    }
    proc_timed(p, now, cm_mono_ns());
    stale += p->stale != 0;
    pp = &p->next;
  }
  s->stale = stale;
  serve_byprog_update(s);
  give_back(s);
  s->refresh_ns = cm_mono_ns() - t0;
}

void serve_set_index(const struct serve_set *s, expo_put_fn put, void *out)
{
  const struct serve_proc *p;
  char line[TOOL_ESC_SIZE(sizeof p->program) + 128], prog[TOOL_ESC_SIZE(sizeof p->program)];
  int n = snprintf(line, sizeof line, "ocgc serve: %zu watched process%s; metrics at /metrics\n"
                   "\nPID\tPROGRAM\n", s->nprocs, s->nprocs == 1 ? "" : "es");
  put(out, line, (size_t)n);
  for (p = s->procs; p != NULL; p = p->next) {
    n = snprintf(line, sizeof line, "%d\t%s\n", p->pid, tool_esc(p->program, prog, sizeof prog));
    put(out, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  }
}

void serve_set_free(struct serve_set *s)
{
  serve_byprog_free(s);
  while (s->procs != NULL) {
    struct serve_proc *p = s->procs;
    s->procs = p->next;
    proc_free(p);
  }
  s->nprocs = 0;
  free(s->refused_ids);
  s->refused_ids = NULL;
  s->nrefused = s->refused_cap = 0;
}
