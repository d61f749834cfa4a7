/* report_json.c - the JSON form of the GC report (report.h), in the
 * schema docs/report.schema.json, version REPORT_SCHEMA_VERSION, written
 * with the one JSON writer (json.h).
 *
 * Invariants: the document always has every field the schema requires,
 * whatever the source (stock files without totals give nulls where the
 * schema allows them), so consumers need no special cases; its layout is a
 * member a line at the top, histograms and small objects on one line. */


#include <string.h>

#include "counter_fields.h"
#include "json.h"
#include "report.h"

static const char *mode_name(enum rep_mode m)
{
  return m == REP_PID ? "pid" : m == REP_FILE ? "file" : "run";
}

static void hist(struct json *j, const struct ocgc_hist *h)
{
  uint64_t cnt = h ? ocgc_hist_count(h) : 0;
  size_t i;
  json_obj(j, JSON_INLINE);
  json_kv_u64(j, "count", cnt);
  json_kv_u64(j, "mean_ns", cnt ? ocgc_hist_sum(h) / cnt : 0);
  json_kv_u64(j, "min_ns", cnt ? ocgc_hist_min(h) : 0);
  for (i = 0; i < REP_NPCTS; i++)
    json_kv_u64(j, rep_pct_json[i], cnt ? ocgc_hist_percentile(h, rep_pcts[i]) : 0);
  json_kv_u64(j, "max_ns", cnt ? ocgc_hist_max(h) : 0);
  json_kv_u64(j, "sum_ns", cnt ? ocgc_hist_sum(h) : 0);
  json_obj_end(j);
}

static void source(struct json *j, const struct rep_meta *m, const struct rep_figures *x)
{
  json_key(j, "source");
  json_obj(j, JSON_INLINE);
  json_kv_str(j, "path", m->path);
  json_kv_u64_or_null(j, "pid", x->ext || m->pid > 0,
                      x->ext ? x->info.pid : (uint64_t)m->pid);
  json_kv_str(j, "program", x->ext ? x->info.program : NULL);
  json_kv_str(j, "ocaml_version", x->ext ? x->info.ocaml_version : NULL);
  json_kv_str(j, "code", !x->ext ? NULL : x->info.flags & OCGC_EXT_NATIVE ? "native" : "bytecode");
  json_kv_str(j, "state", rep_state_name(m, x));
  json_kv_bool(j, "ocgc_ring", x->ext);
  /* the event numbering, and where it came from: "file" (an ocgc ring),
   * "executable" (ids_ocaml: the version read), "option" (--ids), "assumed" */
  json_kv_str(j, "ids", x->ids.ids);
  json_kv_str(j, "ids_from", x->ids.from);
  json_kv_str(j, "ids_ocaml", x->ids.ocaml[0] ? x->ids.ocaml : NULL);
  json_obj_end(j);
}

/* "command" and "exit": what ocgc ran and how it ended (REP_RUN), or how
 * the process of a recording ended (REP_FILE). */
static void command(struct json *j, const struct rep_meta *m)
{
  char *const *a;
  int run = m->mode == REP_RUN;
  json_key(j, "command");
  if (run && m->command != NULL) {
    json_arr(j, JSON_INLINE);
    for (a = m->command; *a != NULL; a++) json_str(j, *a);
    json_arr_end(j);
  } else {
    json_null(j);
  }
  json_key(j, "exit");
  if (m->flight != NULL && m->flight->have && m->flight->meta.exit.known) {
    rep_flight_exit_json(j, m); /* a recording of a process that ended */
    return;
  }
  if (!run || !m->has_status) { json_null(j); return; }
  json_obj(j, JSON_INLINE);
  json_key(j, "code");
  if (m->signal == 0) json_i64(j, m->exit_code);
  else json_null(j);
  json_key(j, "signal");
  if (m->signal != 0) json_i64(j, m->signal);
  else json_null(j);
  json_kv_str(j, "signal_name", m->signal != 0 ? rep_signal_name(m->signal) : NULL);
  json_kv_bool(j, "core_dumped", m->core_dumped);
  json_kv_bool(j, "oom_killed", 0); /* a wait status does not say */
  json_key(j, "status");
  json_i64(j, m->signal != 0 ? 128 + m->signal : m->exit_code);
  json_obj_end(j);
}

static void window(struct json *j, const struct rep_meta *m, const struct rep_figures *x)
{
  json_key(j, "window");
  json_obj(j, JSON_INLINE);
  json_kv_str(j, "from", m->mode == REP_PID ? "attach" : "process_start");
  json_kv_u64(j, "start_ns", x->start_ns);
  json_kv_u64(j, "end_ns", x->end_ns);
  json_kv_u64(j, "wall_ns", x->wall_ns);
  json_kv_u64_or_null(j, "requested_ns", m->mode == REP_PID, m->requested_ns);
  json_kv_bool(j, "ended_early", m->ended_early);
  json_kv_str(j, "end_reason", m->ended_early ? m->end_reason : NULL);
  json_obj_end(j);
}

/* An object of one figure per collection kind. */
static void by_kind(struct json *j, const char *key, const uint64_t v[OCGC_KIND_COUNT])
{
  unsigned k;
  json_key(j, key);
  json_obj(j, JSON_INLINE);
  for (k = 0; k < OCGC_KIND_COUNT; k++) json_kv_u64(j, ocgc_kind_name(k), v[k]);
  json_obj_end(j);
}

static void counts(struct json *j, const struct rep_figures *x, const struct ocgc_snapshot *snap)
{
  const struct ocgc_counters *c = &x->c;
  size_t i;
  json_kv_u64(j, "gc_time_ns", c->gc_time_ns);
  json_key(j, "gc_time_share");
  json_double(j, 6, rep_share(c->gc_time_ns, x->wall_ns));
  json_key(j, "counts");
  json_obj(j, JSON_INLINE);
  json_kv_bool(j, "exact", c->exact);
  /* by hand, not a loop over the counters' table, but the bytes: the
   * schema's keys, pauses_seen the histogram's count among them */
  by_kind(j, "collections", c->collections);
  json_kv_u64(j, "major_cycles", c->major_cycles);
  json_kv_u64(j, "forced_majors", c->forced_majors);
  json_kv_u64(j, "pauses_seen", ocgc_hist_count(ocgc_snapshot_pauses(snap)));
  /* the bytes: every monotone count in bytes, by its name in the table (a
   * new one is also a line of docs/report.schema.json's counts) */
  for (i = 0; i < COUNTER_FIELDS_N; i++) {
    const struct counter_field *f = &counter_fields[i];
    if (f->kind == OCGC_COUNTER_MONOTONE && f->words == 1 && strcmp(f->unit, "bytes") == 0)
      json_kv_u64(j, f->name, counter_word(c, f, 0));
  }
  json_obj_end(j);
  json_key(j, "heap");
  json_obj(j, JSON_INLINE);
  json_kv_u64(j, "heap_bytes", c->heap_bytes);
  json_kv_u64(j, "top_heap_bytes", c->top_heap_bytes);
  if (c->live_bytes != 0) json_kv_u64(j, "live_bytes", c->live_bytes);
  json_obj_end(j);
}

/* "pauses", "kinds" and "phases": the histograms. */
static void hists(struct json *j, const struct rep_figures *x, const struct ocgc_snapshot *snap)
{
  char b[32];
  unsigned k, id;
  json_key(j, "pauses");
  hist(j, ocgc_snapshot_pauses(snap));
  json_key(j, "kinds");
  json_obj(j, JSON_LINES);
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    json_key(j, ocgc_kind_name(k));
    hist(j, ocgc_snapshot_kind(snap, k));
  }
  json_obj_end(j);
  json_key(j, "phases");
  json_obj(j, JSON_LINES);
  for (id = 0; id < REP_MAX_PHASE_ID; id++) {
    const struct ocgc_hist *h = ocgc_snapshot_phase(snap, id);
    if (h == NULL || ocgc_hist_count(h) == 0) continue;
    json_key(j, rep_phase_name(x, id, b, sizeof b));
    hist(j, h);
  }
  json_obj_end(j);
}

static void causes(struct json *j, const struct ocgc_snapshot *snap)
{
  char b[32];
  unsigned k, cause;
  json_key(j, "causes");
  json_arr(j, JSON_LINES);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (cause = 0; cause < OCGC_CAUSE_SLOTS; cause++) {
      struct ocgc_cause_row row = OCGC_OPTS_INIT(struct ocgc_cause_row);
      if (ocgc_snapshot_cause(snap, k, cause, &row) != 0 || row.count == 0) continue;
      json_obj(j, JSON_INLINE);
      json_kv_str(j, "kind", ocgc_kind_name(k));
      json_kv_str(j, "cause", rep_cause_name(cause, b, sizeof b));
      json_kv_u64(j, "count", row.count);
      json_kv_u64(j, "total_ns", row.total_ns);
      json_kv_u64(j, "worst_ns", row.worst_ns);
      json_obj_end(j);
    }
  json_arr_end(j);
}

static void events(struct json *j, const struct rep_figures *x)
{
  const struct ocgc_counters *c = &x->c;
  int any = c->first_event_ns != 0;
  json_key(j, "events");
  json_obj(j, JSON_INLINE);
  json_kv_u64(j, "seen", c->events_seen);
  json_kv_u64(j, "lost", c->events_lost);
  json_kv_bool(j, "lost_exact", c->lost_exact);
  by_kind(j, "collections_seen", c->event_collections);
  json_kv_u64_or_null(j, "first_ns", any, c->first_event_ns);
  json_kv_u64_or_null(j, "last_ns", any, c->last_event_ns);
  json_kv_u64(j, "span_ns", any ? c->last_event_ns - c->first_event_ns : 0);
  json_obj_end(j);
}

void rep_print_json(FILE *out, const struct rep_meta *m, const struct rep_figures *x,
                    const struct ocgc_snapshot *snap)
{
  struct json j;
  struct ocgc_slicework w;
  json_init_file(&j, out, 0);
  json_obj(&j, JSON_LINES);
  json_kv_str(&j, "schema", "ocgc-report");
  /* What version 4 cannot hold (a member it does not have, a numbering it
   * does not name) raises the version of the reports that hold it. */
  json_kv_u64(&j, "schema_version",
              rep_slicework_get(snap, &w) || strcmp(x->ids.ids, "5.4") == 0
                  ? REPORT_SCHEMA_VERSION_5
                  : REPORT_SCHEMA_VERSION);
  json_kv_str(&j, "ocgc_version", ocgc_version());
  json_kv_str(&j, "mode", mode_name(m->mode));
  source(&j, m, x);
  command(&j, m);
  window(&j, m, x);
  counts(&j, x, snap);
  hists(&j, x, snap);
  causes(&j, snap);
  events(&j, x);
  rep_slicework_json(&j, snap);
  rep_flight_json(&j, m);
  rep_profile_json(&j, m);
  if (m->cpu != NULL) rep_cpu_json(&j, m); /* only when asked: v2's reports unchanged */
  json_obj_end(&j);
  json_raw(&j, "\n");
}
