/* cpuprof_folded.c - a CPU profile (ocgc/cpuprof.h) as folded stacks,
 * "outer;...;inner COUNT" a line, for flamegraph.pl and speedscope.
 *
 * Invariants: frames are named by the allocation profile's one rule
 * (profile_frame_name: escaped, ';' and ' ' too, so no name forges a
 * frame or a count); the made-up frames are cpuprof_priv.h's and
 * profile.h's; the output stops at FOLDED_MAX bytes (-EFBIG). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuprof_priv.h"
#include "pbwrite.h"
#include "profile.h"

#define FOLDED_MAX (UINT64_C(64) << 20)

static void puts_(struct pb_buf *b, const char *s) { pb_put(b, s, strlen(s)); }

int ocgc_cpuprof_folded(const struct ocgc_cpuprof *p, struct ocgc_symbols *names, int by_phase,
                        char **out, size_t *len)
{
  struct pb_buf b = {NULL, 0, 0, FOLDED_MAX, 0};
  const struct ocgc_cpuprof_row *rows;
  size_t i, n;
  if (p == NULL || out == NULL) return -EINVAL;
  *out = NULL;
  n = ocgc_cpuprof_rows(p, &rows);
  for (i = 0; i < n && !b.err; i++) {
    const struct ocgc_cpuprof_row *r = &rows[i];
    char num[32], name[PROFILE_NAME_SIZE];
    unsigned d;
    if (by_phase) {
      puts_(&b, "[");
      puts_(&b, ocgc_gc_phase_name(r->phase));
      puts_(&b, "];");
    }
    if (r->overflow) {
      puts_(&b, PROFILE_FRAME_FULL);
    } else if (r->depth == 0) {
      puts_(&b, CPUPROF_FRAME_NO_STACK);
    } else {
      if (r->end != OCGC_UNWIND_OUTERMOST) puts_(&b, CPUPROF_FRAME_STOPPED ";");
      for (d = r->depth; d > 0; d--) {
        puts_(&b, profile_frame_name(names, r->frames[d - 1], " ;", name, sizeof name));
        if (d > 1) puts_(&b, ";");
      }
    }
    snprintf(num, sizeof num, " %" PRIu64 "\n", r->samples);
    puts_(&b, num);
  }
  pb_put(&b, "", 1); /* the NUL */
  if (b.err) {
    free(b.p);
    return b.err;
  }
  *out = (char *)b.p;
  if (len != NULL) *len = b.len - 1;
  return 0;
}
