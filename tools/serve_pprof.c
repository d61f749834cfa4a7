/* serve_pprof.c - `ocgc serve`'s allocation profiles: /debug/pprof/allocs
 * and /debug/pprof/heap?pid=N[&seconds=S], Go's names and meanings (the
 * same profile, alloc_space or inuse_space its default sample type; with
 * seconds, the delta of a window of S seconds), for Pyroscope's and
 * Parca's scrapers and `go tool pprof http://...`; /debug/pprof/profile?
 * pid=N[&seconds=S][&frequency=HZ], Go's CPU profile of S seconds (default
 * 30, as Go), a window of libocgc's (ocgc/cpuwindow.h, opened and written
 * by serve_pprof_cpu.c) the worker turns while it runs; and ?program=NAME, the
 * profiles of a program's processes merged (the processes followed:
 * serve_pprof_kept.c; the merge: libocgc's ocgc/pprof_merge.h), each
 * process's part of a window, every process merged passing the client's
 * rule (else 403).
 *
 * What it owns: the profile worker, a thread of its own, and its queue.
 * A request is checked (its client may have that process's profile:
 * serve_pprof_access.c; a pid serve watches, the one it watches: start
 * time), its connection suspended (libmicrohttpd's thread goes on with
 * other requests, /metrics among them) and queued; the worker opens the
 * process's ring itself, opens its allocation window (libocgc's
 * ocgc/allocwindow.h: the copy, with seconds the delta at the end;
 * bounded), names the frames through a small cache of symbolizers and
 * writes pprof, then resumes the connection with the answer; a ?program=
 * window keeps each process's first copy itself (a process that goes has
 * its ring closed and its last copy kept: serve_pprof_kept.c), and takes
 * their deltas with ocgc_memprof_delta.
 *
 * Invariants:
 * - only a process the watch holds is opened (the poll thread tells the
 *   list every SERVE_MEMBERS_NS), and only if its start time is the one
 *   watched (a pid reused is not followed); the worker opens
 *   rings and executables through libocgc's rules (the kernel's links,
 *   never a path a target wrote) and holds no lock while it reads them;
 * - sampling is never switched: the profile is what the process samples
 *   (an empty one while it does not);
 * - a profile holds no address of the process (ocgc_pprof_opts'
 *   absolute_addresses) unless its request says addresses=1, which the
 *   same client rule admits;
 * - a window whose client left is dropped: the worker polls the sockets of
 *   the waiting requests every PPROF_GONE_NS (libmicrohttpd watches no
 *   suspended connection, and says nothing of one closed meanwhile), and
 *   answers a closed one at once, which frees its place;
 * - a CPU window is turned by the worker every ocgc_cpuwindow_poll_ns (the
 *   kernel's rings hold some 15 samples: a turn late, behind another job's
 *   naming, loses samples, counted as the profile's lost), its job the
 *   worker's alone while it runs (the connection looks only at a DONE one);
 *   at most PPROF_CPU_WINDOWS CPU jobs at once, a ?program= one sampling
 *   at most PPROF_CPU_PROG_PROCS of its living processes (each window maps
 *   SERVE_CPU_THREADS rings of 256 KiB and reads the process's CFI within
 *   PPROF_READ_BYTES a file), each process checked by the client's rule
 *   again when its window opens, merged at the end (ocgc/pprof_merge.h);
 *   a process that execs or exits during one ends it there: the answer is
 *   the profile of the samples before (the sampler gives none after the
 *   exec, and the names are the old image's, read at the open), its
 *   duration the part sampled;
 * - a window across an exec of its process (same pid and start time; the
 *   ring held no longer mapped, the new image's another or none yet) is
 *   answered 409, not with the old image's figures; by program, the old
 *   image counts as a process gone and the new one as a process begun;
 * - a merged profile holds at most PPROF_PROG_PROCS processes, names read
 *   within PPROF_MERGE_NAMES_NS a request (and PPROF_NAMES_NS each look
 *   at the processes followed, every PPROF_LOOK_NS);
 * - bounded: at most PPROF_JOBS requests at once (then 503), of them
 *   PPROF_PER_CLIENT of one client (then 429), seconds at
 *   most PPROF_MAX_SECONDS, a copy as ocgc_memprof_read bounds it, naming
 *   within PPROF_NAMES_NS and PPROF_READ_BYTES of a file, the body at most
 *   SERVE_BUF_MAX, SERVE_PPROF_CACHE symbolizers kept, together holding at
 *   most PPROF_CACHE_BYTES (a reading adds PPROF_READ_BYTES and libocgc's
 *   libdw bound while it lasts: serve stays under 256 MiB whatever the
 *   targets' files claim); so an answer comes within
 *   PPROF_JOBS x (PPROF_NAMES_NS + the copies) + seconds, whatever the
 *   targets do, and /metrics is not slowed by it;
 * - a job is freed by the last of its two holders (the worker, the
 *   connection: libmicrohttpd's completion), under the lock; at stop,
 *   every job not answered is answered 503 and its connection resumed;
 * - no libmicrohttpd call is made with the lock held (it has locks of its
 *   own, held when it calls back into this file), but the suspend in
 *   serve_pprof_submit, made in the request's own callback before the
 *   worker may see the job. */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "common.h"
#include "serve.h"

#define PPROF_JOBS 8
/* Half of them: one client (a scraper asking for several processes at
 * once) is served in parallel, and cannot hold every place. */
#define PPROF_PER_CLIENT (PPROF_JOBS / 2)
/* How often the sockets of waiting windows are looked at (a client that
 * left frees its place within this). */
#define PPROF_GONE_NS UINT64_C(500000000)      /* 0.5 s */
#define PPROF_MAX_SECONDS 300
#define PPROF_CPU_SECONDS 30     /* /debug/pprof/profile's default, Go's */
#define PPROF_CPU_MAX_HZ 1000
#define PPROF_CPU_WINDOWS 2      /* CPU profiles at once */
#define PPROF_CPU_PROG_PROCS 4   /* a program's processes sampled for one profile */
#define PPROF_NAMES_NS UINT64_C(2000000000)     /* 2 s */
#define PPROF_READ_BYTES (UINT64_C(32) << 20)   /* of one file, while it is read */
#define PPROF_MAX_LINES (UINT64_C(2) << 20)
#define PPROF_NAMES_BYTES (UINT64_C(32) << 20)  /* what one process's names may hold */
/* What the cache of symbolizers may hold, all told (ocgc_symbols_memory):
 * each may grow to PPROF_NAMES_BYTES and its mappings as it reads files
 * at lookups, so that much is kept free for the one in use. */
#define PPROF_CACHE_BYTES (UINT64_C(96) << 20)
#define PPROF_ONE_BYTES (PPROF_NAMES_BYTES + (UINT64_C(1) << 20))
#define PPROF_STOP_NS UINT64_C(2000000000)      /* the stop's answers sent, at most */
/* A merged profile's naming, all its processes together: past it, frames
 * not named yet stay addresses in their files. */
#define PPROF_MERGE_NAMES_NS UINT64_C(10000000000) /* 10 s */

enum job_state { JOB_NEW, JOB_WAITING, JOB_DONE };

struct pprof_job {
  struct pprof_job *next;
  struct MHD_Connection *c;
  int pid;
  uint64_t start_ticks;
  uint64_t ring_ns;            /* its ring's creation: an exec makes another */
  int heap;                    /* /heap: inuse_space by default, else alloc_space */
  int cpu;                     /* /profile: a CPU window */
  unsigned frequency;          /* its Hz */
  struct ocgc_cpuwindow *win;  /* the worker's, while it runs */
  uint64_t turn_ns;            /* its next turn */
  /* ?program= CPU: a window of each of the program's living processes */
  size_t nwins, wins_left;
  struct pprof_cpu_proc {
    int pid;
    struct ocgc_source *src;
    struct ocgc_cpuwindow *win;
    int ended;                 /* exec'd or gone: its samples before are in */
  } wins[PPROF_CPU_PROG_PROCS];
  int absolute;                /* addresses=1: the process's own addresses */
  int fd;                      /* the connection's socket (-1: unknown) */
  char key[64];                /* its client, for PPROF_PER_CLIENT */
  uint64_t seconds_ns, due_ns;
  enum job_state state;
  unsigned holders;            /* the worker and the connection */
  struct ocgc_source *src;     /* the worker's, while it waits */
  struct ocgc_allocwindow *alloc; /* its allocation window (borrows src) */
  /* ?program=: the program (its label), its client (the rule is checked
   * again for each process merged: one may start during a window), and
   * the first copy of each process followed when the window began */
  int by_program;
  char program[OCGC_EXPO_LABEL_MAX + 4];
  struct serve_pprof_client who;
  uint64_t began_ns;
  size_t nfirsts, firsts_left; /* left out: past PPROF_FIRSTS_BYTES */
  uint64_t firsts_bytes;
  struct pprof_first {
    struct pprof_kept *k;      /* compared, never followed: it may be freed meanwhile */
    int pid;
    uint64_t start_ticks, ring_ns;
    struct ocgc_memprof *copy;
  } firsts[PPROF_PROG_PROCS];
  unsigned status;             /* once DONE */
  struct MHD_Response *resp;   /* once DONE; taken by the connection */
};

static void job_free(struct serve_pprof *p, struct pprof_job *j)
{
  size_t i;
  p->live--;
  pthread_cond_broadcast(&p->wake);
  for (i = 0; i < j->nfirsts; i++) ocgc_memprof_free(j->firsts[i].copy);
  p->firsts_bytes -= j->firsts_bytes;
  ocgc_allocwindow_free(j->alloc); /* before the ring it borrows */
  ocgc_cpuwindow_free(j->win); /* the same */
  for (i = 0; i < j->nwins; i++) {
    ocgc_cpuwindow_free(j->wins[i].win);
    ocgc_source_close(j->wins[i].src);
  }
  ocgc_source_close(j->src);
  if (j->resp != NULL) MHD_destroy_response(j->resp);
  free(j);
}

/* Drop one holder of [j] (the lock held); the last frees it. */
static void job_drop(struct serve_pprof *p, struct pprof_job *j)
{
  if (--j->holders == 0) job_free(p, j);
}

int serve_pprof_init(struct serve_pprof *p, const char *dir)
{
  memset(p, 0, sizeof *p);
  p->dir = dir;
  if (pthread_mutex_init(&p->lock, NULL) != 0) return -1;
  {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (pthread_cond_init(&p->wake, &a) != 0) {
      pthread_condattr_destroy(&a);
      pthread_mutex_destroy(&p->lock);
      return -1;
    }
    pthread_condattr_destroy(&a);
  }
  return 0;
}

/* ---- who may be asked for: the watched processes ------------------------------------- */

void serve_pprof_members(struct serve_pprof *p, struct serve_pprof_member *m, size_t n)
{
  struct serve_pprof_member *old;
  pthread_mutex_lock(&p->lock);
  old = p->members;
  p->members = m;
  p->nmembers = n;
  pthread_mutex_unlock(&p->lock);
  free(old);
}

/* ---- the requests -------------------------------------------------------------------- */

/* [s] as a decimal in [lo, hi]: 0 and *v, or -1. */
static int parse_bounded(const char *s, long lo, long hi, long *v)
{
  char *end;
  long x;
  if (s == NULL || *s < '0' || *s > '9') return -1;
  errno = 0;
  x = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > hi) return -1;
  *v = x;
  return 0;
}

/* Whether [who] may not have the merged profile of [prog] (a 404 or a 403
 * into *status and why): 0 if it may, or -1.  Every process that would be
 * merged is judged by the rule (serve_pprof_access.c): the living ones by
 * their /proc now, the gone ones by their ids as they lived.  One it may
 * not read refuses the whole: a merge cannot say whose share is whose. */
static int program_refused(struct serve_pprof *p, const struct serve_pprof_client *who,
                           const char *prog, unsigned *status, char *why, size_t n)
{
  int pids[PPROF_PROG_PROCS];
  struct serve_pprof_creds gone[PPROF_PROG_PROCS];
  size_t np = 0, ng = 0, i;
  uint64_t now = cm_mono_ns();
  const struct pprof_kept *k;
  pthread_mutex_lock(&p->lock);
  for (i = 0; i < p->nmembers && np < PPROF_PROG_PROCS; i++)
    if (strcmp(p->members[i].program, prog) == 0) pids[np++] = p->members[i].pid;
  for (k = p->kept; k != NULL && ng < PPROF_PROG_PROCS; k = k->next)
    if (k->gone_ns != 0 && now - k->gone_ns <= PPROF_KEEP_NS && strcmp(k->program, prog) == 0)
      gone[ng++] = k->creds;
  pthread_mutex_unlock(&p->lock);
  if (np + ng == 0) {
    *status = MHD_HTTP_NOT_FOUND;
    snprintf(why, n, "not found: this exporter watches no process of that program, and kept "
                     "none gone in the last %d s\n", (int)(PPROF_KEEP_NS / 1000000000u));
    return -1;
  }
  for (i = 0; i < np; i++)
    if (!serve_pprof_may_read(who, pids[i])) break;
  if (i < np) {
    *status = MHD_HTTP_FORBIDDEN;
    snprintf(why, n, "forbidden: a merged profile goes only to a client who may read each of "
                     "the program's processes (as ptrace, over this unix socket), and this one "
                     "may not read process %d\n", pids[i]);
    return -1;
  }
  for (i = 0; i < ng; i++)
    if (!serve_pprof_may_read_creds(who, &gone[i])) {
      *status = MHD_HTTP_FORBIDDEN;
      snprintf(why, n, "forbidden: a merged profile goes only to a client who may read each of "
                       "the program's processes (as ptrace, over this unix socket), and this one "
                       "may not read one that exited in the last %d s\n",
               (int)(PPROF_KEEP_NS / 1000000000u));
      return -1;
    }
  return 0;
}

int serve_pprof_submit(struct serve_pprof *p, struct MHD_Connection *c, const char *url,
                       const struct serve_pprof_client *who, void **job_out, unsigned *status,
                       char *why, size_t n)
{
  const char *spid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
  const char *ssec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
  const char *sadr = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "addresses");
  const char *sprog = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "program");
  const char *shz = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "frequency");
  struct pprof_job *j;
  long pid = 0, sec = 0, absolute = 0, hz = 100;
  size_t i;
  unsigned mine = 0;
  int heap = strcmp(url, "/debug/pprof/heap") == 0;
  int cpu = strcmp(url, "/debug/pprof/profile") == 0;
  *job_out = NULL;
  if (!heap && !cpu && strcmp(url, "/debug/pprof/allocs") != 0) {
    *status = MHD_HTTP_NOT_FOUND;
    snprintf(why, n, "not found: /debug/pprof/allocs, /debug/pprof/heap and "
                     "/debug/pprof/profile are served\n");
    return -1;
  }
  if (cpu && shz != NULL && parse_bounded(shz, 1, PPROF_CPU_MAX_HZ, &hz) != 0) {
    *status = MHD_HTTP_BAD_REQUEST;
    snprintf(why, n, "bad request: frequency is a whole number of Hz from 1 to %d (default "
                     "100)\n", PPROF_CPU_MAX_HZ);
    return -1;
  }
  if (sprog != NULL && spid == NULL) {
    if (sprog[0] == '\0' || strlen(sprog) > OCGC_EXPO_LABEL_MAX + 3) {
      *status = MHD_HTTP_BAD_REQUEST;
      snprintf(why, n, "bad request: program is a program label of /metrics (1 to %d bytes)\n",
               OCGC_EXPO_LABEL_MAX + 3);
      return -1;
    }
  } else if (sprog != NULL || parse_bounded(spid, 1, 0x7fffffff, &pid) != 0) {
    *status = MHD_HTTP_BAD_REQUEST;
    snprintf(why, n, "bad request: pid=N (a process this exporter watches: / lists them) or "
                     "program=NAME (a program label of /metrics), one of them, is required\n");
    return -1;
  }
  if (ssec != NULL && parse_bounded(ssec, 1, PPROF_MAX_SECONDS, &sec) != 0) {
    *status = MHD_HTTP_BAD_REQUEST;
    snprintf(why, n, "bad request: seconds is a whole number from 1 to %d\n", PPROF_MAX_SECONDS);
    return -1;
  }
  if (sadr != NULL && parse_bounded(sadr, 0, 1, &absolute) != 0) {
    *status = MHD_HTTP_BAD_REQUEST;
    snprintf(why, n, "bad request: addresses is 0 (the default: none of the process's) or 1\n");
    return -1;
  }
  if (cpu && sec == 0) sec = PPROF_CPU_SECONDS;
  if (sprog != NULL && absolute) {
    *status = MHD_HTTP_BAD_REQUEST;
    snprintf(why, n, "bad request: a merged profile has no process's addresses (addresses=1 "
                     "goes with pid=N)\n");
    return -1;
  }
  if (sprog != NULL && program_refused(p, who, sprog, status, why, n) != 0) return -1;
  /* Before the list: who may not have it learns nothing of what is watched. */
  if (sprog == NULL && !serve_pprof_may_read(who, (int)pid)) {
    *status = MHD_HTTP_FORBIDDEN;
    snprintf(why, n, "forbidden: over this unix socket, a process's profile goes to root and "
                     "to its own user (as ptrace); --web.enable-pprof serves any client\n");
    return -1;
  }
  pthread_mutex_lock(&p->lock);
  for (i = 0; i < p->nmembers && sprog == NULL; i++)
    if (p->members[i].pid == (int)pid) break;
  if ((sprog == NULL && i == p->nmembers) || p->stopping) {
    int stopping = p->stopping;
    pthread_mutex_unlock(&p->lock);
    *status = stopping ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_NOT_FOUND;
    snprintf(why, n, stopping ? "stopping\n"
                              : "not found: this exporter watches no process %ld\n", pid);
    return -1;
  }
  for (j = p->jobs; j != NULL; j = j->next) mine += strcmp(j->key, who->key) == 0;
  if (mine >= PPROF_PER_CLIENT) {
    pthread_mutex_unlock(&p->lock);
    __atomic_add_fetch(&p->busy, 1, __ATOMIC_RELAXED); /* as below */
    *status = MHD_HTTP_TOO_MANY_REQUESTS;
    snprintf(why, n, "too many: %d profiles of this client (%s) are being made; ask again once "
                     "one is answered\n", PPROF_PER_CLIENT, who->key);
    return -1;
  }
  if (p->njobs >= PPROF_JOBS || (cpu && p->cpu_windows >= PPROF_CPU_WINDOWS) ||
      (j = calloc(1, sizeof *j)) == NULL) {
    pthread_mutex_unlock(&p->lock);
    /* A counter alone: relaxed, nothing is ordered by it (read by /metrics). */
    __atomic_add_fetch(&p->busy, 1, __ATOMIC_RELAXED);
    *status = MHD_HTTP_SERVICE_UNAVAILABLE;
    if (cpu && p->cpu_windows >= PPROF_CPU_WINDOWS)
      snprintf(why, n, "busy: %d CPU profiles are being made; ask again\n", PPROF_CPU_WINDOWS);
    else snprintf(why, n, "busy: %d profiles are being made; ask again\n", PPROF_JOBS);
    return -1;
  }
  j->c = c;
  j->pid = (int)pid;
  if (sprog == NULL) j->start_ticks = p->members[i].start_ticks;
  j->by_program = sprog != NULL;
  if (sprog != NULL) snprintf(j->program, sizeof j->program, "%s", sprog);
  j->who = *who;
  j->heap = heap;
  j->cpu = cpu;
  j->frequency = (unsigned)hz;
  p->cpu_windows += cpu;
  j->absolute = absolute != 0;
  j->fd = who->fd;
  snprintf(j->key, sizeof j->key, "%s", who->key);
  j->seconds_ns = (uint64_t)sec * 1000000000u;
  j->holders = 2;
  /* Suspended before the worker can see it: its resume then always
   * follows this suspend. */
  MHD_suspend_connection(c);
  j->next = p->jobs;
  p->jobs = j;
  p->njobs++;
  p->live++;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->lock);
  *job_out = j;
  return 0;
}

struct MHD_Response *serve_pprof_take(struct serve_pprof *p, void *con_cls, unsigned *status)
{
  struct pprof_job *j = con_cls;
  struct MHD_Response *r;
  pthread_mutex_lock(&p->lock);
  r = j->state == JOB_DONE ? j->resp : NULL;
  *status = j->status;
  if (r != NULL) j->resp = NULL;
  pthread_mutex_unlock(&p->lock);
  return r;
}

void serve_pprof_completed(struct serve_pprof *p, void *con_cls)
{
  pthread_mutex_lock(&p->lock);
  job_drop(p, con_cls);
  pthread_mutex_unlock(&p->lock);
}

/* ---- the worker ------------------------------------------------------------------------- */

/* Close the least recently used symbolizers but [keep] until the others
 * hold at most PPROF_CACHE_BYTES less what [keep] may grow to. */
static void cache_trim(struct serve_pprof *p, const struct serve_pprof_cached *keep)
{
  for (;;) {
    struct serve_pprof_cached *oldest = NULL;
    uint64_t held = 0;
    unsigned i;
    for (i = 0; i < SERVE_PPROF_CACHE; i++) {
      struct serve_pprof_cached *c = &p->cache[i];
      if (c == keep || c->syms == NULL) continue;
      held += ocgc_symbols_memory(c->syms);
      if (oldest == NULL || c->used_ns < oldest->used_ns) oldest = c;
    }
    if (oldest == NULL || held + PPROF_ONE_BYTES <= PPROF_CACHE_BYTES) return;
    ocgc_symbols_close(oldest->syms);
    memset(oldest, 0, sizeof *oldest);
  }
}

/* The names of [pid] (that start time, and the ring made at [ring_ns]: a
 * process that execs keeps its pid and start time, and makes a new ring
 * for its new image): cached, else read now.  The cache holds at most
 * PPROF_CACHE_BYTES, the one returned grown to its bound included. */
static struct ocgc_symbols *names(struct serve_pprof *p, int pid, uint64_t start, uint64_t ring_ns)
{
  struct ocgc_symbols_opts o = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  struct serve_pprof_cached *oldest = &p->cache[0];
  unsigned i;
  for (i = 0; i < SERVE_PPROF_CACHE; i++) {
    struct serve_pprof_cached *c = &p->cache[i];
    if (c->syms != NULL && c->pid == pid && c->start_ticks == start && c->ring_ns == ring_ns) {
      c->used_ns = cm_mono_ns();
      cache_trim(p, c);
      return c->syms;
    }
    if (c->syms == NULL || c->used_ns < oldest->used_ns) oldest = c;
  }
  ocgc_symbols_close(oldest->syms);
  memset(oldest, 0, sizeof *oldest);
  cache_trim(p, oldest);
  o.max_ns = PPROF_NAMES_NS;
  o.max_read_bytes = PPROF_READ_BYTES;
  o.max_lines = PPROF_MAX_LINES;
  o.max_names_bytes = PPROF_NAMES_BYTES;
  o.max_process_bytes = PPROF_NAMES_BYTES;
  if (ocgc_symbols_open_pid(pid, start, &o, &oldest->syms) != 0) return NULL;
  oldest->pid = pid;
  oldest->start_ticks = start;
  oldest->ring_ns = ring_ns;
  oldest->used_ns = cm_mono_ns();
  return oldest->syms;
}

/* A text answer of the job's. */
static void answer_text(struct pprof_job *j, unsigned status, const char *s)
{
  j->status = status;
  j->resp = MHD_create_response_from_buffer(strlen(s), (void *)(uintptr_t)s, MHD_RESPMEM_MUST_COPY);
  if (j->resp != NULL)
    MHD_add_response_header(j->resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
}

static void answer_pprof(struct serve_pprof *p, struct pprof_job *j, unsigned char *buf,
                         size_t len);

/* [prof] as the job's pprof answer. */
/* What every profile of job [j] says of itself: now, its window, its
 * default sample type (heap: in use), its bound. */
static void job_opts(const struct pprof_job *j, struct ocgc_pprof_opts *o)
{
  struct timespec now;
  *o = (struct ocgc_pprof_opts)OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  clock_gettime(CLOCK_REALTIME, &now);
  o->time_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
  o->duration_ns = (int64_t)j->seconds_ns;
  o->default_value_set = 1;
  o->default_value = j->heap ? OCGC_PV_INUSE_SPACE : OCGC_PV_ALLOC_SPACE;
  o->max_bytes = SERVE_BUF_MAX;
}

static void answer_profile(struct serve_pprof *p, struct pprof_job *j,
                           const struct ocgc_memprof *prof)
{
  struct ocgc_pprof_opts o;
  unsigned char *buf;
  size_t len;
  int err;
  job_opts(j, &o);
  o.absolute_addresses = j->absolute;
  if ((err = ocgc_pprof_write(prof, names(p, j->pid, j->start_ticks, j->ring_ns), &o, &buf, &len)) != 0) {
    answer_text(j, MHD_HTTP_INTERNAL_SERVER_ERROR,
                err == -EFBIG ? "the profile outgrew its bound (64 MiB)\n" : "out of memory\n");
    return;
  }
  answer_pprof(p, j, buf, len);
}

/* [buf] (a gzipped pprof of [len] bytes, taken over) as the job's answer. */
static void answer_pprof(struct serve_pprof *p, struct pprof_job *j, unsigned char *buf, size_t len)
{
  j->status = MHD_HTTP_OK;
  j->resp = MHD_create_response_from_buffer_with_free_callback(len, buf, free);
  if (j->resp == NULL) {
    free(buf);
    return;
  }
  MHD_add_response_header(j->resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
  MHD_add_response_header(j->resp, "Content-Disposition",
                          j->cpu    ? "attachment; filename=\"profile\""
                          : j->heap ? "attachment; filename=\"heap\""
                                    : "attachment; filename=\"allocs\"");
  __atomic_add_fetch(&p->served, 1, __ATOMIC_RELAXED); /* a counter alone, as busy */
}

/* The answer saying why the job's profile could not be copied ([err]). */
static void copy_failed(struct pprof_job *j, int err)
{
  answer_text(j, err == -ENODATA ? MHD_HTTP_NOT_FOUND : MHD_HTTP_SERVICE_UNAVAILABLE,
              err == -ENODATA ? "not found: the process's runtime keeps no allocation profile "
                                "(a stock OCaml 5, or an older ocgc runtime)\n"
                              : "the process's profile could not be read now; ask again\n");
}

/* Whether process [pid] of start time [start] lives (not a zombie):
 * /proc/PID/stat, the kernel's, its fields after the command name's last
 * ')' (the name is the process's choice). */
static int lives(int pid, uint64_t start)
{
  char path[64], buf[1024], *q, state;
  unsigned long long st = 0;
  FILE *f;
  size_t n;
  int i;
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  if ((f = fopen(path, "re")) == NULL) return 0;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  if ((q = strrchr(buf, ')')) == NULL || sscanf(q + 1, " %c", &state) != 1) return 0;
  /* field 22, starttime: 19 fields after the state (field 3) */
  for (q += 2, i = 3; i < 22 && q != NULL; i++) q = strchr(q + 1, ' ');
  return q != NULL && sscanf(q, " %llu", &st) == 1 && st == start && state != 'Z' && state != 'X';
}

/* Whether job [j]'s process exec'd since the window began: its ring is
 * gone (no longer mapped by it) while the same process (pid and start
 * time) lives, with a new ring or none yet, and the old image wrote no
 * exit.  The ring held, no longer written, would give the old image's
 * figures. */
static int exec_since(struct serve_pprof *p, struct pprof_job *j)
{
  struct ocgc_attach_opts oo = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_source *now = NULL;
  int changed;
  if (ocgc_source_gone(j->src) != 1) return 0;
  oo.dir = p->dir;
  if (ocgc_source_open_pid(j->pid, &oo, &now) == 0 && ocgc_source_info(now, &info) == 0 &&
      info.has_ext && info.start_time == j->start_ticks) {
    changed = info.created_ns != j->ring_ns;
    ocgc_source_close(now);
    return changed;
  }
  ocgc_source_close(now);
  /* no ring of the process now: exec'd into a program without one (yet),
   * unless it exited (its runtime wrote so) or is gone */
  return ocgc_source_info(j->src, &info) == 0 && info.exited_ns == 0 &&
         lives(j->pid, j->start_ticks);
}

/* ---- ?program=: the merged profile ------------------------------------------------ */

/* The processes followed for [j]'s program, living or gone within
 * PPROF_KEEP_NS, into k[] (at most PPROF_PROG_PROCS; *left those past it):
 * the worker's to use with no lock held (only it frees them). */
static size_t program_procs(struct serve_pprof *p, const struct pprof_job *j, uint64_t now,
                            struct pprof_kept **k, size_t *left)
{
  struct pprof_kept *x;
  size_t n = 0;
  *left = 0;
  pthread_mutex_lock(&p->lock);
  for (x = p->kept; x != NULL; x = x->next) {
    if (strcmp(x->program, j->program) != 0) continue;
    if (x->gone_ns != 0 && now - x->gone_ns > PPROF_KEEP_NS) continue;
    if (n < PPROF_PROG_PROCS) k[n++] = x;
    else ++*left;
  }
  pthread_mutex_unlock(&p->lock);
  return n;
}

/* Name the frames of [k] (living) in [copy] not named yet, if the kept
 * processes have room. */
static void name_kept(struct serve_pprof *p, struct pprof_kept *k, const struct ocgc_memprof *copy)
{
  struct ocgc_symbols *syms;
  int room;
  if (ocgc_frame_names_missing(k->names, copy) == 0) return;
  pthread_mutex_lock(&p->lock);
  room = serve_pprof_kept_bytes(p) < PPROF_KEPT_BYTES;
  pthread_mutex_unlock(&p->lock);
  if (room && (syms = names(p, k->pid, k->start_ticks, k->ring_ns)) != NULL)
    (void)ocgc_frame_names_add(k->names, copy, syms);
}

/* The living processes followed whose tables have new stacks: named now
 * (a look, every PPROF_LOOK_NS), so that a process that goes between two
 * requests has its names; PPROF_NAMES_NS at most a turn. */
static void name_followed(struct serve_pprof *p, uint64_t now)
{
  struct pprof_kept *k[PPROF_KEPT_MAX], *x;
  size_t n = 0, i;
  pthread_mutex_lock(&p->lock);
  for (x = p->kept; x != NULL && n < PPROF_KEPT_MAX; x = x->next)
    if (x->gone_ns == 0) k[n++] = x;
  pthread_mutex_unlock(&p->lock);
  for (i = 0; i < n && cm_mono_ns() - now < PPROF_NAMES_NS; i++) {
    struct ocgc_memprof_summary sum = OCGC_OPTS_INIT(struct ocgc_memprof_summary);
    struct ocgc_memprof *copy = NULL;
    if (ocgc_memprof_summary(k[i]->src, &sum) != 0 || sum.stacks == k[i]->named_stacks) continue;
    if (ocgc_memprof_read(k[i]->src, &copy) != 0) continue;
    name_kept(p, k[i], copy);
    k[i]->named_stacks = sum.stacks;
    ocgc_memprof_free(copy);
  }
}

/* The first copy of [k] taken when [j]'s window began, or NULL. */
static const struct ocgc_memprof *first_of(const struct pprof_job *j, const struct pprof_kept *k)
{
  size_t i;
  for (i = 0; i < j->nfirsts; i++)
    if (j->firsts[i].k == k && j->firsts[i].pid == k->pid &&
        j->firsts[i].start_ticks == k->start_ticks && j->firsts[i].ring_ns == k->ring_ns)
      return j->firsts[i].copy;
  return NULL;
}

/* The window's first copies: one of each living process followed. */
static void program_begin(struct serve_pprof *p, struct pprof_job *j, uint64_t now)
{
  struct pprof_kept *k[PPROF_PROG_PROCS];
  size_t n, i, left;
  j->began_ns = now;
  n = program_procs(p, j, now, k, &left);
  for (i = 0; i < n && j->nfirsts < PPROF_PROG_PROCS; i++) {
    struct pprof_first *f = &j->firsts[j->nfirsts];
    uint64_t bytes;
    int room;
    if (serve_pprof_kept_check(p, k[i], now) || ocgc_memprof_read(k[i]->src, &f->copy) != 0)
      continue;
    bytes = sizeof *f->copy + f->copy->nstacks * sizeof *f->copy->stack;
    pthread_mutex_lock(&p->lock);
    if ((room = p->firsts_bytes + bytes <= PPROF_FIRSTS_BYTES)) {
      p->firsts_bytes += bytes;
      j->firsts_bytes += bytes;
    }
    pthread_mutex_unlock(&p->lock);
    if (!room) { /* its part of the window is not known: left out, and said */
      ocgc_memprof_free(f->copy);
      f->copy = NULL;
      j->firsts_left++;
      continue;
    }
    f->k = k[i];
    f->pid = k[i]->pid;
    f->start_ticks = k[i]->start_ticks;
    f->ring_ns = k[i]->ring_ns;
    j->nfirsts++;
  }
}

/* The merged profile of [j]'s program as its answer: each process's copy
 * now (its last, if gone), or with a window its part of the window: what
 * it added since its first copy, all it counted if it began during the
 * window, nothing if it was gone before.  Each process merged must pass
 * the client's rule, else 403. */

/* The merged profile [m] (freed here) as [j]'s answer, with [comment]; an
 * error [err] of its making, or of its writing, is a 500. */
static void merged_answer(struct serve_pprof *p, struct pprof_job *j, struct ocgc_pprof_merge *m,
                          const char *comment, int err)
{
  struct ocgc_pprof_opts o;
  unsigned char *buf = NULL;
  size_t len = 0;
  job_opts(j, &o);
  if (err == 0) err = ocgc_pprof_merge_write(m, &o, comment, &buf, &len);
  ocgc_pprof_merge_free(m);
  if (err != 0) {
    answer_text(j, MHD_HTTP_INTERNAL_SERVER_ERROR,
                err == -EFBIG ? "the profile outgrew its bound (64 MiB)\n" : "out of memory\n");
    return;
  }
  answer_pprof(p, j, buf, len);
}

static void program_answer(struct serve_pprof *p, struct pprof_job *j, uint64_t now)
{
  struct pprof_kept *k[PPROF_PROG_PROCS];
  struct ocgc_pprof_merge *m = NULL;
  size_t n, i, left, merged = 0, gone = 0;
  uint64_t names_until = now + PPROF_MERGE_NAMES_NS;
  int err = 0;
  char comment[400], prog[TOOL_ESC_SIZE(sizeof j->program)], more[160];
  n = program_procs(p, j, now, k, &left);
  if (ocgc_pprof_merge_new(&m) != 0) return;
  for (i = 0; i < n && err == 0; i++) {
    struct ocgc_memprof *now_copy = NULL, *window = NULL;
    const struct ocgc_memprof *newer, *older = NULL;
    int living = !serve_pprof_kept_check(p, k[i], now);
    if (j->seconds_ns > 0) {
      older = first_of(j, k[i]);
      if (older == NULL && k[i]->since_ns < j->began_ns) continue; /* none of the window's */
    }
    if (living) {
      struct serve_pprof_creds c;
      if (ocgc_memprof_read(k[i]->src, &now_copy) != 0) continue;
      serve_pprof_creds_of(k[i]->pid, &c);
      pthread_mutex_lock(&p->lock); /* submit and the targets read it */
      if (c.valid) k[i]->creds = c; /* for when it is gone */
      pthread_mutex_unlock(&p->lock);
      newer = now_copy;
    } else if ((newer = k[i]->last) == NULL) {
      continue;
    }
    if (!serve_pprof_may_read_creds(&j->who, &k[i]->creds) &&
        !(living && serve_pprof_may_read(&j->who, k[i]->pid))) {
      ocgc_memprof_free(now_copy);
      ocgc_pprof_merge_free(m);
      answer_text(j, MHD_HTTP_FORBIDDEN, "forbidden: a merged profile goes only to a client who "
                                         "may read each of the program's processes, and one "
                                         "merged is not this client's to read\n");
      return;
    }
    /* Names while it lives, within the request's time for names and the
     * kept processes' bytes: what is not named stays an address in its file. */
    if (living && cm_mono_ns() < names_until) name_kept(p, k[i], newer);
    if (older != NULL && ocgc_memprof_delta(older, newer, &window) != 0) {
      ocgc_memprof_free(now_copy);
      continue; /* not one table (a fork's new one): its part is not known */
    }
    err = ocgc_pprof_merge_add(m, window != NULL ? window : newer, k[i]->names);
    merged++;
    gone += !living;
    ocgc_memprof_free(window);
    ocgc_memprof_free(now_copy);
  }
  if (err != 0) {
    ocgc_pprof_merge_free(m);
    answer_text(j, MHD_HTTP_INTERNAL_SERVER_ERROR,
                err == -EFBIG ? "the merged profile outgrew its bound\n" : "out of memory\n");
    return;
  }
  snprintf(more, sizeof more, " (more were left out: at most %d are merged, and a window's "
           "first copies take %d MiB at most)", PPROF_PROG_PROCS, (int)(PPROF_FIRSTS_BYTES >> 20));
  snprintf(comment, sizeof comment, "ocgc serve: program \"%s\": %zu processes merged, %zu of "
           "them gone within %d s%s", tool_esc(j->program, prog, sizeof prog), merged, gone,
           (int)(PPROF_KEEP_NS / 1000000000u), left > 0 || j->firsts_left > 0 ? more : "");
  merged_answer(p, j, m, comment, 0);
}

/* One step of a ?program= job, with no lock held. */
static void program_step(struct serve_pprof *p, struct pprof_job *j)
{
  uint64_t now = cm_mono_ns();
  serve_pprof_follow(p, j->program, now, now);
  if (j->state == JOB_NEW && j->seconds_ns > 0) {
    program_begin(p, j, now);
    j->due_ns = now + j->seconds_ns;
    j->state = JOB_WAITING;
    return;
  }
  serve_pprof_look(p, now); /* who went during the window: their last copies */
  program_answer(p, j, now);
  j->state = JOB_DONE;
}

/* The windows of [j]'s program's living processes (at most
 * PPROF_CPU_PROG_PROCS): 0, or -1 with the answer given. */
static int cpu_program_open(struct serve_pprof *p, struct pprof_job *j)
{
  struct { int pid; uint64_t start; } procs[PPROF_CPU_PROG_PROCS];
  size_t n = 0, i;
  char why[400];
  unsigned status;
  pthread_mutex_lock(&p->lock);
  for (i = 0; i < p->nmembers; i++) {
    if (strcmp(p->members[i].program, j->program) != 0) continue;
    if (n < PPROF_CPU_PROG_PROCS) {
      procs[n].pid = p->members[i].pid;
      procs[n++].start = p->members[i].start_ticks;
    } else {
      j->wins_left++;
    }
  }
  pthread_mutex_unlock(&p->lock);
  for (i = 0; i < n; i++) {
    struct ocgc_attach_opts oo = OCGC_OPTS_INIT(struct ocgc_attach_opts);
    struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
    struct pprof_cpu_proc *w = &j->wins[j->nwins];
    /* the rule again, for each process: the list may have changed since
     * the request was checked */
    if (!serve_pprof_may_read(&j->who, procs[i].pid)) {
      answer_text(j, MHD_HTTP_FORBIDDEN, "forbidden: a merged profile goes only to a client who "
                                         "may read each of the program's processes\n");
      return -1;
    }
    oo.dir = p->dir;
    if (ocgc_source_open_pid(procs[i].pid, &oo, &w->src) != 0 ||
        ocgc_source_info(w->src, &info) != 0 || !info.has_ext ||
        info.start_time != procs[i].start) {
      ocgc_source_close(w->src); /* gone meanwhile: not in the profile */
      w->src = NULL;
      continue;
    }
    serve_cpu_open(procs[i].pid, procs[i].start, w->src, j->frequency, PPROF_READ_BYTES, &w->win,
                   &status, why, sizeof why);
    if (w->win == NULL) {
      ocgc_source_close(w->src);
      w->src = NULL;
      if (status == MHD_HTTP_FORBIDDEN) { /* the kernel's refusal: said, the whole refused */
        answer_text(j, status, why);
        return -1;
      }
      continue;
    }
    w->pid = procs[i].pid;
    j->nwins++;
  }
  if (j->nwins == 0) {
    answer_text(j, MHD_HTTP_NOT_FOUND, "not found: no living process of that program could be "
                                       "sampled\n");
    return -1;
  }
  return 0;
}

/* The merged profile of [j]'s windows as its answer. */
static void cpu_program_answer(struct serve_pprof *p, struct pprof_job *j)
{
  struct ocgc_pprof_merge *m = NULL;
  char comment[360], prog[TOOL_ESC_SIZE(sizeof j->program)], more[80];
  size_t i, ended = 0;
  int err = 0;
  if (ocgc_pprof_merge_new(&m) != 0) return; /* finish() answers 500 */
  for (i = 0; i < j->nwins && err == 0; i++) {
    struct ocgc_frame_names *fn = NULL;
    ocgc_cpuwindow_end(j->wins[i].win);
    ended += j->wins[i].ended;
    if ((err = ocgc_frame_names_new(&fn)) != 0) break;
    /* names read while the window lived (its symbolizer's); what is not
     * named stays an address in its file */
    (void)ocgc_frame_names_add_cpu(fn, ocgc_cpuwindow_profile(j->wins[i].win),
                                   ocgc_cpuwindow_names(j->wins[i].win));
    err = ocgc_pprof_merge_add_cpu(m, ocgc_cpuwindow_profile(j->wins[i].win), fn);
    ocgc_frame_names_free(fn);
  }
  snprintf(more, sizeof more, " (more were left out: at most %d are sampled)",
           PPROF_CPU_PROG_PROCS);
  snprintf(comment, sizeof comment, "ocgc serve: program \"%s\": %zu processes sampled, %zu of "
           "them exec'd or gone during the window%s", tool_esc(j->program, prog, sizeof prog),
           j->nwins, ended, j->wins_left > 0 ? more : "");
  merged_answer(p, j, m, comment, err);
}

/* One step of a ?program= CPU job, with no lock held. */
static void cpu_program_step(struct serve_pprof *p, struct pprof_job *j)
{
  uint64_t now = cm_mono_ns();
  size_t i, ended = 0;
  if (j->state == JOB_NEW) {
    if (cpu_program_open(p, j) != 0) {
      j->state = JOB_DONE;
      return;
    }
    now = cm_mono_ns();
    j->due_ns = now + j->seconds_ns;
    j->turn_ns = now + ocgc_cpuwindow_poll_ns(j->wins[0].win);
    j->state = JOB_WAITING;
    return;
  }
  for (i = 0; i < j->nwins; i++) {
    if (!j->wins[i].ended && ocgc_cpuwindow_turn(j->wins[i].win) != 0)
      j->wins[i].ended = 1; /* exec'd, gone or failing: its samples so far */
    ended += j->wins[i].ended;
  }
  j->turn_ns = cm_mono_ns() + ocgc_cpuwindow_poll_ns(j->wins[0].win);
  if (now < j->due_ns && ended < j->nwins) return;
  cpu_program_answer(p, j);
  j->state = JOB_DONE;
}

/* Open the ring of job [j]'s process into j->src and take its making's
 * time: 0, or -1 after answering 404 with [gone] (the job done).  Only the
 * ring watched: an ocgc ring of that pid and start time (a pid reused, or
 * another image, is not the process asked for). */
static int open_watched(struct serve_pprof *p, struct pprof_job *j, const char *gone)
{
  struct ocgc_attach_opts oo = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  oo.dir = p->dir;
  if (ocgc_source_open_pid(j->pid, &oo, &j->src) != 0 || ocgc_source_info(j->src, &info) != 0 ||
      !info.has_ext || info.start_time != j->start_ticks) {
    answer_text(j, MHD_HTTP_NOT_FOUND, gone);
    j->state = JOB_DONE;
    return -1;
  }
  j->ring_ns = info.created_ns;
  return 0;
}

/* One step of a CPU window's job, with no lock held: its open, a turn, or
 * its end and answer. */
static void cpu_step(struct serve_pprof *p, struct pprof_job *j)
{
  char why[400];
  unsigned status;
  unsigned char *buf;
  size_t len;
  uint64_t now;
  int err = 0;
  if (j->by_program) {
    cpu_program_step(p, j);
    return;
  }
  if (j->state == JOB_NEW) {
    /* its ring for the causes: the one watched */
    if (open_watched(p, j, "not found: the process watched is gone\n") != 0) return;
    serve_cpu_open(j->pid, j->start_ticks, j->src, j->frequency, PPROF_READ_BYTES, &j->win,
                   &status, why, sizeof why);
    if (j->win == NULL) {
      answer_text(j, status, why);
      j->state = JOB_DONE;
      return;
    }
    now = cm_mono_ns();
    j->due_ns = now + j->seconds_ns;
    j->turn_ns = now + ocgc_cpuwindow_poll_ns(j->win);
    j->state = JOB_WAITING;
    return;
  }
  now = cm_mono_ns();
  if (now < j->due_ns) {
    err = ocgc_cpuwindow_turn(j->win);
    j->turn_ns = cm_mono_ns() + ocgc_cpuwindow_poll_ns(j->win);
    if (err == 0) return;
    /* OCGC_E_STALE: exec'd or exited, the samples before are in: the
     * window ends here */
    if (err != OCGC_E_STALE) {
      answer_text(j, err == -ENOMEM ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_SERVICE_UNAVAILABLE,
                  err == -ENOMEM ? "out of memory\n" : "the process's CPU could not be read; ask "
                                                        "again\n");
      j->state = JOB_DONE;
      return;
    }
  } else {
    (void)ocgc_cpuwindow_turn(j->win); /* the samples up to the end */
  }
  if (serve_cpu_answer(j->win, j->absolute, &buf, &len, &status, why, sizeof why) != 0)
    answer_text(j, status, why);
  else answer_pprof(p, j, buf, len);
  j->state = JOB_DONE;
}

/* One step of job [j], with no lock held. */
static void step(struct serve_pprof *p, struct pprof_job *j)
{
  struct ocgc_memprof *window = NULL;
  int err;
  if (j->cpu) {
    cpu_step(p, j);
    return;
  }
  if (j->by_program) {
    program_step(p, j);
    return;
  }
  if (j->state == JOB_NEW) {
    if (open_watched(p, j, "not found: the process watched is gone, or has no allocation "
                           "profile\n") != 0)
      return;
    /* the window: its first copy (no rate asked: serve never switches one) */
    if ((err = ocgc_allocwindow_open(j->src, NULL, &j->alloc, NULL)) != 0) {
      copy_failed(j, err);
      j->state = JOB_DONE;
      return;
    }
    if (j->seconds_ns > 0) {
      j->due_ns = cm_mono_ns() + j->seconds_ns;
      j->state = JOB_WAITING;
      return;
    }
    answer_profile(p, j, ocgc_allocwindow_copy(j->alloc));
    j->state = JOB_DONE;
    return;
  }
  /* the end of the window */
  if (exec_since(p, j)) {
    answer_text(j, MHD_HTTP_CONFLICT, "conflict: the process executed another program during "
                                      "the window (same pid, a new image); ask again\n");
    j->state = JOB_DONE;
    return;
  }
  if ((err = ocgc_allocwindow_next(j->alloc, &window)) == 0) answer_profile(p, j, window);
  else if (err == OCGC_E_STALE) answer_text(j, MHD_HTTP_CONFLICT, "the process's profile began "
                                                "anew during the window (a new program in it); "
                                                "ask again\n");
  else copy_failed(j, err);
  ocgc_memprof_free(window);
  j->state = JOB_DONE;
}

/* The job to work on now (the lock held), or NULL and *until the time of
 * the next one due (0: none). */
static struct pprof_job *next_job(struct serve_pprof *p, uint64_t now, uint64_t *until)
{
  struct pprof_job *j;
  *until = 0;
  for (j = p->jobs; j != NULL; j = j->next) {
    if (j->state == JOB_NEW) return j;
    if (j->state == JOB_WAITING) {
      /* a CPU window: its end, or its next turn */
      uint64_t due = (j->win != NULL || j->nwins > 0) && j->turn_ns < j->due_ns ? j->turn_ns
                                                                                : j->due_ns;
      if (due <= now) return j;
      if (*until == 0 || due < *until) *until = due;
    }
  }
  return NULL;
}

/* Take [j] off the list, resume its connection, drop the worker's hold
 * (called with the lock held, which it releases around the resume:
 * libmicrohttpd takes a lock of its own there, and holds it when it calls
 * serve_pprof_completed, which takes ours; the job lives on meanwhile by
 * the worker's hold). */
static void finish(struct serve_pprof *p, struct pprof_job *j)
{
  struct pprof_job **pp;
  for (pp = &p->jobs; *pp != NULL; pp = &(*pp)->next)
    if (*pp == j) {
      *pp = j->next;
      break;
    }
  p->njobs--;
  p->cpu_windows -= j->cpu != 0;
  if (j->resp == NULL && j->status == 0) answer_text(j, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
  pthread_mutex_unlock(&p->lock);
  /* A CPU job's events closed now (their rings unmapped, their files
   * let go), with no lock held: the job is the worker's until its hold is
   * dropped below.  Each window before the ring it borrows. */
  ocgc_cpuwindow_free(j->win);
  j->win = NULL;
  {
    size_t i;
    for (i = 0; i < j->nwins; i++) {
      ocgc_cpuwindow_free(j->wins[i].win);
      ocgc_source_close(j->wins[i].src);
    }
    j->nwins = 0;
  }
  ocgc_allocwindow_free(j->alloc); /* before the ring it borrows */
  j->alloc = NULL;
  ocgc_source_close(j->src);
  j->src = NULL;
  MHD_resume_connection(j->c);
  pthread_mutex_lock(&p->lock);
  job_drop(p, j);
}

/* Answer the waiting windows whose client left (the lock held; released
 * around each resume, as finish() does): their places free at once. */
static void drop_gone(struct serve_pprof *p)
{
  struct pollfd fds[PPROF_JOBS];
  struct pprof_job *js[PPROF_JOBS], *j;
  nfds_t n = 0, i;
  for (j = p->jobs; j != NULL && n < PPROF_JOBS; j = j->next)
    if (j->state == JOB_WAITING && j->fd >= 0) {
      /* A suspended connection's socket stays open until it is resumed,
       * which only finish() does: the fd is the connection's meanwhile. */
      fds[n] = (struct pollfd){.fd = j->fd, .events = POLLRDHUP};
      js[n++] = j;
    }
  if (n == 0 || poll(fds, n, 0) <= 0) return;
  for (i = 0; i < n; i++) {
    if (!(fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) continue;
    /* js[i] lives: only this thread takes a job off the list (finish),
     * and the worker's hold keeps it until then. */
    j = js[i];
    __atomic_sub_fetch(&p->windows, 1, __ATOMIC_RELAXED);  /* as in worker() */
    __atomic_add_fetch(&p->abandoned, 1, __ATOMIC_RELAXED); /* a counter alone */
    answer_text(j, MHD_HTTP_SERVICE_UNAVAILABLE, "the client left\n");
    j->state = JOB_DONE;
    finish(p, j);
  }
}

static void *worker(void *arg)
{
  struct serve_pprof *p = arg;
  uint64_t gone_ns = 0; /* when the waiting windows' sockets were last looked at */
  pthread_mutex_lock(&p->lock);
  while (!p->stopping) {
    uint64_t until, now = cm_mono_ns();
    struct pprof_job *j;
    if (now - gone_ns >= PPROF_GONE_NS) {
      drop_gone(p);
      gone_ns = now;
    }
    if (p->kept != NULL && now - p->kept_ns >= PPROF_LOOK_NS) {
      /* the processes followed: exits noticed within PPROF_LOOK_NS, and
       * the gone ones let go after PPROF_KEEP_NS */
      pthread_mutex_unlock(&p->lock);
      serve_pprof_look(p, now);
      name_followed(p, now);
      pthread_mutex_lock(&p->lock);
      continue;
    }
    j = next_job(p, now, &until);
    /* a window waits: its socket looked at again within PPROF_GONE_NS */
    if (j == NULL && until != 0 && until > gone_ns + PPROF_GONE_NS) until = gone_ns + PPROF_GONE_NS;
    if (j == NULL && p->kept != NULL && (until == 0 || until > p->kept_ns + PPROF_LOOK_NS))
      until = p->kept_ns + PPROF_LOOK_NS;
    if (j == NULL) {
      if (until == 0) {
        pthread_cond_wait(&p->wake, &p->lock);
      } else {
        struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
        pthread_cond_timedwait(&p->wake, &p->lock, &ts);
      }
      continue;
    }
    /* The job is the worker's alone while it is NEW or WAITING: the
     * connection only looks at a DONE one. */
    {
      enum job_state before = j->state;
      pthread_mutex_unlock(&p->lock);
      step(p, j);
      pthread_mutex_lock(&p->lock);
      /* windows under way: a gauge alone (relaxed; read by /metrics) */
      if (before == JOB_NEW && j->state == JOB_WAITING)
        __atomic_add_fetch(&p->windows, 1, __ATOMIC_RELAXED);
      if (before == JOB_WAITING && j->state == JOB_DONE)
        __atomic_sub_fetch(&p->windows, 1, __ATOMIC_RELAXED);
    }
    if (j->state == JOB_DONE) finish(p, j);
  }
  /* Stopping: whatever is left is answered 503. */
  while (p->jobs != NULL) {
    struct pprof_job *j = p->jobs;
    if (j->state == JOB_WAITING) __atomic_sub_fetch(&p->windows, 1, __ATOMIC_RELAXED);
    if (j->resp != NULL) MHD_destroy_response(j->resp);
    j->resp = NULL;
    answer_text(j, MHD_HTTP_SERVICE_UNAVAILABLE, "stopping\n");
    j->state = JOB_DONE;
    finish(p, j);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

int serve_pprof_start(struct serve_pprof *p)
{
  int err = pthread_create(&p->thread, NULL, worker, p);
  p->running = err == 0;
  return err;
}

void serve_pprof_stop(struct serve_pprof *p)
{
  uint64_t deadline;
  if (!p->running) return;
  pthread_mutex_lock(&p->lock);
  p->stopping = 1;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->lock);
  pthread_join(p->thread, NULL);
  p->running = 0;
  /* The answers given at the stop are sent by libmicrohttpd's thread once
   * it sees their connections resumed: the server must not stop before
   * (each connection's completion frees its job), PPROF_STOP_NS at most. */
  pthread_mutex_lock(&p->lock);
  deadline = cm_mono_ns() + PPROF_STOP_NS;
  while (p->live > 0 && cm_mono_ns() < deadline) {
    struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    pthread_cond_timedwait(&p->wake, &p->lock, &ts);
  }
  pthread_mutex_unlock(&p->lock);
}

void serve_pprof_free(struct serve_pprof *p)
{
  unsigned i;
  for (i = 0; i < SERVE_PPROF_CACHE; i++) ocgc_symbols_close(p->cache[i].syms);
  serve_pprof_kept_free(p);
  free(p->members);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->lock);
}
