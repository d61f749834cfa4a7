/* report_slicework.c - the major slices' work in the text and JSON GC
 * reports (report.h): what a stock OCaml 5.3+ runtime asked of its major
 * slices (libocgc's ocgc_snapshot_slicework, ocgc/slicework.h), so that a
 * long slice is explained by the work it set out to do and what set it.
 *
 * Invariants: a report of a ring without those counters (ocgc's runtime,
 * OCaml 5.2, a 5.3 ring read with 5.2 ids, no slice yet) has no section and
 * no member, and its JSON keeps schema version REPORT_SCHEMA_VERSION: it
 * is byte for byte what it was; one with them says schema version
 * REPORT_SCHEMA_VERSION_5 (docs/report-json.md, "Versioning").
 * Every figure is a number the library counted; nothing here is a target's
 * string. */

#include <inttypes.h>

#include "json.h"
#include "report.h"

int rep_slicework_get(const struct ocgc_snapshot *snap, struct ocgc_slicework *w)
{
  w->sz = sizeof *w;
  return snap != NULL && ocgc_snapshot_slicework(snap, w) == 0;
}

/* The figures of one slice, as words for people. */
static void text_slice(FILE *out, const char *what, const struct ocgc_major_slice *s)
{
  char b[32];
  fprintf(out, "  %-24s %s for %" PRId64 " units, set by %s (budget %" PRId64 "; heap %" PRIu64
          " words, %" PRIu64 " words allocated since its domain's previous slice)\n", what,
          s->duration_ns != 0 ? cm_fmt_ns(b, sizeof b, s->duration_ns) : "(span not read)", s->work,
          ocgc_slice_driver_name(s->driver), s->budget, s->heap_words, s->allocated_words);
}

void rep_slicework_text(FILE *out, const struct ocgc_snapshot *snap)
{
  struct ocgc_slicework w;
  int d;
  if (!rep_slicework_get(snap, &w)) return;
  fprintf(out, "\nMajor slices' work (%" PRIu64 " slices; GC work units, about a word marked "
          "or swept)\n", w.slices);
  fprintf(out, "  %-24s %12" PRIu64 "  (mean %" PRIu64 " a slice: max(target - work counter, "
          "budget))\n", "work set out", w.work, w.work / w.slices);
  fprintf(out, "  %-24s %12" PRIu64 "  (allocation %" PRIu64 ", dependent %" PRIu64
          ", extra %" PRIu64 ")\n", "asked by the slices", w.alloc_work + w.dependent_work +
          w.extra_work, w.alloc_work, w.dependent_work, w.extra_work);
  fprintf(out, "  %-24s %12" PRIu64 "  (the runtime's totals since the process began)\n",
          "asked of the GC", w.work_asked);
  fprintf(out, "  %-24s %12" PRIu64 "  (%s by %" PRIu64 ")\n", "done by the GC", w.work_done,
          w.work_done >= w.work_asked ? "ahead" : "behind",
          w.work_done >= w.work_asked ? w.work_done - w.work_asked : w.work_asked - w.work_done);
  fprintf(out, "  %-24s", "slices set by");
  for (d = 0; d < (int)OCGC_SLICE_DRIVER_COUNT; d++)
    fprintf(out, "%s %s %" PRIu64, d == 0 ? "" : ",", ocgc_slice_driver_name(d), w.by_driver[d]);
  fputc('\n', out);
  if (w.longest.duration_ns != 0) text_slice(out, "longest slice", &w.longest);
  text_slice(out, "last slice", &w.last);
}

static void json_slice(struct json *j, const char *key, const struct ocgc_major_slice *s, int known)
{
  json_key(j, key);
  if (!known) {
    json_null(j);
    return;
  }
  json_obj(j, JSON_INLINE);
  json_kv_u64(j, "ring", s->ring);
  json_kv_str(j, "driver", ocgc_slice_driver_name(s->driver));
  json_kv_u64(j, "time_ns", s->time_ns);
  json_kv_u64_or_null(j, "duration_ns", s->duration_ns != 0, s->duration_ns);
  json_kv_u64(j, "heap_words", s->heap_words);
  json_kv_u64(j, "allocated_words", s->allocated_words);
  json_kv_u64(j, "alloc_work", s->alloc_work);
  json_kv_u64(j, "dependent_work", s->dependent_work);
  json_kv_u64(j, "extra_work", s->extra_work);
  json_kv_u64(j, "work_counter", s->work_counter);
  json_kv_u64(j, "alloc_counter", s->alloc_counter);
  json_kv_u64(j, "target", s->target);
  json_key(j, "budget");
  json_i64(j, s->budget);
  json_key(j, "work");
  json_i64(j, s->work);
  json_obj_end(j);
}

void rep_slicework_json(struct json *j, const struct ocgc_snapshot *snap)
{
  struct ocgc_slicework w;
  char b[24];
  int d, i;
  if (!rep_slicework_get(snap, &w)) return;
  json_key(j, "major_slice_work");
  json_obj(j, JSON_LINES);
  json_kv_u64(j, "slices", w.slices);
  json_kv_u64(j, "timed", w.timed);
  json_kv_u64(j, "work", w.work);
  json_kv_u64(j, "work_done", w.work_done);
  json_kv_u64(j, "work_asked", w.work_asked);
  json_kv_u64(j, "allocated_words", w.allocated_words);
  json_kv_u64(j, "alloc_work", w.alloc_work);
  json_kv_u64(j, "dependent_work", w.dependent_work);
  json_kv_u64(j, "extra_work", w.extra_work);
  json_kv_u64(j, "budget", w.budget);
  json_key(j, "by_driver");
  json_obj(j, JSON_INLINE);
  for (d = 0; d < (int)OCGC_SLICE_DRIVER_COUNT; d++)
    json_kv_u64(j, ocgc_slice_driver_name(d), w.by_driver[d]);
  json_obj_end(j);
  json_key(j, "work_le");
  json_obj(j, JSON_INLINE);
  for (i = 0; i < OCGC_SLICEWORK_NBOUNDS; i++) {
    snprintf(b, sizeof b, "%" PRIu64, ocgc_slicework_bounds()[i]);
    json_kv_u64(j, b, w.work_le[i]);
  }
  json_obj_end(j);
  json_slice(j, "last", &w.last, 1);
  json_slice(j, "longest", &w.longest, w.longest.duration_ns != 0);
  json_obj_end(j);
}
