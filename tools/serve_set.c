/* serve_set.c - the processes `ocgc serve` watches (serve.h): libocgc's
 * watch (ocgc/watch.h: which processes, each ring's schedule, liveness,
 * slow rings, bounds, --by program's sums) made from the command line's
 * options, and its failures said once on stderr (a ring that fails, a
 * process of an OCaml release too new to read).  Used by one thread at a time: the
 * main thread before the poll thread starts, then the poll thread. */

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "utf8.h"
#include "serve.h"

/* --program: a name of the target's choosing, matched as it is (the
 * regex's time is bounded by the name's 128 bytes). */
static int selected(const char *program, void *ctx)
{
  const struct serve_set *s = ctx;
  return regexec(s->program_re, program, 0, NULL, 0) == 0;
}

static int yield_asked(void *ctx)
{
  const struct serve_set *s = ctx;
  return s->yield(s->yield_ctx);
}

static void said_error(const struct ocgc_watched *p, int err, void *ctx)
{
  char prog[TOOL_ESC_SIZE(sizeof p->program)];
  (void)ctx;
  tool_say("process %d (%s): %s (counted in ocgc_serve_errors_total; said once)", p->pid,
           tool_esc(p->program, prog, sizeof prog), ocgc_strerror(err));
}

/* A process of an OCaml newer than every numbering known, met for the
 * first time (libocgc tells each once, a few a second at most): serve
 * cannot read it (it has no --ids: one numbering for every process would
 * misread the others), the one-shot commands can. */
static void said_unknown_release(int pid, const char *version, void *ctx)
{
  char v[TOOL_ESC_SIZE(16)];
  (void)ctx;
  if (version[0] != '\0')
    tool_say("process %d (OCaml %s): %s; not watched (counted in "
             "ocgc_serve_unknown_release_processes; said once): ocgc report, stat, trace, "
             "dump and top read it with --ids", pid, tool_esc(version, v, sizeof v),
             ocgc_strerror(OCGC_E_IDS_UNKNOWN));
  else
    tool_say("process %d: %s; not watched (counted in ocgc_serve_unknown_release_processes; "
             "said once): ocgc report, stat, trace, dump and top read it with --ids", pid,
             ocgc_strerror(OCGC_E_IDS_UNKNOWN));
}

int serve_set_start(struct serve_set *s)
{
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  int err;
  o.all = s->all;
  o.dir = s->dir;
  o.only_uid = s->have_uid;
  o.uid = s->uid;
  o.select = s->program_re != NULL ? selected : NULL;
  o.max_processes = s->max_procs;
  o.max_per_user = s->max_per_user;
  /* /metrics has no per-phase histogram, and its histograms have fixed
   * buckets: counted at them, with no fine histogram (a few hundred bytes
   * per process that stay in the cache, nothing to copy at a scrape). */
  o.bounds_ns = ocgc_expo_bounds_ns();
  o.nbounds = OCGC_EXPO_NBUCKETS;
  o.yield = s->yield != NULL ? yield_asked : NULL;
  o.on_error = said_error;
  o.on_unknown_release = said_unknown_release;
  o.by_program = s->by_program;
  o.ctx = s;
  if (s->flight != NULL) {
    if ((err = serve_flight_open(s->flight, &o)) != 0) return err;
  }
  if ((err = ocgc_watch_new(&o, &s->watch)) != 0) {
    tool_say("cannot watch: %s", ocgc_strerror(err));
    return TOOL_EXIT_ERROR;
  }
  return 0;
}

int serve_set_add_pid(struct serve_set *s, int pid)
{
  int err = ocgc_watch_add_pid(s->watch, pid);
  if (err == 0) return 0;
  tool_say_attach_error(pid, s->dir, err);
  return tool_exit_code(err);
}

int serve_set_fd(const struct serve_set *s)
{
  return ocgc_watch_fd(s->watch);
}

uint64_t serve_set_poll(struct serve_set *s, uint64_t now)
{
  return ocgc_watch_poll(s->watch, now);
}

void serve_set_refresh(struct serve_set *s, uint64_t deadline)
{
  ocgc_watch_refresh(s->watch, deadline);
}

void serve_set_index(const struct serve_set *s, ocgc_put_fn put, void *out)
{
  const struct ocgc_watched *p;
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  char line[TOOL_ESC_SIZE(sizeof p->program) + 128], prog[TOOL_ESC_SIZE(sizeof p->program)];
  int n;
  ocgc_watch_stats(s->watch, &st);
  n = snprintf(line, sizeof line, "ocgc serve: %llu watched process%s; metrics at /metrics\n"
               "\nPID\tPROGRAM\n", (unsigned long long)st.processes,
               st.processes == 1 ? "" : "es");
  put(out, line, (size_t)n);
  for (p = ocgc_watch_next(s->watch, NULL); p != NULL; p = ocgc_watch_next(s->watch, p)) {
    n = snprintf(line, sizeof line, "%d\t%s\n", p->pid, tool_esc(p->program, prog, sizeof prog));
    put(out, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  }
}

void serve_set_free(struct serve_set *s)
{
  ocgc_watch_free(s->watch);
  s->watch = NULL;
}

void serve_set_members(struct serve_set *s)
{
  const struct ocgc_watched *p;
  struct serve_pprof_member *m;
  size_t n = 0, cap = 0;
  if (s->pprof == NULL) return;
  for (p = ocgc_watch_next(s->watch, NULL); p != NULL; p = ocgc_watch_next(s->watch, p)) cap++;
  if ((m = calloc(cap ? cap : 1, sizeof *m)) == NULL) return; /* the last list stands */
  for (p = ocgc_watch_next(s->watch, NULL); p != NULL && n < cap; p = ocgc_watch_next(s->watch, p)) {
    m[n].pid = p->pid;
    m[n].start_ticks = p->start_ticks;
    /* the name /metrics labels it with, cut as there: what ?program= asks */
    cm_utf8_cut(p->program, OCGC_EXPO_LABEL_MAX, m[n++].program);
  }
  serve_pprof_members(s->pprof, m, n); /* taken over */
}
