/* report_cpu_take.c - a gathered CPU window (tools/cpu_window.h) into a
 * report's struct rep_cpu (report.h): libocgc's figures of the window
 * (ocgc/cpuwindow.h: samples, in the collector, lost, threads, the two GC
 * shares), not worked out again, and its folded stacks by phase for the
 * tree (report_cpu.c).  So the page, the JSON report and `ocgc profile
 * --cpu --format json` say the same numbers.
 *
 * Invariants: the folded stacks are libocgc's (ocgc_cpuprof_folded:
 * printable ASCII, bounded at 64 MiB); nothing goes through a file. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_window.h"
#include "report.h"

int rep_cpu_take(struct rep_cpu *c, struct cpu_window *w)
{
  const struct ocgc_cpuwindow *lw = cpu_window_lib(w);
  struct ocgc_cpuwindow_stats ws = OCGC_OPTS_INIT(struct ocgc_cpuwindow_stats);
  size_t len;
  int err;
  memset(c, 0, sizeof c[0]);
  if ((err = ocgc_cpuwindow_stats(lw, &ws)) == 0)
    err = ocgc_cpuprof_folded(ocgc_cpuwindow_profile(lw), ocgc_cpuwindow_names(lw), 1, &c->text,
                              &len);
  if (err == 0) err = rep_cpu_from_folded(c, c->text);
  if (err != 0) {
    tool_say("cannot put the CPU profile in the report: %s", ocgc_strerror(err));
    rep_cpu_free(c);
    return TOOL_EXIT_ERROR;
  }
  c->frequency_hz = ws.frequency_hz;
  c->window_ns = ws.window_ns;
  c->samples = ws.samples;
  c->gc_samples = ws.gc_samples;
  c->gc_unmatched = ws.gc_unmatched;
  c->lost = ws.lost;
  c->threads_seen = ws.threads_seen;
  c->gc_share_samples = ws.gc_share_samples;
  c->ring_known = ws.has_ring;
  c->gc_share_ring = ws.gc_share_ring;
  c->have = 1;
  return 0;
}
