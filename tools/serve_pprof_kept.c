/* serve_pprof_kept.c - the processes `ocgc serve` follows for merged
 * profiles (/debug/pprof/allocs?program=NAME): each living process of a
 * program asked for, and each such process gone, kept a while, so that a
 * profile of the program counts a process that exited (a restart, a
 * worker recycled) for what it allocated.
 *
 * What it owns: the list p->kept.  A process is followed from the first
 * request for its program: its ring opened (struct ocgc_source, held: the
 * ring stays mapped by serve, so that its last copy can still be read
 * once the process is gone and its /proc entries with it), its ids for
 * the access rule read then (serve_pprof_creds_of), its frames named at
 * each merge (struct ocgc_frame_names, kept apart from the symbolizer).
 * When the poll thread's list no longer holds it (every SERVE_MEMBERS_NS),
 * or its ring is no longer its (an exec), the worker reads its last copy
 * and marks it gone.
 *
 * Invariants:
 * - the list's identity fields (pid, start, program, creds, gone_ns) are
 *   written under p->lock (submit reads them there); the source, the
 *   copies and the names are the worker's alone, read and written with
 *   no lock held (this file runs in the worker);
 * - bounded: at most PPROF_KEPT_MAX processes, gone ones kept
 *   PPROF_KEEP_NS, a program not asked for PPROF_FOLLOW_NS not followed;
 *   the gone copies and every names table together at most
 *   PPROF_KEPT_BYTES (past it the oldest gone go first, and no living
 *   one's names grow); so serve holds at most 32 MiB for this, whatever
 *   the programs do. */

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "serve.h"

static uint64_t copy_bytes(const struct ocgc_memprof *m)
{
  return m == NULL ? 0 : sizeof *m + m->nstacks * sizeof *m->stack;
}

uint64_t serve_pprof_kept_bytes(const struct serve_pprof *p)
{
  const struct pprof_kept *k;
  uint64_t n = 0;
  for (k = p->kept; k != NULL; k = k->next) n += copy_bytes(k->last) + ocgc_frame_names_memory(k->names);
  return n;
}

static void kept_free(struct pprof_kept *k)
{
  ocgc_source_close(k->src);
  ocgc_memprof_free(k->last);
  ocgc_frame_names_free(k->names);
  free(k);
}

/* Take [k] off the list and free it (the lock held). */
static void unlink_kept(struct serve_pprof *p, struct pprof_kept *k)
{
  struct pprof_kept **pp;
  for (pp = &p->kept; *pp != NULL; pp = &(*pp)->next)
    if (*pp == k) {
      *pp = k->next;
      p->nkept--;
      kept_free(k);
      return;
    }
}

/* Drop the oldest gone process (the lock held): 1, or 0 if none is. */
static int drop_oldest_gone(struct serve_pprof *p)
{
  struct pprof_kept *k, *old = NULL;
  for (k = p->kept; k != NULL; k = k->next)
    if (k->gone_ns != 0 && (old == NULL || k->gone_ns < old->gone_ns)) old = k;
  if (old == NULL) return 0;
  unlink_kept(p, old);
  return 1;
}

void serve_pprof_follow(struct serve_pprof *p, const char *program, uint64_t now,
                        uint64_t asked_ns)
{
  struct serve_pprof_member want[PPROF_PROG_PROCS];
  size_t n = 0, i;
  struct pprof_kept *k;
  pthread_mutex_lock(&p->lock);
  for (i = 0; i < p->nmembers && n < PPROF_PROG_PROCS; i++) {
    if (strcmp(p->members[i].program, program) != 0) continue;
    for (k = p->kept; k != NULL; k = k->next)
      if (k->gone_ns == 0 && k->pid == p->members[i].pid &&
          k->start_ticks == p->members[i].start_ticks)
        break;
    if (k == NULL) want[n++] = p->members[i];
  }
  for (k = p->kept; k != NULL; k = k->next)
    if (strcmp(k->program, program) == 0 && k->asked_ns < asked_ns) k->asked_ns = asked_ns;
  pthread_mutex_unlock(&p->lock);
  for (i = 0; i < n; i++) {
    struct ocgc_attach_opts oo = OCGC_OPTS_INIT(struct ocgc_attach_opts);
    struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
    struct pprof_kept *nk = calloc(1, sizeof *nk);
    if (nk == NULL) return;
    oo.dir = p->dir;
    if (ocgc_source_open_pid(want[i].pid, &oo, &nk->src) != 0 ||
        ocgc_source_info(nk->src, &info) != 0 || !info.has_ext ||
        info.start_time != want[i].start_ticks || ocgc_frame_names_new(&nk->names) != 0) {
      kept_free(nk); /* gone meanwhile, or no profile: nothing to follow */
      continue;
    }
    nk->pid = want[i].pid;
    nk->start_ticks = want[i].start_ticks;
    nk->ring_ns = info.created_ns;
    memcpy(nk->program, want[i].program, sizeof nk->program);
    serve_pprof_creds_of(nk->pid, &nk->creds);
    nk->since_ns = now;
    nk->asked_ns = asked_ns;
    pthread_mutex_lock(&p->lock);
    while (p->nkept >= PPROF_KEPT_MAX && drop_oldest_gone(p)) {}
    if (p->nkept >= PPROF_KEPT_MAX) { /* every place a living process's: not followed */
      pthread_mutex_unlock(&p->lock);
      kept_free(nk);
      return;
    }
    nk->next = p->kept;
    p->kept = nk;
    p->nkept++;
    pthread_mutex_unlock(&p->lock);
  }
}

/* Whether [k] (living) is still in the poll thread's list (the lock held). */
static int watched(const struct serve_pprof *p, const struct pprof_kept *k)
{
  size_t i;
  for (i = 0; i < p->nmembers; i++)
    if (p->members[i].pid == k->pid && p->members[i].start_ticks == k->start_ticks) return 1;
  return 0;
}

/* [k] (living, the worker's) is gone: its last copy read from the ring
 * still mapped, the source closed (the lock not held). */
static void end_kept(struct serve_pprof *p, struct pprof_kept *k, uint64_t now)
{
  struct ocgc_memprof *last = NULL;
  (void)ocgc_memprof_read(k->src, &last);
  ocgc_source_close(k->src);
  k->src = NULL;
  k->last = last;
  pthread_mutex_lock(&p->lock);
  k->gone_ns = now ? now : 1;
  pthread_mutex_unlock(&p->lock);
}

int serve_pprof_kept_check(struct serve_pprof *p, struct pprof_kept *k, uint64_t now)
{
  if (k->gone_ns != 0) return 1;
  if (ocgc_source_gone(k->src) != 1) return 0;
  end_kept(p, k, now);
  return 1;
}

void serve_pprof_look(struct serve_pprof *p, uint64_t now)
{
  struct pprof_kept *k, *next, *ending[PPROF_KEPT_MAX];
  char progs[PPROF_LOOK_PROGRAMS][OCGC_EXPO_LABEL_MAX + 4];
  uint64_t asked[PPROF_LOOK_PROGRAMS];
  size_t n = 0, i, np = 0;
  /* The programs followed: their new processes followed too, so that one
   * that lives less than a scrape interval is counted. */
  pthread_mutex_lock(&p->lock);
  for (k = p->kept; k != NULL && np < PPROF_LOOK_PROGRAMS; k = k->next) {
    if (now - k->asked_ns > PPROF_FOLLOW_NS) continue;
    for (i = 0; i < np && strcmp(progs[i], k->program) != 0; i++) {}
    if (i == np) {
      memcpy(progs[np], k->program, sizeof progs[0]);
      asked[np++] = k->asked_ns;
    } else if (asked[i] < k->asked_ns) {
      asked[i] = k->asked_ns;
    }
  }
  pthread_mutex_unlock(&p->lock);
  for (i = 0; i < np; i++) serve_pprof_follow(p, progs[i], now, asked[i]);
  pthread_mutex_lock(&p->lock);
  p->kept_ns = now;
  for (k = p->kept; k != NULL; k = next) {
    next = k->next;
    if ((k->gone_ns != 0 && now - k->gone_ns > PPROF_KEEP_NS) ||
        (k->gone_ns == 0 && now - k->asked_ns > PPROF_FOLLOW_NS)) {
      unlink_kept(p, k);
      continue;
    }
    if (k->gone_ns == 0 && n < PPROF_KEPT_MAX && !watched(p, k)) ending[n++] = k;
  }
  pthread_mutex_unlock(&p->lock);
  /* The ring is still mapped by us: the copy it holds is the last the
   * process wrote.  Only this thread frees a kept process. */
  for (i = 0; i < n; i++) end_kept(p, ending[i], now);
  pthread_mutex_lock(&p->lock);
  while (serve_pprof_kept_bytes(p) > PPROF_KEPT_BYTES && drop_oldest_gone(p)) {}
  pthread_mutex_unlock(&p->lock);
}

void serve_pprof_kept_free(struct serve_pprof *p)
{
  while (p->kept != NULL) unlink_kept(p, p->kept);
}
