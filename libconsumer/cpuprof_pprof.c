/* cpuprof_pprof.c - a CPU profile (ocgc/cpuprof.h) as pprof's
 * profile.proto, as Go writes its CPU profiles: sample types samples/count
 * and cpu/nanoseconds, period_type cpu/nanoseconds, period 1e9 /
 * frequency, a sample per row with its string labels gc_phase, gc_cause and
 * gc_call (the last two only where they are).
 *
 * What is its own: the values, the labels and the made-up frames of a
 * CPU profile.  Every rule of the format (strings, functions, locations,
 * mappings, escaping, no absolute address by default, the bound, gzip) is
 * pprof_core.c's, the allocation profile's too. */

#include <errno.h>
#include <stdlib.h>

#include "cpuprof_priv.h"
#include "ocgc/wire.h"
#include "opts.h"
#include "pprof_core.h"
#include "profile.h"

#define DEFAULT_MAX (UINT64_C(64) << 20)

enum { SYN_FULL = 0, SYN_STOPPED = 1, SYN_NO_STACK = 2 };

static void sample(struct pprof_w *w, const struct ocgc_cpuprof_row *r, uint64_t period)
{
  struct pb_buf ids = {NULL, 0, 0, SIZE_MAX, 0};
  unsigned d;
  if (r->overflow) {
    pb_varint(&ids, pprof_synthetic(w, SYN_FULL, PROFILE_FRAME_FULL));
  } else if (r->depth == 0) {
    pb_varint(&ids, pprof_synthetic(w, SYN_NO_STACK, CPUPROF_FRAME_NO_STACK));
  } else {
    for (d = 0; d < r->depth; d++) pb_varint(&ids, pprof_location(w, r->frames[d]));
    if (r->end != OCGC_UNWIND_OUTERMOST)
      pb_varint(&ids, pprof_synthetic(w, SYN_STOPPED, CPUPROF_FRAME_STOPPED));
  }
  pb_msg(&w->msg, 1, &ids); /* packed location ids */
  pb_varint(&ids, r->samples);
  pb_varint(&ids, r->samples * period);
  pb_msg(&w->msg, 2, &ids); /* packed values */
  pprof_label(w, &w->msg, "gc_phase", ocgc_gc_phase_name(r->phase));
  if (r->phase != OCGC_GC_MUTATOR) {
    const char *cause = r->cause >= 0 ? ocgc_cause_name((unsigned)r->cause) : NULL;
    pprof_label(w, &w->msg, "gc_cause", cause ? cause : "unknown");
  }
  if (ocgc_gc_call_name(r->call) != NULL)
    pprof_label(w, &w->msg, "gc_call", ocgc_gc_call_name(r->call));
  if (ids.err) w->out.err = ids.err;
  free(ids.p);
  pb_msg(&w->out, 2, &w->msg);
}

int ocgc_cpuprof_pprof(const struct ocgc_cpuprof *p, struct ocgc_symbols *names,
                       const struct ocgc_cpuprof_pprof_opts *opts, unsigned char **out,
                       size_t *len)
{
  struct ocgc_cpuprof_pprof_opts o;
  struct pprof_w w;
  const struct ocgc_cpuprof_row *rows;
  size_t i, n;
  uint64_t period;
  int err;
  if (p == NULL || out == NULL || len == NULL) return -EINVAL;
  *out = NULL;
  *len = 0;
  if ((err = opts_read(&o, sizeof o, opts)) != 0) return err;
  if ((err = pprof_begin(&w, names, o.max_bytes ? o.max_bytes : DEFAULT_MAX,
                         o.absolute_addresses)) != 0)
    return err;
  period = UINT64_C(1000000000) / cpuprof_frequency(p);
  pprof_value_type(&w, 1, "samples", "count");
  pprof_value_type(&w, 1, "cpu", "nanoseconds");
  n = ocgc_cpuprof_rows(p, &rows);
  for (i = 0; i < n && !w.out.err; i++) sample(&w, &rows[i], period);
  pb_uint(&w.out, 9, (uint64_t)o.time_ns);
  pb_uint(&w.out, 10, (uint64_t)o.duration_ns);
  pprof_value_type(&w, 11, "cpu", "nanoseconds");
  pb_uint(&w.out, 12, period);
  pb_uint(&w.out, 13, pprof_str(&w, "ocgc: cpu-clock samples of user space taken from outside "
                                    "(perf_event_open); gc_phase from each stack's collector "
                                    "frames, gc_cause from the ring's collection at its time"));
  if (o.comment != NULL) pb_uint(&w.out, 13, pprof_str(&w, o.comment));
  pb_uint(&w.out, 14, pprof_str(&w, "cpu"));
  return pprof_end(&w, o.no_gzip, out, len);
}
