/* watch.c - a set of watched processes (ocgc/watch.h): the pids given, or
 * with opts.all every process with a ring, found as its ring folder names
 * it (watch_notify.c's inotify, read at each poll when the set's
 * descriptor fired: watch_wait.c) and by ocgc_list() each second, each
 * admitted by the same rules (admit), each with its own source
 * and aggregator (from the oldest event its ring holds), drained on its
 * own schedule (ocgc_watch_poll) and at each refresh, then snapshotted and
 * read from /proc.
 *
 * Invariants: a process is known by its pid and its start time, so a pid
 * reused by a new process is a new entry; a process whose ring
 * ocgc_source_gone() (or whose /proc entry went) is let
 * go right after its last drain, before its figures are read again, so
 * nothing of a dead process is shown as living; a ring whose read takes
 * longer than OCGC_WATCH_SLOW_NS is kept at its last figures, marked
 * stale, and not read again before its backoff ends, so no target holds
 * the others' figures back for long; the set's counters only grow, even
 * from a producer that lies; the memo of refused processes, the memo of
 * processes tried lately (a name of theirs costs no open for a second; a
 * process of an OCaml newer than every numbering known is told once while
 * it stays there, nothing more kept of it, and counted by each listing),
 * the names read per poll and the set are bounded; a process that goes
 * is read a last time first (by_program, on_gone), refreshed before or
 * not; the set is used by one thread at a time; a process the
 * caller named (ocgc_watch_add_pid) is followed while that process lives
 * (pid and start time), across an exec: the old image's ring is let go as
 * any gone ring, and the new image's, once it has one, watched as a new
 * entry; a process whose ring is gone leaves once the kernel says how it
 * ended or that it lives on (exitinfo.c: ocgc_watched.exit filled before
 * on_gone, an OOM kill told by its memory cgroup, memcg.c, read at each
 * refresh and once more at its end), kept meanwhile as ending (its last
 * figures, asked again every EXITINFO_POLL_NS, for at most
 * EXITINFO_ENDING_NS), never waited for; each end is counted by program
 * (exits.c) as it leaves. */

#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "attach.h"
#include "common/counter_fields.h"
#include "common/clock.h"
#include "ocgc/attach.h"
#include "ocgc/drain.h"
#include "ocgc/list.h"
#include "ocgc/watch.h"
#include "exever.h"
#include "exitinfo.h"
#include "exits.h"
#include "memcg.h"
#include "opts.h"
#include "procfs.h"
#include "programs.h"
#include "watch_flight.h"
#include "watch_notify.h"
#include "watch_wait.h"

#define LIST_EVERY_NS 1000000000u
#define LIST_SOON_NS 100000000u        /* after an inotify overflow: at once, but no
                                          more often than this */
#define TRIED_MEMO 1024                /* processes named lately that did not open,
                                          or went: a name of theirs costs nothing */
#define TRIED_FORGET_NS 1000000000u    /* ... for this long (then the listing's) */
#define NOTIFY_BETWEEN_NS 2000000u     /* a listing reads the folders' news this often */
#define REFUSED_FORGET_NS 60000000000u /* 60 s */
#define REFUSED_MEMO 65536             /* refused processes remembered, at most */
#define ALIVE_EVERY_NS 1000000000u     /* /proc read for a busy ring */
#define RING_BUDGET_NS 20000000u       /* a drain's time, at most (then it goes on
                                          at the next turn) */
#define SLOW_READS 3                   /* in a row, before it is left alone */
#define BACKOFF_MIN_NS 100000000u      /* 100 ms */
#define BACKOFF_MAX_NS 60000000000u    /* 60 s */
#define UNKNOWN_SAID_PER_S 4           /* on_unknown_release calls a second, at most */

struct proc {
  struct ocgc_watched pub;    /* first: what ocgc_watch_next hands out */
  struct proc *next;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_snapshot *snap; /* pub.snap */
  unsigned fails;             /* reads that failed in a row */
  uint64_t ring_events;       /* about how many events one ring holds */
  uint64_t next_poll_ns;      /* cm_mono_ns() of its next drain */
  uint64_t passed;            /* events its cursor has passed (seen, lost, skipped) */
  uint64_t alive_ns;          /* cm_mono_ns() when /proc last said it lives */
  uint64_t drain_max;         /* ocgc_source_drain_bound() of src, once */
  int said_error;             /* on_error was called */
  int stuck;                  /* its last drain ended behind, passing nothing */
  unsigned slow_reads;        /* slow or stuck reads in a row */
  uint64_t backoff_ns;        /* 0: reads in time; else read by poll turns only,
                                 not by refreshes, until one is in time */
  uint64_t retry_ns;          /* cm_mono_ns() before which it is not read again */
  struct wflight *fl;         /* its flight recorder (NULL: none asked) */
  struct watch_waiter pidw;   /* its pidfd's, in the set while it lives: a death
                                 wakes whoever polls ocgc_watch_fd() */
  int pidfd_waited;           /* its pidfd is in the set */
  struct exitinfo ex;         /* its pidfd, and whether it is ending (ex.ending_ns) */
  struct memcg_at cg;         /* its memory cgroup, and the OOM-kill count it lived with */
  struct exit_prog *tally;    /* its program's ends (exits.c) */
};
#define FAILING(p) ((p)->fails >= SLOW_READS || (p)->slow_reads >= SLOW_READS)

struct ident { int pid, unselected; uint64_t start_ticks; };

/* A process the caller named (ocgc_watch_add_pid): followed while it
 * lives, across its execs. */
struct pin { int pid; uint64_t start_ticks; };

/* A process a name was tried for (start_ticks 0: gone when tried), or
 * one let go. */
/* A process named by a folder and tried: how it stands.  TRIED_FAILED: its
 * open failed, counted (gone: missed) or not ours to count; TRIED_OPEN:
 * its open failed while it lived (its ring in its exit, not yet findable),
 * not counted yet: missed once it is gone unwatched, nothing if a listing
 * watches it; TRIED_LET_GO: watched and let go, so a late name of it is no
 * new process whatever its age (a loaded machine reads names late).
 * TRIED_UNKNOWN: a TRIED_FAILED whose ring is of an OCaml release newer
 * than every numbering known, told (on_unknown_release): not told again
 * while it stays in the memo. */
enum { TRIED_FAILED = 0, TRIED_OPEN = 1, TRIED_LET_GO = 2, TRIED_UNKNOWN = 3 };
struct tried { int pid, state; uint64_t start_ticks, at_ns; };

struct ocgc_watch {
  struct ocgc_watch_opts o;
  struct proc *procs;
  struct ocgc_watch_stats st;
  uint64_t listing_refused, listing_unreadable, listing_unknown; /* by the listing
                                                                    under way */
  uint64_t unknown_said_ns;   /* cm_mono_ns() when the second of the calls below began */
  unsigned unknown_said;      /* on_unknown_release calls in that second */
  struct ident *refused_ids;  /* processes refused or not selected lately */
  size_t nrefused, refused_cap;
  uint64_t refused_since_ns;  /* cm_mono_ns() when refused_ids was emptied */
  uint64_t listed_ns;         /* cm_mono_ns() at the last listing (0: never) */
  int dropped;                /* a process was let go since the last give_back() */
  int slot_freed;             /* a watched process went since the last listing */
  struct programs progs;      /* by_program: the programs' sums */
  struct pin *pins;           /* the processes named, at most OCGC_WATCH_MAX_PROCESSES */
  size_t npins, pins_cap;
  uint64_t followed_ns;       /* cm_mono_ns() when the named were last looked for */
  int list_soon;              /* list at the next turn that may: inotify lost events */
  struct watch_wait wait;     /* ocgc_watch_fd()'s set */
  struct notify *notify;      /* all: the ring folders by inotify (NULL: none) */
  struct watch_waiter notify_waiter; /* its descriptor's, in wait */
  int notify_ready;           /* its descriptor fired: read it at this turn */
  uint64_t notify_ns;         /* cm_mono_ns() when the set's descriptors were last asked */
  int pending[NOTIFY_MAX_PIDS]; /* pids named, read and not yet tried */
  size_t npending, pending_at;
  struct tried tried[TRIED_MEMO]; /* a ring of them, the oldest replaced */
  size_t tried_next;
  unsigned tried_open;        /* entries TRIED_OPEN: resolved at each turn while any */
  struct memcg_mounts mounts; /* the memory cgroup hierarchies' mounts, found once */
  struct exits exits;         /* the ends of processes, by program */
};

static void notify_fired(struct ocgc_watch *w, struct watch_waiter *self, uint32_t events)
{
  (void)self;
  (void)events;
  w->notify_ready = 1;
}

/* all: the ring folders watched by inotify, their descriptor in the set;
 * without inotify (or any folder to watch), the listing alone. */
static void notify_start(struct ocgc_watch *w)
{
  int every = w->o.dir == NULL && ocgc_sees_every_user();
  if (notify_open(w->o.dir, every, &w->notify) != 0) return;
  w->notify_waiter.fired = notify_fired;
  if (wait_set_add(&w->wait, notify_fd(w->notify), &w->notify_waiter) != 0) {
    notify_free(w->notify);
    w->notify = NULL;
  }
}

int ocgc_watch_new(const struct ocgc_watch_opts *opts, struct ocgc_watch **out)
{
  struct ocgc_watch *w;
  int err;
  if (out == NULL) return -EINVAL;
  *out = NULL;
  if ((w = calloc(1, sizeof *w)) == NULL) return -ENOMEM;
  if ((err = opts_read(&w->o, sizeof w->o, opts)) != 0) {
    free(w);
    return err;
  }
  if (w->o.max_processes == 0) w->o.max_processes = OCGC_WATCH_MAX_PROCESSES;
  if (w->o.max_per_user == 0) w->o.max_per_user = OCGC_WATCH_MAX_PER_USER;
  w->st.sz = sizeof w->st;
  watch_wait_init(&w->wait);
  if (w->o.all) notify_start(w);
  *out = w;
  return 0;
}

int ocgc_watch_fd(const struct ocgc_watch *w)
{
  return w != NULL ? w->wait.epfd : -1;
}

int watch_wait_add(struct ocgc_watch *w, int fd, struct watch_waiter *who)
{
  return wait_set_add(&w->wait, fd, who);
}

int watch_wait_del(struct ocgc_watch *w, int fd)
{
  return wait_set_del(&w->wait, fd);
}

static void proc_free(struct proc *p)
{
  exitinfo_close(&p->ex);
  memcg_at_free(&p->cg);
  ocgc_snapshot_free(p->snap);
  ocgc_agg_free(p->agg);
  wflight_free(p->fl);
  ocgc_source_close(p->src);
  free(p);
}

/* [p]'s pidfd became readable: it died (or its thread group leader
 * exited).  Checked at this turn (its liveness read now), and the pidfd
 * taken out of the set: it stays readable, and would wake the caller at
 * every turn while the process is ending. */
static void pidfd_fired(struct ocgc_watch *w, struct watch_waiter *self, uint32_t events)
{
  struct proc *p = (struct proc *)(void *)((char *)self - offsetof(struct proc, pidw));
  (void)events;
  p->next_poll_ns = 0;
  p->alive_ns = 0;
  if (p->pidfd_waited) watch_wait_del(w, watch_pidfd(&p->pub));
  p->pidfd_waited = 0;
}

/* [p]'s pidfd into the set, so that its death is seen at once, not at its
 * next turn (up to OCGC_WATCH_POLL_MAX_NS, or a second for a busy ring). */
static void pidfd_wait(struct ocgc_watch *w, struct proc *p)
{
  int fd = watch_pidfd(&p->pub);
  p->pidw.fired = pidfd_fired;
  p->pidfd_waited = fd >= 0 && watch_wait_add(w, fd, &p->pidw) == 0;
}

/* Follow [src], the ring of [pid] (taken over, closed on failure): 0 or
 * libocgc's error. */
static int proc_add(struct ocgc_watch *w, struct ocgc_source *src, int pid, uint64_t start_ticks,
                    unsigned uid)
{
  struct ocgc_agg_opts go = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct proc *p = calloc(1, sizeof *p);
  int err;
  if (p == NULL) { ocgc_source_close(src); return -ENOMEM; }
  p->ex.pidfd = -1;
  p->cg.mount = -1;
  p->src = src;
  go.start = OCGC_START_OLDEST;
  if (w->o.bounds_ns != NULL) {
    go.no_phases = 1;
    go.bounds_ns = w->o.bounds_ns;
    go.nbounds = w->o.nbounds;
    go.bounds_only = 1;
  }
  if ((err = wflight_new(&w->o, pid, &p->fl)) != 0) {
    proc_free(p);
    return err;
  }
  wflight_agg_opts(p->fl, &go);
  if ((err = ocgc_agg_new(p->src, &go, &p->agg)) != 0 ||
      (p->pub.info.sz = sizeof p->pub.info, err = ocgc_source_info(p->src, &p->pub.info)) != 0) {
    proc_free(p);
    return err;
  }
  p->pub.pid = pid;
  p->pub.start_ticks = start_ticks;
  p->pub.uid = uid;
  p->drain_max = ocgc_source_drain_bound(p->src);
  /* An event is 2 to 3 words, most often (spans and counters). */
  p->ring_events = p->pub.info.ring_words / 3 + 1;
  p->pub.poll_every_ns = OCGC_WATCH_POLL_MIN_NS * 10;
  p->next_poll_ns = 0; /* at once */
  if (p->pub.info.has_ext) snprintf(p->pub.program, sizeof p->pub.program, "%s", p->pub.info.program);
  else ocgc_proc_comm(pid, p->pub.program, sizeof p->pub.program);
  p->pub.counters.sz = sizeof p->pub.counters;
  p->pub.totals.sz = sizeof p->pub.totals;
  p->pub.proc.sz = sizeof p->pub.proc;
  p->pub.exit.code = -1;
  /* Its ring is proved its own: a pidfd on it now tells its end later. */
  exitinfo_open(&p->ex, pid, start_ticks);
  pidfd_wait(w, p);
  memcg_follow(&w->mounts, &p->cg, pid, cm_mono_ns(), &p->pub.memcg);
  p->tally = exits_joined(&w->exits, &p->pub);
  p->next = w->procs;
  w->procs = p;
  w->st.processes++;
  if (w->o.by_program) programs_revive(&w->progs, &p->pub);
  if (w->o.on_added != NULL) w->o.on_added(&p->pub, w->o.ctx);
  return 0;
}

static int watched(const struct ocgc_watch *w, int pid, uint64_t start_ticks)
{
  const struct proc *p;
  for (p = w->procs; p != NULL; p = p->next)
    if (p->pub.pid == pid && p->pub.start_ticks == start_ticks) return 1;
  return 0;
}

/* [pid]'s entry in the memo of the listings (refused_ids), or NULL. */
static const struct ident *memo_of(const struct ocgc_watch *w, int pid, uint64_t start_ticks)
{
  size_t i;
  for (i = 0; i < w->nrefused; i++)
    if (w->refused_ids[i].pid == pid && w->refused_ids[i].start_ticks == start_ticks)
      return &w->refused_ids[i];
  return NULL;
}

/* Remember [pid], so that the next listings do not read its maps and open
 * its ring again, each second, for nothing (thousands of rings over the
 * bounds would make every listing slow): refused for want of room, or
 * [unselected] by opts.select.  Forgotten when a watched process goes
 * (there is room again) and every REFUSED_FORGET_NS (a failing ring may
 * have appeared to take the place of; a process may have exec'd into a
 * program select takes); past REFUSED_MEMO entries, not remembered. */
static void remember(struct ocgc_watch *w, int pid, uint64_t start_ticks, int unselected)
{
  if (w->nrefused == w->refused_cap) {
    size_t cap = w->refused_cap ? w->refused_cap * 2 : 256;
    struct ident *p;
    if (cap > REFUSED_MEMO || (p = realloc(w->refused_ids, cap * sizeof *p)) == NULL) return;
    w->refused_ids = p;
    w->refused_cap = cap;
  }
  w->refused_ids[w->nrefused].pid = pid;
  w->refused_ids[w->nrefused].start_ticks = start_ticks;
  w->refused_ids[w->nrefused].unselected = unselected;
  w->nrefused++;
}

/* Remember that [pid] (started at [start_ticks]; 0: gone) was tried, or
 * let go, at [now]: another name of it soon after costs nothing. */
static void tried_add(struct ocgc_watch *w, int pid, uint64_t start_ticks, int state,
                      uint64_t now)
{
  struct tried *t = &w->tried[w->tried_next];
  size_t i;
  /* Let go: it was watched, so a name that failed to open it earlier
   * was no miss. */
  for (i = 0; state == TRIED_LET_GO && w->tried_open > 0 && i < TRIED_MEMO; i++)
    if (w->tried[i].state == TRIED_OPEN && w->tried[i].pid == pid &&
        w->tried[i].start_ticks == start_ticks) {
      w->tried[i].state = TRIED_FAILED;
      w->tried_open--;
    }
  w->tried_next = (w->tried_next + 1) % TRIED_MEMO;
  /* One still open pushed out by 1,024 newer: not counted, as not known. */
  if (t->state == TRIED_OPEN && t->pid != 0) w->tried_open--;
  t->pid = pid;
  t->state = state;
  t->start_ticks = start_ticks;
  t->at_ns = now;
  if (state == TRIED_OPEN) w->tried_open++;
}

/* Whether [pid] (of [start_ticks]; any when [any]) was tried lately. */
static int tried_lately(const struct ocgc_watch *w, int pid, uint64_t start_ticks, int any,
                        uint64_t now)
{
  size_t i;
  for (i = 0; i < TRIED_MEMO; i++) {
    const struct tried *t = &w->tried[i];
    if (t->pid == pid && (any || t->start_ticks == start_ticks) &&
        (t->state == TRIED_LET_GO || now - t->at_ns < TRIED_FORGET_NS))
      return 1;
  }
  return 0;
}

/* [pid] (started at [start_ticks]) did not open at [now]: its ring is of
 * an OCaml newer than every numbering known.  Remembered as tried (a name
 * of it costs no open for a while); told once, the first time, with the
 * version its executable says (read again: the source that read it is
 * closed), at most UNKNOWN_SAID_PER_S a second (a flood of such processes
 * pushing each other out of the memo fills no log; those past it are told
 * at a later meeting). */
static void unknown_met(struct ocgc_watch *w, int pid, uint64_t start_ticks, uint64_t now)
{
  char version[16];
  size_t i;
  for (i = 0; i < TRIED_MEMO; i++) {
    struct tried *t = &w->tried[i];
    if (t->state == TRIED_UNKNOWN && t->pid == pid && t->start_ticks == start_ticks) {
      t->at_ns = now; /* told already; its place in the ring kept */
      return;
    }
  }
  if (now - w->unknown_said_ns >= 1000000000u) {
    w->unknown_said_ns = now;
    w->unknown_said = 0;
  }
  /* Past the second's calls: tried, not told (told when met again). */
  if (w->o.on_unknown_release == NULL || w->unknown_said >= UNKNOWN_SAID_PER_S) {
    tried_add(w, pid, start_ticks, TRIED_FAILED, now);
    return;
  }
  tried_add(w, pid, start_ticks, TRIED_UNKNOWN, now);
  w->unknown_said++;
  if (start_ticks == 0 || ocgc_exe_version_pid(pid, start_ticks, version, sizeof version) != 0)
    version[0] = '\0';
  version[sizeof version - 1] = '\0';
  w->o.on_unknown_release(pid, version, w->o.ctx);
}

static void notify_between(struct ocgc_watch *w);

/* ocgc_list_opts's skip: a process watched already, refused or not
 * selected lately, or (only_uid) another user's, costs no maps read. */
static int skip_known(int pid, uint64_t start_time, void *ctx)
{
  struct ocgc_watch *w = ctx;
  const struct ident *m;
  notify_between(w);
  if (watched(w, pid, start_time)) return 1;
  if (w->o.only_uid && ocgc_proc_uid(pid) != w->o.uid) return 1;
  if ((m = memo_of(w, pid, start_time)) == NULL) return 0;
  if (!m->unselected) w->listing_refused++;
  return 1;
}

/* One ring's drain, within its read budget: 0 or the poll's error. */
static int proc_read(struct proc *p)
{
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  struct ocgc_drain_result r = OCGC_OPTS_INIT(struct ocgc_drain_result);
  int err;
  d.max_events = p->drain_max; /* not read again at each drain */
  d.deadline_ns = cm_mono_ns() + RING_BUDGET_NS;
  err = ocgc_agg_drain(p->agg, &d, &r);
  p->stuck = r.stuck;
  return err;
}

static void proc_figures(struct ocgc_watch *w, struct proc *p);
static void memcg_alive(struct ocgc_watch *w, struct proc *p, uint64_t now);

/* Take [p] out of the list at [pp], and free it; by_program or with
 * on_gone, read once more first (an exit's last collections are in the
 * totals it left). */
static void proc_remove(struct ocgc_watch *w, struct proc **pp, struct proc *p)
{
  /* Also one never refreshed yet (no snap): a process found by a
   * notification may live and end between two scrapes, and its figures
   * are all in this last read. */
  if (w->o.on_gone != NULL || w->o.by_program || p->fl != NULL) {
    if (p->backoff_ns == 0 || p->snap == NULL) {
      (void)proc_read(p);
      proc_figures(w, p);
    }
    if (w->o.by_program) programs_retire(&w->progs, &p->pub);
  }
  if (p->pub.exit.gone_ns != 0) {
    /* An OOM kill counted between its cgroup's last read alive and the
     * read at its death (proc_gone), with a SIGKILL, was its own. */
    if (p->pub.exit.known && p->pub.exit.how == OCGC_EXIT_KILLED &&
        p->pub.exit.signal == SIGKILL && memcg_oom_grew(&p->cg)) {
      p->pub.exit.how = OCGC_EXIT_OOM;
      p->pub.exit.oom_killed = 1;
    }
  }
  exits_left(p->tally, &p->pub.exit);
  /* A name of it that comes late (a ring kept at exit) is not a new one. */
  tried_add(w, p->pub.pid, p->pub.start_ticks, TRIED_LET_GO, cm_mono_ns());
  /* Its last events read: a death is recorded with them. */
  wflight_gone(p->fl, &w->o, &p->pub, p->src);
  /* Every process told added is told gone, read whole or not. */
  if (w->o.on_gone != NULL) w->o.on_gone(&p->pub, w->o.ctx);
  *pp = p->next;
  w->st.processes--;
  if (p->pidfd_waited) watch_wait_del(w, watch_pidfd(&p->pub));
  proc_free(p);
  w->dropped = 1;
}

/* Room for one more process of [uid]: 0, after letting go of a watched
 * ring that keeps failing (of [uid] when its quota is the bound) if need
 * be, or -1 (the bounds are met by rings that read). */
static int make_room(struct ocgc_watch *w, unsigned uid)
{
  struct proc **pp, **victim = NULL, **victim_any = NULL;
  size_t mine = 0;
  for (pp = &w->procs; *pp != NULL; pp = &(*pp)->next) {
    if ((*pp)->pub.uid == uid) mine++;
    if (!FAILING(*pp)) continue;
    if (victim_any == NULL) victim_any = pp;
    if (victim == NULL && (*pp)->pub.uid == uid) victim = pp;
  }
  if (mine >= w->o.max_per_user) {
    if (victim == NULL) return -1;
  } else if (w->st.processes >= w->o.max_processes) {
    if ((victim = victim_any) == NULL) return -1;
  } else {
    return 0;
  }
  proc_remove(w, victim, *victim);
  w->st.evicted++;
  return 0;
}

/* Follow [pid], started at [start_ticks], across its execs: 0, or
 * -ENOMEM. */
static int pin(struct ocgc_watch *w, int pid, uint64_t start_ticks)
{
  size_t i;
  for (i = 0; i < w->npins; i++)
    if (w->pins[i].pid == pid && w->pins[i].start_ticks == start_ticks) return 0;
  if (w->npins == w->pins_cap) {
    size_t cap = w->pins_cap ? w->pins_cap * 2 : 16;
    struct pin *p;
    if (cap > OCGC_WATCH_MAX_PROCESSES || (p = realloc(w->pins, cap * sizeof *p)) == NULL)
      return -ENOMEM;
    w->pins = p;
    w->pins_cap = cap;
  }
  w->pins[w->npins].pid = pid;
  w->pins[w->npins].start_ticks = start_ticks;
  w->npins++;
  return 0;
}

int ocgc_watch_add_pid(struct ocgc_watch *w, int pid)
{
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_proc_ident id;
  struct ocgc_source *src;
  int err;
  if (w == NULL || pid <= 0) return -EINVAL;
  ao.dir = w->o.dir;
  if ((err = ocgc_source_open_pid(pid, &ao, &src)) != 0) return err;
  if (ocgc_proc_ident(pid, &id) != 0) id.start_time = 0;
  if (watched(w, pid, id.start_time)) { ocgc_source_close(src); return 0; } /* given twice */
  /* Without its start time it cannot be told from a reuse of its pid: not
   * followed past its ring. */
  if (id.start_time != 0 && (err = pin(w, pid, id.start_time)) != 0) {
    ocgc_source_close(src);
    return err;
  }
  return proc_add(w, src, pid, id.start_time, ocgc_proc_uid(pid));
}

/* The processes named that are not watched now (their ring went with an
 * exec, or is not made yet), looked for at most once a second: a new ring
 * of the same process (pid and start time: an exec keeps both) is watched
 * as a new entry, under its new program's name; a process that is gone
 * (or whose pid is another's now) is forgotten. */
static void follow_due(struct ocgc_watch *w, uint64_t now)
{
  size_t i = 0;
  if (w->npins == 0 || (w->followed_ns != 0 && now - w->followed_ns < LIST_EVERY_NS)) return;
  w->followed_ns = now;
  while (i < w->npins) {
    struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
    struct ocgc_proc_ident id;
    struct ocgc_source *src;
    const struct pin *n = &w->pins[i];
    if (watched(w, n->pid, n->start_ticks)) { i++; continue; }
    if (ocgc_proc_ident(n->pid, &id) != 0 || id.start_time != n->start_ticks) {
      w->pins[i] = w->pins[--w->npins];
      continue;
    }
    ao.dir = w->o.dir;
    /* Not there yet (the new image's runtime makes its ring as it starts),
     * or not an OCaml program: asked again in a second. */
    if (ocgc_source_open_pid(n->pid, &ao, &src) == 0 &&
        proc_add(w, src, n->pid, n->start_ticks, ocgc_proc_uid(n->pid)) != 0)
      w->st.errors++;
    i++;
  }
}

/* The rules every process found (by a listing or a notification) meets
 * before it is watched, [program] its name (its own bytes, at most 127),
 * [src] its ring if it is open already (taken over), else opened here,
 * once: selected (one that is not is not looked at again for a while),
 * opened (one that does not open is counted, not remembered: it may be a
 * ring being made, which the next listing opens), room within the bounds
 * (opened first: only a ring that opens as valid takes a failing one's
 * place).  0: watched; else not (counted). */
static int admit(struct ocgc_watch *w, int pid, uint64_t start_ticks, const char *program,
                 struct ocgc_source *src)
{
  unsigned uid;
  int err;
  if (w->o.select != NULL && !w->o.select(program, w->o.ctx)) {
    ocgc_source_close(src);
    remember(w, pid, start_ticks, 1);
    return -1;
  }
  /* One attempt: a ring not whole yet is the next listing's, and no
   * process makes a turn wait. */
  if (src == NULL && (err = attach_open_pid_once(pid, w->o.dir, &src)) != 0) {
    w->st.errors++;
    w->listing_refused++;
    if (err == OCGC_E_IDS_UNKNOWN) {
      w->listing_unknown++;
      unknown_met(w, pid, start_ticks, cm_mono_ns());
    }
    return -1;
  }
  uid = ocgc_proc_uid(pid);
  if (make_room(w, uid) != 0) {
    ocgc_source_close(src);
    w->listing_refused++;
    remember(w, pid, start_ticks, 0);
    return -1;
  }
  if (proc_add(w, src, pid, start_ticks, uid) != 0) {
    w->st.errors++;
    w->listing_refused++;
    return -1;
  }
  return 0;
}

static int list_one(const struct ocgc_list_entry *e, void *ctx)
{
  struct ocgc_watch *w = ctx;
  if (e->state != OCGC_LIST_RUNNING || watched(w, e->pid, e->start_time)) return 0;
  /* A name of the target's choosing, given as it is (at most 128 bytes). */
  (void)admit(w, e->pid, e->start_time, e->program, NULL);
  return 0;
}

/* Whether a process of [pid] is watched (whatever its start time). */
static int watched_pid(const struct ocgc_watch *w, int pid)
{
  const struct proc *p;
  for (p = w->procs; p != NULL; p = p->next)
    if (p->pub.pid == pid) return 1;
  return 0;
}

/* Whether [pid], started at [start_ticks], is gone (or is another
 * process now). */
static int gone_since(int pid, uint64_t start_ticks)
{
  struct ocgc_proc_ident id;
  return ocgc_proc_ident(pid, &id) != 0 || id.start_time != start_ticks;
}

/* A ring folder's new entry named [pid]: its ring opened at once, by its
 * pid (ocgc_source_open_pid's proof that it is that process's; the entry
 * itself is never opened), one attempt, and admitted as a listed one
 * would be.  A process watched, refused, not selected or tried lately
 * costs one read of /proc/PID/stat and no open.  One gone before its ring
 * could be opened is counted missed, once. */
static void notified_one(struct ocgc_watch *w, int pid, uint64_t now)
{
  struct ocgc_proc_ident id;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_source *src;
  char program[sizeof info.program > 128 ? sizeof info.program : 128];
  int err;
  if (ocgc_proc_ident(pid, &id) != 0) {
    /* Gone already (or a zombie): ours going, or a ring never read. */
    if (watched_pid(w, pid) || tried_lately(w, pid, 0, 1, now)) return;
    w->st.missed++;
    tried_add(w, pid, 0, TRIED_FAILED, now);
    return;
  }
  if (watched(w, pid, id.start_time) || memo_of(w, pid, id.start_time) != NULL ||
      tried_lately(w, pid, id.start_time, 0, now))
    return;
  if (w->o.only_uid && ocgc_proc_uid(pid) != w->o.uid) return;
  if ((err = attach_open_pid_once(pid, w->o.dir, &src)) != 0) {
    /* Gone meanwhile: missed.  Alive, its ring in its exit or not
     * findable yet: missed only once it is gone and no listing watched
     * it (tried_resolve; counted here, a loaded machine counted a
     * process missed that the next listing served).  A ring not yet whole
     * (a stock file named as it is made) is the listing's; one we may not
     * read is not ours to count. */
    int gone = err == -ESRCH || gone_since(pid, id.start_time);
    if (gone) w->st.missed++;
    /* Counted by the next listing (unknown_release), told now. */
    if (err == OCGC_E_IDS_UNKNOWN && !gone) {
      unknown_met(w, pid, id.start_time, now);
      return;
    }
    tried_add(w, pid, id.start_time,
              !gone && (err == OCGC_E_STALE || err == OCGC_E_NORING) ? TRIED_OPEN : TRIED_FAILED,
              now);
    return;
  }
  if (ocgc_source_info(src, &info) == 0 && info.has_ext) {
    memcpy(program, info.program, sizeof info.program);
    program[sizeof info.program - 1] = '\0';
  } else {
    ocgc_proc_comm(pid, program, sizeof program);
  }
  if (admit(w, pid, id.start_time, program, src) == 0) w->st.notified++;
}

/* all: the pids the ring folders' new entries named, each tried now;
 * those left when yield asks go at the next turn (before more are
 * read).  An overflow of the kernel's queue makes the listing come at
 * once. */
/* The processes tried while alive and not opened (TRIED_OPEN): watched by
 * now (a listing found them), nothing; gone unwatched, missed. */
static void tried_resolve(struct ocgc_watch *w)
{
  size_t i;
  for (i = 0; i < TRIED_MEMO && w->tried_open > 0; i++) {
    struct tried *t = &w->tried[i];
    if (t->state != TRIED_OPEN) continue;
    if (watched(w, t->pid, t->start_ticks)) {
      t->state = TRIED_FAILED;
    } else if (gone_since(t->pid, t->start_ticks)) {
      w->st.missed++;
      t->state = TRIED_FAILED;
    } else {
      continue;
    }
    w->tried_open--;
  }
}

static void notify_due(struct ocgc_watch *w, uint64_t now)
{
  if (w->notify == NULL) return;
  if (w->tried_open > 0) tried_resolve(w);
  if (w->pending_at == w->npending && w->notify_ready) {
    int overflow = 0;
    w->notify_ready = 0;
    w->npending = notify_read(w->notify, w->pending, &overflow);
    w->pending_at = 0;
    if (overflow) w->list_soon = 1;
  }
  while (w->pending_at < w->npending) {
    if (w->o.yield != NULL && w->o.yield(w->o.ctx)) return;
    notified_one(w, w->pending[w->pending_at++], now);
  }
}

/* A read of [p]'s ring failed with [err]: counted, and told once per
 * process (an agent must not fill its log with one line per poll of a
 * ring that stays corrupt). */
static void proc_error(struct ocgc_watch *w, struct proc *p, int err)
{
  w->st.errors++;
  p->fails++;
  if (p->said_error) return;
  p->said_error = 1;
  if (w->o.on_error != NULL) w->o.on_error(&p->pub, err, w->o.ctx);
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
static void proc_drain(struct ocgc_watch *w, struct proc *p, uint64_t now)
{
  struct ocgc_cursor_stats a = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_cursor_stats b = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t n, every = p->pub.poll_every_ns;
  int err;
  ocgc_agg_cursor_stats(p->agg, &a);
  if ((err = proc_read(p)) != 0) proc_error(w, p, err);
  else p->fails = 0;
  ocgc_agg_cursor_stats(p->agg, &b);
  w->st.polls++;
  n = passed(&b) - passed(&a);
  p->passed = passed(&b);
  if (b.lost > a.lost || n > p->ring_events / 2) every /= 4;
  else if (n > p->ring_events / 4) every /= 2;
  else if (n < p->ring_events / 16) every *= 2;
  if (every < OCGC_WATCH_POLL_MIN_NS) every = OCGC_WATCH_POLL_MIN_NS;
  if (every > OCGC_WATCH_POLL_MAX_NS) every = OCGC_WATCH_POLL_MAX_NS;
  p->pub.poll_every_ns = every;
  p->next_poll_ns = now + every;
}

/* [p]'s read that began at [t0] ended at [now]: a slow one, or one whose
 * drain was stuck (a seqlock held for the whole budget), makes it stale
 * and backs it off (its last values kept meanwhile) once SLOW_READS reads
 * in a row were so; one in time clears that.  The time of a read of
 * target memory is the one thing a target cannot lie about to us. */
static void proc_timed(struct proc *p, uint64_t t0, uint64_t now)
{
  if (now - t0 <= OCGC_WATCH_SLOW_NS && !p->stuck) {
    p->backoff_ns = 0;
    p->slow_reads = 0;
    return;
  }
  /* A producer preempted in the middle of an update, or one that lies now
   * and then, is slow once; one that stays so is left alone. */
  if (++p->slow_reads < SLOW_READS) return;
  p->pub.stale = 1;
  p->backoff_ns = p->backoff_ns == 0 ? BACKOFF_MIN_NS : p->backoff_ns * 2;
  if (p->backoff_ns > BACKOFF_MAX_NS) p->backoff_ns = BACKOFF_MAX_NS;
  p->retry_ns = now + p->backoff_ns;
  if (p->next_poll_ns < p->retry_ns) p->next_poll_ns = p->retry_ns;
}

/* [p], at [pp], is gone: out of the list, and its slot free for another. */
static void proc_drop(struct ocgc_watch *w, struct proc **pp, struct proc *p)
{
  proc_remove(w, pp, p);
  w->slot_freed = 1;
}

/* [p], at [pp], was seen gone at [now]: out of the set once the kernel
 * says how it ended (or that it lives on: an exec dropped its ring), else
 * kept, ending, and asked again soon (exitinfo.c; never waited for).
 * Returns 1 if it left. */
static int proc_gone(struct ocgc_watch *w, struct proc **pp, struct proc *p, uint64_t now)
{
  struct ocgc_source_info in = OCGC_OPTS_INIT(struct ocgc_source_info);
  int mark = p->pub.info.has_ext && ocgc_source_info(p->src, &in) == 0 &&
             in.state == OCGC_STATE_EXITED;
  /* Its cgroup read at once, before whoever made it may remove it (a
   * service manager does as its last process dies): its death's figures. */
  if (p->ex.ending_ns == 0) memcg_update(&w->mounts, &p->cg, &p->pub.memcg, 0, now);
  if (exitinfo_settle(&p->ex, p->pub.pid, p->pub.start_ticks, p->pub.uid, mark, now,
                      &p->pub.exit) == EXITINFO_ENDING) {
    p->next_poll_ns = now + EXITINFO_POLL_NS;
    return 0;
  }
  proc_drop(w, pp, p);
  return 1;
}

/* After processes went: give the memory they held back to the system
 * (glibc keeps freed blocks in its arenas; a burst of hundreds of
 * processes would otherwise leave the agent at its peak for good). */
static void give_back(struct ocgc_watch *w)
{
  if (!w->dropped) return;
  w->dropped = 0;
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

/* ocgc_list_opts's denied: a process whose maps we may not read.  Whether
 * it has a ring cannot be told from here (its maps, descriptors and ring
 * folder are closed to us); it counts as unreadable when its ring shows in
 * the folder of opts.dir, and only then: every other user's process is
 * not an OCaml program we miss. */
static void denied_one(int pid, uint64_t start_time, void *ctx)
{
  struct ocgc_watch *w = ctx;
  char path[4096];
  struct stat st;
  (void)start_time;
  if (w->o.dir == NULL ||
      snprintf(path, sizeof path, "%s/%d" OCGC_DIR_EVENTS_SUFFIX, w->o.dir, pid) >= (int)sizeof path)
    return;
  if (lstat(path, &st) == 0) w->listing_unreadable++;
}

/* all: look for new processes, once a second (or sooner after inotify
 * lost events): what notifications cannot tell (rings found in the maps
 * of processes whose folder is not watched: another namespace's, stock
 * OCaml 5 rings outside --dir, folders past the watches' bound; rings
 * being made when they were named). */
static void list_due(struct ocgc_watch *w, uint64_t now)
{
  struct ocgc_list_opts lo = OCGC_OPTS_INIT(struct ocgc_list_opts);
  struct ocgc_list_stats st = OCGC_OPTS_INIT(struct ocgc_list_stats);
  uint64_t every = w->list_soon ? LIST_SOON_NS : LIST_EVERY_NS;
  if (!w->o.all || (w->listed_ns != 0 && now - w->listed_ns < every)) return;
  w->list_soon = 0;
  lo.skip = skip_known;
  lo.denied = denied_one;
  w->listing_refused = 0;
  w->listing_unreadable = 0;
  w->listing_unknown = 0;
  if (w->slot_freed || now - w->refused_since_ns >= REFUSED_FORGET_NS) {
    w->nrefused = 0;
    w->refused_since_ns = now;
    w->slot_freed = 0;
  }
  if (ocgc_list_opts(&lo, list_one, w, &st) < 0) w->st.errors++;
  else {
    w->st.unreadable = w->listing_unreadable;
    w->st.refused = w->listing_refused;
    w->st.unknown_release = w->listing_unknown;
  }
  w->listed_ns = now;
}

/* The set's descriptors asked, and what the folders named opened. */
static void notify_now(struct ocgc_watch *w, uint64_t now)
{
  w->notify_ns = now;
  (void)wait_set_fired(&w->wait, w);
  notify_due(w, now);
}

/* Within a listing (each process's maps read: tens of milliseconds on a
 * busy host), the folders' news every NOTIFY_BETWEEN_NS, so that a
 * process that lives less than a listing is opened while it lives.  (The
 * listing walks /proc, not the set: what this adds or evicts cannot pull
 * an entry from under it.) */
static void notify_between(struct ocgc_watch *w)
{
  uint64_t now;
  if (w->notify == NULL) return;
  now = cm_mono_ns();
  if (now - w->notify_ns >= NOTIFY_BETWEEN_NS) notify_now(w, now);
}

/* New processes: what the descriptors of the set say first (a ring
 * folder's new entries), then the listing and the named processes when
 * their time has come. */
static void discover(struct ocgc_watch *w, uint64_t now)
{
  notify_now(w, now);
  list_due(w, now);
  follow_due(w, now);
}

uint64_t ocgc_watch_poll(struct ocgc_watch *w, uint64_t now)
{
  struct proc **pp = &w->procs;
  uint64_t next = now + OCGC_WATCH_POLL_MAX_NS;
  discover(w, now);
  /* Pids named and not tried yet (yield came first): at once. */
  if (w->pending_at < w->npending) next = now;
  while (*pp != NULL) {
    struct proc *p = *pp;
    if (w->o.yield != NULL && w->o.yield(w->o.ctx)) return now;
    if (p->ex.ending_ns != 0) {
      /* Ending: only its end is asked for. */
      if (p->next_poll_ns <= now && proc_gone(w, pp, p, now)) continue;
    } else if (p->next_poll_ns <= now) {
      uint64_t before = p->passed, t0 = cm_mono_ns();
      int check;
      proc_drain(w, p, now);
      /* A ring that moved was written by its live process (no other
       * writes it): /proc is read only for one that stood still, or once
       * a second; a refresh always reads it. */
      check = p->passed == before || now - p->alive_ns >= ALIVE_EVERY_NS;
      if (check && ocgc_source_gone(p->src)) {
        if (proc_gone(w, pp, p, now)) continue; /* else ending: asked again soon */
      } else {
        if (check) p->alive_ns = now;
        proc_timed(p, t0, cm_mono_ns());
        /* the memory trigger asks its cgroup once a second, not at scrapes */
        if (w->o.flight_memcg_pct != 0 && wflight_sample_due(p->fl, now))
          memcg_alive(w, p, now);
        wflight_turn(p->fl, &w->o, &p->pub, p->src, now);
      }
    }
    if (p->next_poll_ns < next) next = p->next_poll_ns;
    pp = &p->next;
  }
  give_back(w);
  return next;
}

/* *now, or [before] if that is more: what a counter shows. */
static void no_less(uint64_t *now, uint64_t before)
{
  if (*now < before) *now = before;
}

/* The counters of the new snapshot, each monotone count of the table
 * (OCGC_COUNTER_FIELDS) never less than before: an honest producer's only
 * grow, and a lying one must not make a reader see a counter reset (and a
 * rate out of nothing).  Gauges, times and flags are the snapshot's. */
static void read_counters(struct proc *p, int first)
{
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters), *o = &p->pub.counters;
  struct ocgc_cursor_stats cs = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  ocgc_snapshot_counters(p->snap, &c);
  /* Loss counts from the watch's coming: what a busy ring's writer
   * overwrote of its oldest events while the first reads caught up was
   * written before, and no reader that came then could have had it. */
  ocgc_agg_cursor_stats(p->agg, &cs);
  c.events_lost = c.events_lost > cs.lost_before ? c.events_lost - cs.lost_before : 0;
  if (!first) counters_each(OCGC_COUNTER_MONOTONE, &c, o, no_less);
  *o = c;
}

/* The totals' cause table read, each cell never less than before (as
 * read_counters). */
static void read_totals(struct proc *p, struct ocgc_totals *t)
{
  unsigned k, c;
  if (p->pub.have_totals)
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      for (c = 0; c < OCGC_CAUSE_SLOTS; c++)
        no_less(&t->by_cause[k][c], p->pub.totals.by_cause[k][c]);
  p->pub.totals = *t;
  p->pub.have_totals = 1;
}

/* The events written into [p]'s rings (ocgc files), summed: kept from the
 * last read of every ring, and never less than before. */
static void read_written(struct proc *p)
{
  uint64_t sum = 0, v;
  unsigned r;
  if (!p->pub.info.has_ext) return;
  for (r = 0; r < p->pub.info.max_domains; r++) {
    if (ocgc_source_written(p->src, r, &v) != 0) return;
    sum += v;
  }
  if (!p->pub.have_written || sum > p->pub.written) p->pub.written = sum;
  p->pub.have_written = 1;
}

/* The profile's figures, its counts never less than before (as
 * read_counters); a ring without a profile has none. */
static void read_memprof(struct proc *p)
{
  struct ocgc_memprof_summary m = OCGC_OPTS_INIT(struct ocgc_memprof_summary);
  if (!p->pub.info.has_ext || ocgc_memprof_summary(p->src, &m) != 0) return;
  if (p->pub.have_memprof) {
    const struct ocgc_memprof_summary *o = &p->pub.memprof;
    no_less(&m.samples, o->samples);
    no_less(&m.words, o->words);
    no_less(&m.overflow_samples, o->overflow_samples);
    no_less(&m.cut_samples, o->cut_samples);
    no_less(&m.unfollowed, o->unfollowed);
    no_less(&m.rate_changes, o->rate_changes);
  }
  p->pub.memprof = m;
  p->pub.have_memprof = 1;
}

/* Snapshot [p] and read what its ring says besides (a snapshot that fails
 * leaves the last one, or none before its first). */
/* Its cgroup read while it lives: the figures, and the OOM-kill counts as
 * the base its death's read compares with (memcg_oom_grew), unless after
 * the read it is dead or has a SIGKILL queued.  The OOM killer queues its
 * SIGKILL before it counts the kill, so counts read before a look that
 * finds none cannot hold this process's own kill; counts read after it
 * would hide the kill from its death's read (on a loaded machine a scrape
 * fell between an OOM kill and the death seen, and the end was told as a
 * plain SIGKILL).  Only a read that moved the base costs the look. */
static void memcg_alive(struct ocgc_watch *w, struct proc *p, uint64_t now)
{
  struct memcg_at was = p->cg;
  memcg_update(&w->mounts, &p->cg, &p->pub.memcg, 1, now);
  if (memcg_base_moved(&p->cg, &was) && ocgc_proc_unkilled(p->pub.pid) != 1)
    memcg_base_keep(&p->cg, &was);
}

static void proc_figures(struct ocgc_watch *w, struct proc *p)
{
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  int first = p->snap == NULL;
  /* In place: no allocation at each refresh once the histograms exist. */
  if (ocgc_agg_snapshot_update(p->agg, &p->snap) == 0) read_counters(p, first);
  else w->st.errors++;
  p->pub.snap = p->snap;
  if (ocgc_source_totals(p->src, &t) == 0) read_totals(p, &t);
  p->pub.config.sz = sizeof p->pub.config;
  p->pub.have_config = ocgc_source_gc_config(p->src, &p->pub.config) == 0;
  read_written(p);
  read_memprof(p);
  /* Alive: its OOM-kill count read now is what a death compares with. */
  if (p->ex.ending_ns == 0) memcg_alive(w, p, cm_mono_ns());
}

/* Drain, snapshot and read one process: 0, or -1 if it is gone. */
static int proc_refresh(struct ocgc_watch *w, struct proc *p, uint64_t now)
{
  proc_drain(w, p, now);
  if (ocgc_source_gone(p->src) || ocgc_process_figures(p->pub.pid, &p->pub.proc) != 0) return -1;
  proc_figures(w, p);
  return 0;
}

/* by_program: the programs' sums from the set as refreshed, each process
 * handed down in the set's order (programs.c reads no watch). */
static void count_programs(struct ocgc_watch *w)
{
  const struct proc *p;
  programs_begin(&w->progs);
  for (p = w->procs; p != NULL; p = p->next) programs_count(&w->progs, &p->pub);
  programs_end(&w->progs);
}

void ocgc_watch_refresh(struct ocgc_watch *w, uint64_t deadline)
{
  struct proc **pp = &w->procs;
  uint64_t t0 = cm_mono_ns(), now = t0, stale = 0;
  discover(w, t0);
  while (*pp != NULL) {
    struct proc *p = *pp;
    now = cm_mono_ns();
    if (p->ex.ending_ns != 0) { /* its last figures stand */
      if (proc_gone(w, pp, p, now)) continue;
      pp = &p->next;
      continue;
    }
    if (now >= deadline || (p->backoff_ns != 0 && p->snap != NULL)) {
      /* Out of time, or slow: its last figures, marked so.  A slow ring is
       * read again by the poll turns only (once its backoff ends), never
       * while a refresh waits, but until it has figures (each read
       * bounded); a read in time brings it back here. */
      p->pub.stale = 1;
      stale++;
      pp = &p->next;
      continue;
    }
    p->pub.stale = 0;
    if (proc_refresh(w, p, t0) != 0) {
      if (proc_gone(w, pp, p, cm_mono_ns())) continue;
      pp = &p->next;
      continue;
    }
    proc_timed(p, now, cm_mono_ns());
    stale += p->pub.stale != 0;
    pp = &p->next;
  }
  w->st.stale = stale;
  if (w->o.by_program) count_programs(w);
  give_back(w);
  w->st.refresh_ns = cm_mono_ns() - t0;
}

const struct ocgc_watched *ocgc_watch_next(const struct ocgc_watch *w,
                                           const struct ocgc_watched *prev)
{
  if (w == NULL) return NULL;
  if (prev == NULL) return w->procs != NULL ? &w->procs->pub : NULL;
  /* pub is the first member of struct proc: prev is its proc. */
  {
    const struct proc *p = (const struct proc *)(const void *)prev;
    return p->next != NULL ? &p->next->pub : NULL;
  }
}

int watch_pidfd(const struct ocgc_watched *w)
{
  /* pub is the first member of struct proc: w is its proc. */
  return ((const struct proc *)(const void *)w)->ex.pidfd;
}

const struct exits *watch_exits(const struct ocgc_watch *w)
{
  return &w->exits;
}

const struct programs *watch_programs(const struct ocgc_watch *w)
{
  return w->o.by_program ? &w->progs : NULL;
}

int ocgc_watch_record(struct ocgc_watch *w, int pid, char *name, size_t n)
{
  struct proc *p;
  if (w == NULL || pid <= 0) return -EINVAL;
  if (w->o.flight_dir == NULL) return -ENOENT;
  for (p = w->procs; p != NULL; p = p->next)
    if (p->pub.pid == pid) break;
  if (p == NULL) return -ESRCH;
  /* Its newest events first (a backed-off ring is recorded as it is: its
   * read is what was slow). */
  if (p->backoff_ns == 0) (void)proc_read(p);
  return wflight_record(p->fl, &w->o, &p->pub, p->src, OCGC_FLIGHT_DEMAND, "asked", name, n);
}

int ocgc_watch_stats(const struct ocgc_watch *w, struct ocgc_watch_stats *out)
{
  if (w == NULL) return -EINVAL;
  return opts_write(out, &w->st, sizeof w->st);
}

void ocgc_watch_free(struct ocgc_watch *w)
{
  if (w == NULL) return;
  while (w->procs != NULL) {
    struct proc *p = w->procs;
    w->procs = p->next;
    proc_free(p);
  }
  programs_free(&w->progs);
  notify_free(w->notify);
  watch_wait_free(&w->wait);
  exits_free(&w->exits);
  memcg_mounts_free(&w->mounts);
  free(w->pins);
  free(w->refused_ids);
  free(w);
}
