/* serve_pprof_cpu.c - `ocgc serve`'s CPU profiles (/debug/pprof/profile?
 * pid=N&seconds=S, Go's path and meaning): a window of libocgc's
 * (ocgc/cpuwindow.h) opened with serve's bounds, and its answers: the
 * profile, or the status and one line saying why there is none.  The
 * profile worker (serve_pprof.c) owns the job, turns the window while it
 * runs and hands the answer to the connection.
 *
 * Invariants:
 * - called by the profile worker only, with no lock held (the window reads
 *   the target's ring and files);
 * - a window's memory is bounded by serve's names bounds (PPROF_*), the
 *   sampler's threads (SERVE_CPU_THREADS rings of 256 KiB) and libocgc's
 *   profile bounds, whatever the target does;
 * - the answer's comment says the window's figures (samples, threads,
 *   lost, the GC share by the stacks and by the ring): numbers only;
 * - a refusal of perf_event_open (serve is not root, lacks CAP_PERFMON, or
 *   --run-as dropped it) is 403 with libocgc's one line: the client may
 *   not have what this exporter may not take; never a crash. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "serve.h"

void serve_cpu_open(int pid, uint64_t start_ticks, struct ocgc_source *src, unsigned frequency,
                    uint64_t read_bytes, struct ocgc_cpuwindow **out, unsigned *status,
                    char *why, size_t n)
{
  struct ocgc_cpuwindow_opts o = OCGC_OPTS_INIT(struct ocgc_cpuwindow_opts);
  struct ocgc_symbols_opts so = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  enum ocgc_cpuwindow_part failed = OCGC_CPUWINDOW_PROFILE;
  int err;
  so.max_read_bytes = read_bytes;
  so.max_names_bytes = read_bytes;
  so.max_process_bytes = read_bytes;
  o.frequency_hz = frequency;
  o.max_threads = SERVE_CPU_THREADS;
  o.symbols = &so;
  o.max_read_bytes = read_bytes;
  *out = NULL;
  *status = MHD_HTTP_OK;
  if ((err = ocgc_cpuwindow_open(pid, start_ticks, src, &o, out, &failed)) == 0) return;
  if (failed == OCGC_CPUWINDOW_SAMPLER && err == OCGC_E_PERF_DENIED) {
    const char *hint = ocgc_cpu_denied_hint(err);
    *status = MHD_HTTP_FORBIDDEN;
    snprintf(why, n, "forbidden: this exporter may not sample process %d's CPU: %s\n", pid,
             hint != NULL ? hint : ocgc_strerror(err));
  } else if (err == -ESRCH || err == OCGC_E_STALE || err == -ENOENT) {
    *status = MHD_HTTP_NOT_FOUND;
    snprintf(why, n, "not found: the process watched is gone, or executed another program\n");
  } else if (failed == OCGC_CPUWINDOW_FILES) {
    *status = MHD_HTTP_SERVICE_UNAVAILABLE;
    snprintf(why, n, "the process's executable files could not be read (%s); ask again\n",
             ocgc_strerror(err));
  } else if (failed == OCGC_CPUWINDOW_SAMPLER) {
    *status = MHD_HTTP_SERVICE_UNAVAILABLE;
    snprintf(why, n, "the process's CPU could not be sampled (%s); ask again\n",
             ocgc_strerror(err));
  } else {
    *status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    snprintf(why, n, "out of memory\n");
  }
}

int serve_cpu_answer(struct ocgc_cpuwindow *w, int absolute, unsigned char **buf, size_t *len,
                     unsigned *status, char *why, size_t n)
{
  struct ocgc_cpuprof_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_cpuprof_pprof_opts);
  struct ocgc_cpuwindow_stats ws = OCGC_OPTS_INIT(struct ocgc_cpuwindow_stats);
  char comment[300], ring[80] = "no ring read";
  int err;
  ocgc_cpuwindow_end(w);
  ocgc_cpuwindow_stats(w, &ws);
  if (ws.has_ring)
    snprintf(ring, sizeof ring, "the ring: %.1f%% of the wall time in collections",
             100.0 * ws.gc_share_ring);
  /* the window's figures, ocgc's words and numbers only */
  snprintf(comment, sizeof comment, "ocgc serve: process %d: %" PRIu64 " samples from %" PRIu64
           " threads, %" PRIu64 " lost (rings full between two reads), %.1f%% in the collector "
           "by their stacks; %s", ws.pid, ws.samples, ws.threads_seen, ws.lost,
           100.0 * ws.gc_share_samples, ring);
  o.max_bytes = SERVE_BUF_MAX;
  o.absolute_addresses = absolute;
  o.comment = comment;
  if ((err = ocgc_cpuwindow_pprof(w, &o, buf, len)) == 0) return 0;
  *status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  snprintf(why, n, err == -EFBIG ? "the profile outgrew its bound (64 MiB)\n" : "out of memory\n");
  return -1;
}
