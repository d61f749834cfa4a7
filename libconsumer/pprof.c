/* pprof.c - an allocation profile as pprof's profile.proto
 * (ocgc_pprof_write), gzipped as `go tool pprof`, Pyroscope and Parca take
 * it.
 *
 * What is its own: the six sample types (ocgc_profile_values, Go's four
 * first) and, when given, the collector's CPU charged to each stack
 * (gc_cpu, with its model's comment), a sample per stack with any figure not 0 and its "kind" label,
 * the made-up frames of the producer's table (the overflow row, a cut
 * stack), period_type space/bytes and the rate, and the comments (the
 * sampling, the rate, the in-use rule).  Everything else of the format
 * (strings, functions, locations, mappings, escaping, no absolute address
 * by default, the bound of max_bytes, gzip) is pprof_core.c's, shared with
 * CPU profiles. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/profile.h"
#include "opts.h"
#include "pprof_core.h"
#include "profile.h"

#define DEFAULT_MAX (UINT64_C(64) << 20)

/* The made-up frames of an allocation profile (pprof_synthetic). */
enum { SYN_FULL = 0, SYN_CUT = 1 };

/* A stack's sample: its six figures, and its charged GC CPU if [gc_cpu]. */
static void sample(struct pprof_w *w, const struct ocgc_memprof_stack *s,
                   const int64_t v[OCGC_PV_COUNT], const uint64_t *gc_cpu)
{
  struct pb_buf ids = {NULL, 0, 0, SIZE_MAX, 0};
  unsigned d, i;
  if (s->overflow) {
    pb_varint(&ids, pprof_synthetic(w, SYN_FULL, PROFILE_FRAME_FULL));
  } else {
    for (d = 0; d < s->depth; d++) pb_varint(&ids, pprof_location(w, s->frames[d]));
    if (s->cut) pb_varint(&ids, pprof_synthetic(w, SYN_CUT, PROFILE_FRAME_CUT));
  }
  pb_msg(&w->msg, 1, &ids); /* packed location ids */
  for (i = 0; i < OCGC_PV_COUNT; i++) pb_varint(&ids, (uint64_t)v[i]);
  if (gc_cpu != NULL) pb_varint(&ids, *gc_cpu > INT64_MAX ? (uint64_t)INT64_MAX : *gc_cpu);
  pb_msg(&w->msg, 2, &ids); /* packed values (int64 as two's complement varints) */
  if (!s->overflow) pprof_label(w, &w->msg, "kind", ocgc_memprof_kind_name(s->kind));
  if (ids.err) w->out.err = ids.err;
  free(ids.p);
  pb_msg(&w->out, 2, &w->msg);
}

/* The rate the samples were drawn at, said in a comment: the period says
 * the rate in force at the copy's end, not whether it was a window's lease
 * nor whether it changed during the window. */
static void rate_comment(struct pprof_w *w, const struct ocgc_memprof *p, int window,
                         char *line, size_t cap)
{
  int n = snprintf(line, cap, "ocgc: samples drawn at a rate of %" PRIu64 " bytes (%s)",
                   p->rate_bytes,
                   p->rate_leased ? "a lease: ocgc profile --rate" : "the program's base rate");
  if (window && p->rate_changes > 0 && n > 0 && (size_t)n < cap)
    snprintf(line + n, cap - (size_t)n,
             "; the rate changed %" PRIu64 " times during the window: its samples were drawn "
             "at more than one rate, each weighed by its own", p->rate_changes);
  pb_uint(&w->out, 13, pprof_str(w, line));
}

int ocgc_pprof_write(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                     const struct ocgc_pprof_opts *opts, unsigned char **out, size_t *len)
{
  struct ocgc_pprof_opts o;
  struct pprof_w w;
  char rate_line[320]; /* the rate's comment (the string table borrows it) */
  size_t i;
  int err;
  unsigned v;
  if (p == NULL || out == NULL || len == NULL) return -EINVAL;
  *out = NULL;
  *len = 0;
  if ((err = opts_read(&o, sizeof o, opts)) != 0) return err;
  if (o.default_value_set && (unsigned)o.default_value >= OCGC_PV_COUNT) return -EINVAL;
  if ((err = pprof_begin(&w, syms, o.max_bytes ? o.max_bytes : DEFAULT_MAX,
                         o.absolute_addresses)) != 0)
    return err;

  for (v = 0; v < OCGC_PV_COUNT; v++) {
    const char *name = ocgc_profile_value_name((enum ocgc_profile_value)v);
    pprof_value_type(&w, 1, name, strstr(name, "space") ? "bytes" : "count");
  }
  if (o.gc_cpu_ns != NULL) pprof_value_type(&w, 1, "gc_cpu", "nanoseconds");
  for (i = 0; i < p->nstacks && !w.out.err; i++) {
    int64_t vals[OCGC_PV_COUNT];
    const uint64_t *gc = o.gc_cpu_ns != NULL ? &o.gc_cpu_ns[i] : NULL;
    int any = gc != NULL && *gc != 0;
    ocgc_profile_values(&p->stack[i], vals);
    for (v = 0; v < OCGC_PV_COUNT; v++) any |= vals[v] != 0;
    if (any) sample(&w, &p->stack[i], vals, gc);
  }
  pb_uint(&w.out, 9, (uint64_t)o.time_ns);
  pb_uint(&w.out, 10, (uint64_t)o.duration_ns);
  pprof_value_type(&w, 11, "space", "bytes");
  pb_uint(&w.out, 12, p->rate_bytes);
  pb_uint(&w.out, 13, pprof_str(&w, "ocgc: sampled by the OCaml runtime's ocgc patch; "
                                    "figures are estimates (sd sqrt(bytes x period))"));
  rate_comment(&w, p, o.duration_ns != 0, rate_line, sizeof rate_line);
  if (o.gc_cpu_ns != NULL) pb_uint(&w.out, 13, pprof_str(&w, PROFILE_GC_CPU_MODEL));
  /* The in-use rule (ocgc/memprof.h), said in every profile. */
  pb_uint(&w.out, 13, pprof_str(&w, p->live_known ? PROFILE_INUSE_LIVE : PROFILE_INUSE_OLD));
  pb_uint(&w.out, 14, pprof_str(&w, ocgc_profile_value_name(
                                       o.default_value_set ? o.default_value : OCGC_PV_ALLOC_SPACE)));
  return pprof_end(&w, o.no_gzip, out, len);
}
