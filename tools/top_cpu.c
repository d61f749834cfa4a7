/* top_cpu.c - `ocgc top`'s CPU panel (top_cpu.h): a CPU window
 * (cpu_window.h: the sampler, names, unwinder and the ring's collections,
 * as `ocgc profile --cpu` gathers) every TOP_CPU_WINDOW_NS, each ended and
 * taken into a struct rep_cpu (report_cpu_take.c: cpu_window's own
 * figures, the samples by phase, the top functions) and another begun.
 *
 * Invariants:
 * - off unless asked: sampling costs the target (a timer interrupt and a
 *   stack copy a sample, docs/cpu-profiling.md); switching off closes the
 *   sampler at once;
 * - nothing goes to stderr while the panel runs (cpu_window and
 *   rep_cpu_take say their errors there, and the terminal may be top's
 *   screen): their lines go to /dev/null, and a refusal is shown as
 *   libocgc's one line (ocgc_cpu_denied_hint) in the panel;
 * - memory: one window's profile and the last window's figures; a window
 *   that cannot be taken keeps the last one's figures. */

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "common.h"
#include "cpu_window.h"
#include "top_cpu.h"

/* stderr to /dev/null for a while (the screen is the terminal); the
 * descriptor to put back, or -1. */
static int quiet_begin(void)
{
  int saved, null;
  fflush(stderr);
  if ((saved = dup(STDERR_FILENO)) < 0) return -1;
  if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0 || dup2(null, STDERR_FILENO) < 0) {
    if (null >= 0) close(null);
    close(saved);
    return -1;
  }
  close(null);
  return saved;
}

static void quiet_end(int saved)
{
  if (saved < 0) return;
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
}

void top_cpu_init(struct top_cpu *t, int pid, struct ocgc_source *src)
{
  memset(t, 0, sizeof *t);
  t->pid = pid;
  t->src = src;
}

static int open_window(struct top_cpu *t)
{
  char label[32];
  int q = quiet_begin(), rc;
  snprintf(label, sizeof label, "process %d", t->pid);
  rc = cpu_window_open(&t->cw, t->pid, label, t->src, NULL, TOP_CPU_HZ, 1);
  quiet_end(q);
  if (rc == TOOL_EXIT_DENIED) {
    snprintf(t->why, sizeof t->why, "%s", ocgc_cpu_denied_hint(OCGC_E_PERF_DENIED));
  } else if (rc != 0) {
    snprintf(t->why, sizeof t->why, "cannot sample process %d's CPU ('ocgc profile %d --cpu "
             "--duration 1s -o /dev/null' says why)", t->pid, t->pid);
  }
  t->window_start_ns = cm_mono_ns();
  return rc;
}

int top_cpu_start(struct top_cpu *t)
{
  int rc;
  if (t->on) return 0;
  t->denied = 0;
  t->why[0] = '\0';
  if ((rc = open_window(t)) != 0) {
    t->denied = rc == TOOL_EXIT_DENIED;
    return rc;
  }
  t->on = 1;
  return 0;
}

void top_cpu_stop(struct top_cpu *t)
{
  cpu_window_free(t->cw);
  t->cw = NULL;
  rep_cpu_free(&t->last);
  t->on = 0;
}

int top_cpu_tick(struct top_cpu *t, uint64_t now_ns)
{
  struct rep_cpu next;
  int q, rc, stale;
  if (!t->on || t->cw == NULL) return 0;
  stale = cpu_window_turn(t->cw) != 0; /* exec'd, gone, or no memory: this window ends */
  if (!stale && now_ns - t->window_start_ns < TOP_CPU_WINDOW_NS) return 0;
  cpu_window_end(t->cw);
  q = quiet_begin();
  rc = rep_cpu_take(&next, t->cw);
  quiet_end(q);
  if (rc == 0) {
    rep_cpu_free(&t->last);
    t->last = next;
  }
  cpu_window_free(t->cw);
  t->cw = NULL;
  if (stale) {
    t->on = 0; /* the process is another program, or gone: top says so */
    return 1;
  }
  if (open_window(t) != 0) t->on = 0;
  return 1;
}

void top_cpu_free(struct top_cpu *t) { top_cpu_stop(t); }
