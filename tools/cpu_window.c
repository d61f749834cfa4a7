/* cpu_window.c - a CPU profile being gathered by a command (cpu_window.h):
 * the presentation of libocgc's window (ocgc/cpuwindow.h, which owns the
 * sampler, names, unwinder, profile, its cursor over the ring and the
 * turn): the lines said on stderr (a refusal, a ring not read, the
 * figures) and the forms written to a file.  Shared by `ocgc profile
 * --cpu` (a window of a duration) and `ocgc run --cpu` (a whole run).
 *
 * Invariants:
 * - every rule of gathering is libocgc's: this file adds no state but the
 *   window's label;
 * - every string of the target's goes through json.h or libocgc's writers
 *   (escaped). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_window.h"
#include "json.h"

struct cpu_window {
  char label[64];
  struct ocgc_cpuwindow *w;
};

int cpu_window_open(struct cpu_window **out, int pid, const char *label,
                    struct ocgc_source *src, const char *noring_why, unsigned frequency,
                    int no_lines)
{
  struct ocgc_cpuwindow_opts o = OCGC_OPTS_INIT(struct ocgc_cpuwindow_opts);
  struct ocgc_symbols_opts so = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  struct ocgc_cpuwindow_stats st = OCGC_OPTS_INIT(struct ocgc_cpuwindow_stats);
  enum ocgc_cpuwindow_part failed;
  struct cpu_window *w;
  int err;
  *out = NULL;
  if ((w = calloc(1, sizeof *w)) == NULL) {
    tool_say("cannot make the profile: %s", ocgc_strerror(-ENOMEM));
    return TOOL_EXIT_ERROR;
  }
  snprintf(w->label, sizeof w->label, "%s", label);
  so.no_lines = no_lines;
  o.frequency_hz = frequency;
  o.symbols = &so;
  if ((err = ocgc_cpuwindow_open(pid, 0, src, &o, &w->w, &failed)) != 0) {
    free(w);
    if (failed == OCGC_CPUWINDOW_SAMPLER) {
      const char *hint = ocgc_cpu_denied_hint(err);
      /* a refusal: libocgc's one line (the setting, the capability) */
      if (hint != NULL) tool_say("%s: %s", label, hint);
      else tool_say("%s: cannot sample its CPU: %s", label, ocgc_strerror(err));
      return err == OCGC_E_PERF_DENIED ? TOOL_EXIT_DENIED
             : err == -ESRCH          ? TOOL_EXIT_NOTFOUND
             : err == OCGC_E_STALE    ? TOOL_EXIT_STALE
                                      : TOOL_EXIT_ERROR;
    }
    if (failed == OCGC_CPUWINDOW_FILES) {
      tool_say("%s: cannot read its executable files (%s)", label, ocgc_strerror(err));
      return err == -ESRCH || err == -ENOENT ? TOOL_EXIT_NOTFOUND : TOOL_EXIT_ERROR;
    }
    tool_say("cannot make the profile: %s", ocgc_strerror(err));
    return TOOL_EXIT_ERROR;
  }
  /* said once the sampling is allowed, so that a refusal stays one line */
  ocgc_cpuwindow_stats(w->w, &st);
  if (src != NULL && !st.has_ring) noring_why = "no memory for its reader";
  if (!st.has_ring && noring_why != NULL)
    tool_say("%s: no GC ring read (%s): gc_phase from the stacks only, gc_cause unknown", label,
             noring_why);
  *out = w;
  return 0;
}

uint64_t cpu_window_poll_ns(const struct cpu_window *w)
{
  return ocgc_cpuwindow_poll_ns(w->w);
}

int cpu_window_turn(struct cpu_window *w)
{
  int err = ocgc_cpuwindow_turn(w->w);
  if (err == -ENOMEM) {
    tool_say("cannot make the profile: %s", ocgc_strerror(err));
    return TOOL_EXIT_ERROR;
  }
  return err;
}

void cpu_window_end(struct cpu_window *w)
{
  ocgc_cpuwindow_end(w->w);
}

const struct ocgc_cpuwindow *cpu_window_lib(const struct cpu_window *w)
{
  return w->w;
}

const struct ocgc_cpuprof *cpu_window_profile(const struct cpu_window *w)
{
  return ocgc_cpuwindow_profile(w->w);
}

uint64_t cpu_window_ns(const struct cpu_window *w)
{
  struct ocgc_cpuwindow_stats st = OCGC_OPTS_INIT(struct ocgc_cpuwindow_stats);
  ocgc_cpuwindow_stats(w->w, &st);
  return st.window_ns;
}

/* ---- the forms --------------------------------------------------------------------- */

static void json_out(FILE *f, void *arg)
{
  const struct cpu_window *w = arg;
  struct ocgc_cpuwindow_stats ws = OCGC_OPTS_INIT(struct ocgc_cpuwindow_stats);
  struct ocgc_symbols *names = ocgc_cpuwindow_names(w->w);
  const struct ocgc_cpuprof_row *rows;
  size_t i, n = ocgc_cpuprof_rows(ocgc_cpuwindow_profile(w->w), &rows);
  struct json j;
  ocgc_cpuwindow_stats(w->w, &ws);
  json_init_file(&j, f, 0);
  json_obj(&j, JSON_LINES);
  json_kv_u64(&j, "pid", (uint64_t)ws.pid);
  json_kv_u64(&j, "frequency_hz", ws.frequency_hz);
  json_kv_u64(&j, "period_ns", UINT64_C(1000000000) / ws.frequency_hz);
  json_kv_u64(&j, "window_ns", ws.window_ns);
  json_kv_u64(&j, "samples", ws.samples);
  json_kv_u64(&j, "gc_samples", ws.gc_samples);
  json_kv_u64(&j, "gc_unmatched", ws.gc_unmatched);
  json_kv_u64(&j, "overflow_samples", ws.overflow_samples);
  json_kv_u64(&j, "lost", ws.lost);
  json_kv_u64(&j, "threads_seen", ws.threads_seen);
  json_key(&j, "gc_share_samples");
  json_double(&j, 6, ws.gc_share_samples);
  json_key(&j, "gc_share_ring");
  if (ws.has_ring) json_double(&j, 6, ws.gc_share_ring);
  else json_null(&j);
  json_key(&j, "stacks");
  json_arr(&j, JSON_LINES);
  for (i = 0; i < n; i++) {
    const struct ocgc_cpuprof_row *r = &rows[i];
    const char *cause = r->cause >= 0 ? ocgc_cause_name((unsigned)r->cause) : NULL;
    unsigned d;
    json_obj(&j, JSON_INLINE);
    json_kv_u64(&j, "samples", r->samples);
    json_kv_str(&j, "gc_phase", ocgc_gc_phase_name(r->phase));
    json_kv_str(&j, "gc_cause", r->phase == OCGC_GC_MUTATOR ? NULL : cause ? cause : "unknown");
    json_kv_str(&j, "gc_call", ocgc_gc_call_name(r->call));
    json_kv_bool(&j, "overflow", r->overflow);
    json_kv_str(&j, "end", r->overflow ? NULL : ocgc_unwind_end_name(r->end));
    json_key(&j, "frames");
    json_arr(&j, JSON_INLINE);
    for (d = 0; d < r->depth; d++) {
      struct ocgc_symbol sym;
      char hex[24];
      snprintf(hex, sizeof hex, "0x%" PRIx64, r->frames[d]);
      ocgc_symbols_lookup(names, r->frames[d], d > 0, &sym);
      json_obj(&j, JSON_INLINE);
      json_kv_str(&j, "address", hex);
      json_kv_str(&j, "function", sym.function);
      json_kv_str(&j, "symbol", sym.symbol);
      json_kv_str(&j, "file", sym.file);
      json_kv_u64_or_null(&j, "line", sym.line != 0, sym.line);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj_end(&j);
  json_raw(&j, "\n");
}

int cpu_window_write(struct cpu_window *w, enum format format, int by_phase, const char *path)
{
  unsigned char *bytes = NULL;
  size_t len = 0;
  int err = 0, rc;
  if (format == FMT_PPROF)
    err = ocgc_cpuwindow_pprof(w->w, NULL, &bytes, &len);
  else if (format == FMT_FOLDED)
    err = ocgc_cpuprof_folded(ocgc_cpuwindow_profile(w->w), ocgc_cpuwindow_names(w->w), by_phase,
                              (char **)&bytes, &len);
  if (err != 0) {
    tool_say("cannot write the profile: %s", ocgc_strerror(err));
    return TOOL_EXIT_ERROR;
  }
  rc = format == FMT_JSON ? profile_output(path, NULL, 0, json_out, w)
                          : profile_output(path, bytes, len, NULL, NULL);
  free(bytes);
  return rc;
}

void cpu_window_say(const struct cpu_window *w)
{
  struct ocgc_cpuwindow_stats ws = OCGC_OPTS_INIT(struct ocgc_cpuwindow_stats);
  char ring[96] = "no ring";
  ocgc_cpuwindow_stats(w->w, &ws);
  if (ws.has_ring)
    snprintf(ring, sizeof ring, "the ring: %.1f%% of the wall time in collections",
             100.0 * ws.gc_share_ring);
  tool_say("%s: %" PRIu64 " samples in %.1f s from %" PRIu64 " threads (%" PRIu64
           " lost), %.1f%% in the collector by their stacks (%" PRIu64 " of them at no ring "
           "collection); %s",
           w->label, ws.samples, (double)ws.window_ns / 1e9, ws.threads_seen, ws.lost,
           100.0 * ws.gc_share_samples, ws.gc_unmatched, ring);
}

void cpu_window_free(struct cpu_window *w)
{
  if (w == NULL) return;
  ocgc_cpuwindow_free(w->w);
  free(w);
}
