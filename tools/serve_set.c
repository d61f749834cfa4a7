/* serve_set.c - the processes `ocgc serve` watches (serve.h): the PIDs of
 * the command line, or with --all every process ocgc_list() finds, each
 * with its own source and aggregator (from the oldest event its ring
 * holds), drained, snapshotted and read from /proc at each refresh.
 *
 * Invariants: a process is known by its pid and its start time, so a pid
 * reused by a new process is a new entry; a process that tool_alive() says
 * is gone (or whose /proc entry went) is dropped right after its last
 * drain, before anything is written, so nothing stale is served; libocgc
 * handles are used by one thread at a time (the caller's lock). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "serve.h"

#define LIST_EVERY_NS 1000000000u

void serve_buf_put(void *ctx, const char *s, size_t n)
{
  struct serve_buf *b = ctx;
  if (b->failed || n == 0) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 65536;
    char *p;
    while (cap < b->n + n + 1) cap *= 2;
    if (cap > SERVE_BUF_MAX || (p = realloc(b->s, cap)) == NULL) { b->failed = 1; return; }
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

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
  if ((err = ocgc_agg_new(p->src, &go, &p->agg)) != 0 ||
      (err = ocgc_source_info(p->src, &p->info)) != 0) {
    proc_free(p);
    return err;
  }
  p->pid = pid;
  p->start_ticks = start_ticks;
  p->drain_max = tool_drain_events(p->src);
  snprintf(p->pid_label, sizeof p->pid_label, "%d", pid);
  if (p->info.has_ext) snprintf(p->program, sizeof p->program, "%s", p->info.program);
  else read_comm(pid, p->program, sizeof p->program);
  p->next = s->procs;
  s->procs = p;
  s->nprocs++;
  return 0;
}

static int watched(const struct serve_set *s, int pid, uint64_t start_ticks)
{
  const struct serve_proc *p;
  for (p = s->procs; p != NULL; p = p->next)
    if (p->pid == pid && p->start_ticks == start_ticks) return 1;
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
  return 0;
}

static int list_one(const struct ocgc_list_entry *e, void *ctx)
{
  struct serve_set *s = ctx;
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *src;
  if (e->state != OCGC_LIST_RUNNING || watched(s, e->pid, e->start_time)) return 0;
  ao.dir = s->dir;
  if (s->nprocs >= SERVE_MAX_WATCHED || ocgc_source_open_pid(e->pid, &ao, &src) != 0 ||
      proc_add(s, src, e->pid, e->start_time) != 0)
    s->errors++;
  return 0;
}

/* Drain, snapshot and read one process: 0, or -1 if it is gone. */
static int proc_refresh(struct serve_set *s, struct serve_proc *p)
{
  struct ocgc_snapshot *snap;
  struct ocgc_totals t;
  unsigned r;
  if (tool_drain_agg(p->agg, p->drain_max, NULL) != 0) s->errors++;
  if (!tool_alive(p->src) || procstat_read(p->pid, &p->ps) != 0) return -1;
  if (ocgc_agg_snapshot(p->agg, &snap) == 0) {
    ocgc_snapshot_free(p->snap);
    p->snap = snap;
  } else s->errors++;
  if (ocgc_source_totals(p->src, &t) == 0) { p->totals = t; p->have_totals = 1; }
  p->config.sz = sizeof p->config;
  p->have_config = ocgc_source_gc_config(p->src, &p->config) == 0;
  p->have_written = p->info.has_ext;
  p->written = 0;
  for (r = 0; p->have_written && r < p->info.max_domains; r++) {
    uint64_t w;
    if (ocgc_source_written(p->src, r, &w) == 0) p->written += w;
    else p->have_written = 0;
  }
  return p->snap != NULL ? 0 : -1;
}

void serve_set_refresh(struct serve_set *s)
{
  struct serve_proc **pp = &s->procs;
  uint64_t t0 = tool_now_ns();
  if (s->all && (s->listed_ns == 0 || t0 - s->listed_ns >= LIST_EVERY_NS)) {
    if (ocgc_list(list_one, s, NULL) < 0) s->errors++;
    s->listed_ns = t0;
  }
  while (*pp != NULL) {
    struct serve_proc *p = *pp;
    if (proc_refresh(s, p) == 0) { pp = &p->next; continue; }
    *pp = p->next;
    s->nprocs--;
    proc_free(p);
  }
  s->refresh_ns = tool_now_ns() - t0;
}

void serve_set_index(const struct serve_set *s, struct serve_buf *out)
{
  const struct serve_proc *p;
  char line[TOOL_ESC_SIZE(sizeof p->program) + 128], prog[TOOL_ESC_SIZE(sizeof p->program)];
  int n = snprintf(line, sizeof line, "ocgc serve: %zu watched process%s; metrics at /metrics\n"
                   "\nPID\tPROGRAM\n", s->nprocs, s->nprocs == 1 ? "" : "es");
  serve_buf_put(out, line, (size_t)n);
  for (p = s->procs; p != NULL; p = p->next) {
    n = snprintf(line, sizeof line, "%d\t%s\n", p->pid, tool_esc(p->program, prog, sizeof prog));
    serve_buf_put(out, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  }
}

void serve_set_free(struct serve_set *s)
{
  while (s->procs != NULL) {
    struct serve_proc *p = s->procs;
    s->procs = p->next;
    proc_free(p);
  }
  s->nprocs = 0;
}
