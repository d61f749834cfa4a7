/* watched.c - the view of one watched process that its groupings share
 * (watched.h): its collections by kind and cause and its events as its
 * series count them (ocgc_watched_collections, ocgc_watched_events of
 * ocgc/watch.h), its program's label, its runtime.  It reads only the
 * public struct ocgc_watched that watch.c fills, so that programs.c and
 * exits.c, below watch.c, never reach back into the watch that calls them.
 *
 * Invariants: a label is the program's name cut at a character boundary
 * to OCGC_EXPO_LABEL_MAX bytes, the same for a process's series, its
 * program's sums and its ends; a figure the process cannot give (no totals
 * yet, no snapshot yet) is 0. */

#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "ocgc/snapshot.h"
#include "watched.h"

uint64_t ocgc_watched_collections(const struct ocgc_watched *p, unsigned kind, unsigned cause)
{
  struct ocgc_cause_row row = OCGC_OPTS_INIT(struct ocgc_cause_row);
  if (kind >= OCGC_KIND_COUNT || cause >= OCGC_CAUSE_COUNT) return 0;
  if (p->info.has_ext) return p->have_totals ? p->totals.by_cause[kind][cause] : 0;
  return p->snap != NULL && ocgc_snapshot_cause(p->snap, kind, cause, &row) == 0 ? row.count : 0;
}

uint64_t ocgc_watched_events(const struct ocgc_watched *p)
{
  return p->have_written ? p->written : p->counters.events_seen;
}

void watched_label(const struct ocgc_watched *p, char *out)
{
  cm_utf8_cut(p->program, OCGC_EXPO_LABEL_MAX, out);
}

void watched_runtime(const struct ocgc_watched *p, struct runtime_label *out)
{
  const struct ocgc_source_info *in = &p->info;
  memset(out, 0, sizeof *out);
  snprintf(out->version, sizeof out->version, "%s", in->has_ext ? in->ocaml_version : "5");
  snprintf(out->variant, sizeof out->variant, "%s",
           !in->has_ext ? "stock" : in->flags & OCGC_EXT_NATIVE ? "native" : "bytecode");
  snprintf(out->ocgc_version, sizeof out->ocgc_version, "%s", in->has_ext ? in->ocgc_version : "");
}
