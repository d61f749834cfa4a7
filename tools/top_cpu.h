/* top_cpu.h - `ocgc top`'s CPU panel (tools/top_cpu.c): the selected
 * process's CPU sampled (cpu_window.h, as `ocgc profile --cpu`) in
 * windows of a few seconds, the last whole window's hottest functions and
 * the GC share of its samples by phase.  Off until asked (--cpu, or the
 * key c): sampling costs the target some CPU.  Private to tools/. */
#ifndef OCGC_TOOLS_TOP_CPU_H
#define OCGC_TOOLS_TOP_CPU_H

#include <stdint.h>

#include "ocgc/consumer.h"
#include "report.h"

#define TOP_CPU_WINDOW_NS UINT64_C(3000000000) /* "the last few seconds" */
#define TOP_CPU_HZ 100                          /* Go's default */

struct cpu_window;

struct top_cpu {
  int pid;
  struct ocgc_source *src;  /* borrowed: the ring, for the labels and its share */
  int on;                   /* sampling */
  int denied;               /* the last switch on was refused: why[] */
  char why[400];            /* the refusal or failure, one line */
  struct cpu_window *cw;    /* the window being gathered */
  uint64_t window_start_ns; /* its start (cm_mono_ns) */
  struct rep_cpu last;      /* the last whole window's (have 0: none yet) */
};

/* Nothing sampled yet: [pid], its ring [src]. */
void top_cpu_init(struct top_cpu *t, int pid, struct ocgc_source *src);
/* Switch sampling on: 0, or the exit code of a refusal (TOOL_EXIT_DENIED:
 * why[] is libocgc's one line) or of a failure (why[] says).  Nothing on
 * stderr: the screen may be the terminal's. */
int top_cpu_start(struct top_cpu *t);
/* Switch it off (the last window's figures go too). */
void top_cpu_stop(struct top_cpu *t);
/* At each poll: a turn of the window; past TOP_CPU_WINDOW_NS its figures
 * become the last window's and a new window starts.  1 when the last
 * window changed (a redraw is due). */
int top_cpu_tick(struct top_cpu *t, uint64_t now_ns);
void top_cpu_free(struct top_cpu *t);

#endif /* OCGC_TOOLS_TOP_CPU_H */
