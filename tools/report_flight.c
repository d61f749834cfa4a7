/* report_flight.c - a recording in the GC report (report.h): what its
 * flight block says (why it was made, how the process ended, who it was,
 * its memory at the end, its last seconds), as the text section
 * "Recording", the JSON members "exit" and "recording", and its reading
 * from a --file source (rep_flight_take).
 *
 * Invariants: only presenting; libocgc's ocgc_flight_read() checked the
 * block; every string of it is the target's bytes, escaped in the text
 * (tool_esc) and written by the JSON writer (valid UTF-8 always); a block
 * that does not hold together is one line on stderr and the report of the
 * ring goes on without it. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "report.h"

/* The last seconds the text shows (JSON gives them all). */
#define TEXT_SECONDS 10u

int rep_flight_take(struct rep_flight *f, const struct ocgc_source *src)
{
  int err;
  memset(f, 0, sizeof f[0]);
  f->meta.sz = sizeof f->meta;
  if ((err = ocgc_flight_read(src, &f->meta)) != 0) {
    if (err != -ENOENT)
      tool_say("the recording's flight block is not read: %s", ocgc_strerror(err));
    return 0;
  }
  if ((f->sec = calloc(OCGC_FLIGHT_MAX_WINDOW_S, sizeof f->sec[0])) == NULL) return -ENOMEM;
  f->n = ocgc_flight_read_seconds(src, f->sec, OCGC_FLIGHT_MAX_WINDOW_S);
  f->have = 1;
  return 0;
}

void rep_flight_free(struct rep_flight *f)
{
  free(f->sec);
  memset(f, 0, sizeof f[0]);
}

/* ---- text ----------------------------------------------------------------------- */

static void text_ending(FILE *out, const struct ocgc_exit *e)
{
  if (!e->known) {
    fprintf(out, "  %-24s %s\n", "how it ended",
            e->gone_ns != 0 ? "gone (the kernel did not say how)" : "(it had not ended)");
    return;
  }
  fprintf(out, "  %-24s ", "how it ended");
  if (e->how == OCGC_EXIT_EXITED || (e->signal == 0 && e->code >= 0))
    fprintf(out, "exited with status %d", e->code);
  else
    fprintf(out, "killed by signal %d (%s)", e->signal, rep_signal_name(e->signal));
  if (e->oom_killed || e->how == OCGC_EXIT_OOM) fputs(", by the OOM killer", out);
  if (e->core_dumped) fputs(", core dumped", out);
  fprintf(out, "%s\n", e->exit_mark ? "" : " (no exit mark in its ring)");
}

static void text_memory(FILE *out, const struct ocgc_flight_meta *m)
{
  char b1[32], b2[32], b3[32], esc[TOOL_ESC_SIZE(sizeof m->memcg.path)];
  if (m->rss_bytes != 0)
    fprintf(out, "  %-24s %s (its last reading)\n", "resident memory",
            cm_fmt_bytes(b1, sizeof b1, m->rss_bytes));
  if (!m->memcg.known) return;
  fprintf(out, "  %-24s %s (cgroup v%d)\n", "memory cgroup",
          tool_esc(m->memcg.path, esc, sizeof esc), m->memcg.v2 ? 2 : 1);
  fprintf(out, "  %-24s %s of %s", "  usage at the end", cm_fmt_bytes(b1, sizeof b1, m->memcg.usage),
          m->memcg.limit == UINT64_MAX ? "no limit" : cm_fmt_bytes(b2, sizeof b2, m->memcg.limit));
  if (m->memcg.peak != 0) fprintf(out, ", peak %s", cm_fmt_bytes(b3, sizeof b3, m->memcg.peak));
  fprintf(out, ", %" PRIu64 " OOM kill%s\n", m->memcg.oom_kills, m->memcg.oom_kills == 1 ? "" : "s");
}

static void text_history(FILE *out, const struct rep_flight *f)
{
  char b[8][32];
  unsigned i, from = f->n > TEXT_SECONDS ? f->n - TEXT_SECONDS : 0;
  uint64_t last;
  if (f->n == 0) {
    fputs("  (no history: nothing was kept of its last seconds)\n", out);
    return;
  }
  last = f->sec[f->n - 1].t;
  fprintf(out, "\n  History: the last %u of %u seconds kept (second 0: the last)\n",
          f->n - from, f->n);
  fprintf(out, "  %7s %7s %8s %8s %7s %7s %9s %9s %9s %9s %9s %6s\n", "second", "pauses",
          "GC time", "longest", "minor", "major", "allocated", "promoted", "heap", "rss",
          "cgroup", "lost");
  for (i = from; i < f->n; i++) {
    const struct ocgc_flight_second *s = &f->sec[i];
    uint64_t major = s->coll[OCGC_KIND_MAJOR_SLICE] + s->coll[OCGC_KIND_MAJOR_FINISH] +
                     s->coll[OCGC_KIND_COMPACTION];
    fprintf(out, "  %7" PRId64 " %7" PRIu64 " %8s %8s %7" PRIu64 " %7" PRIu64 " %9s %9s %9s %9s %9s %6" PRIu64 "\n",
            -(int64_t)((last - s->t) / 1000000000u), s->pauses,
            cm_fmt_ns(b[0], sizeof b[0], s->pause_ns), cm_fmt_ns(b[1], sizeof b[1], s->max_ns),
            s->coll[OCGC_KIND_MINOR], major, cm_fmt_bytes(b[2], sizeof b[2], s->alloc),
            cm_fmt_bytes(b[3], sizeof b[3], s->promo),
            s->heap ? cm_fmt_bytes(b[4], sizeof b[4], s->heap) : "-",
            s->rss ? cm_fmt_bytes(b[5], sizeof b[5], s->rss) : "-",
            s->cg_usage ? cm_fmt_bytes(b[6], sizeof b[6], s->cg_usage) : "-", s->lost);
  }
}

void rep_flight_text(FILE *out, const struct rep_meta *m)
{
  const struct rep_flight *f = m->flight;
  const struct ocgc_flight_meta *fm;
  char esc[TOOL_ESC_SIZE(256)], when[64];
  if (f == NULL || !f->have) return;
  fm = &f->meta;
  fputs("\nRecording\n", out);
  fprintf(out, "  %-24s %s", "why", ocgc_flight_reason_name(fm->reason));
  if (fm->detail[0]) fprintf(out, " (%s)", tool_esc(fm->detail, esc, sizeof esc));
  fputc('\n', out);
  if (fm->recorded_ns != 0) {
    time_t t = (time_t)(fm->recorded_ns / 1000000000u);
    struct tm tm;
    if (gmtime_r(&t, &tm) != NULL && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm) > 0)
      fprintf(out, "  %-24s %s\n", "recorded", when);
  }
  text_ending(out, &fm->exit);
  if (fm->pid > 0) {
    fprintf(out, "  %-24s pid %d", "process", fm->pid);
    if (fm->program[0]) fprintf(out, ", %s", tool_esc(fm->program, esc, sizeof esc));
    fputc('\n', out);
  }
  if (fm->exe[0]) fprintf(out, "  %-24s %s\n", "executable", tool_esc(fm->exe, esc, sizeof esc));
  if (fm->build_id[0])
    fprintf(out, "  %-24s %s\n", "build id", tool_esc(fm->build_id, esc, sizeof esc));
  text_memory(out, fm);
  text_history(out, f);
}

/* ---- JSON ------------------------------------------------------------------------ */

void rep_flight_exit_json(struct json *j, const struct rep_meta *m)
{
  const struct ocgc_exit *e = &m->flight->meta.exit;
  int killed = e->signal != 0 && e->how != OCGC_EXIT_EXITED;
  json_obj(j, JSON_INLINE);
  json_key(j, "code");
  if (!killed && e->code >= 0) json_i64(j, e->code);
  else json_null(j);
  json_key(j, "signal");
  if (killed) json_i64(j, e->signal);
  else json_null(j);
  json_kv_str(j, "signal_name", killed ? rep_signal_name(e->signal) : NULL);
  json_kv_bool(j, "core_dumped", e->core_dumped);
  json_kv_bool(j, "oom_killed", e->oom_killed || e->how == OCGC_EXIT_OOM);
  json_key(j, "status");
  json_i64(j, killed ? 128 + e->signal : e->code >= 0 ? e->code : 0);
  json_obj_end(j);
}

static void str_or_null(struct json *j, const char *key, const char *s)
{
  json_kv_str(j, key, s[0] ? s : NULL);
}

/* One second of a recording's history: a struct ocgc_flight_second (a
 * fixed record of the flight block, libconsumer/flight_hist.c), not the
 * counters (struct ocgc_counters): its members are named by hand, as
 * docs/report.schema.json's "history" has them, whatever the counters'
 * table grows. */
static void second_json(struct json *j, const struct ocgc_flight_second *s)
{
  unsigned k, c;
  json_obj(j, JSON_INLINE);
  json_kv_u64(j, "t_ns", s->t);
  json_kv_u64(j, "pauses", s->pauses);
  json_kv_u64(j, "pause_ns", s->pause_ns);
  json_kv_u64(j, "max_ns", s->max_ns);
  json_key(j, "collections");
  json_obj(j, JSON_INLINE);
  for (k = 0; k < OCGC_KIND_COUNT; k++) json_kv_u64(j, ocgc_kind_name(k), s->coll[k]);
  json_obj_end(j);
  json_kv_u64(j, "allocated_bytes", s->alloc);
  json_kv_u64(j, "promoted_bytes", s->promo);
  json_kv_u64_or_null(j, "heap_bytes", s->heap != 0, s->heap);
  json_kv_u64_or_null(j, "top_heap_bytes", s->heap != 0, s->top_heap);
  json_kv_u64(j, "lost", s->lost);
  json_kv_u64_or_null(j, "rss_bytes", s->rss != 0, s->rss);
  json_kv_u64_or_null(j, "cg_usage_bytes", s->cg_usage != 0, s->cg_usage);
  json_key(j, "causes");
  json_obj(j, JSON_INLINE);
  for (c = 0; c < OCGC_CAUSE_COUNT; c++)
    if (s->cause[c] != 0) json_kv_u64(j, ocgc_cause_name(c), s->cause[c]);
  json_obj_end(j);
  json_obj_end(j);
}

void rep_flight_json(struct json *j, const struct rep_meta *m)
{
  const struct rep_flight *f = m->flight;
  const struct ocgc_flight_meta *fm;
  unsigned i;
  json_key(j, "recording");
  if (f == NULL || !f->have) {
    json_null(j);
    return;
  }
  fm = &f->meta;
  json_obj(j, JSON_LINES);
  json_kv_str(j, "reason", ocgc_flight_reason_name(fm->reason));
  str_or_null(j, "detail", fm->detail);
  json_kv_u64_or_null(j, "recorded_ns", fm->recorded_ns != 0, fm->recorded_ns);
  json_kv_u64(j, "window_s", fm->window_s);
  json_kv_u64_or_null(j, "pid", fm->pid > 0, (uint64_t)fm->pid);
  json_kv_u64_or_null(j, "start_ticks", fm->start_ticks != 0, fm->start_ticks);
  str_or_null(j, "program", fm->program);
  str_or_null(j, "exe", fm->exe);
  str_or_null(j, "build_id", fm->build_id);
  json_kv_str(j, "how", fm->exit.known ? ocgc_exit_how_name(fm->exit.how) : "unknown");
  json_kv_bool(j, "exit_known", fm->exit.known);
  json_kv_bool(j, "exit_mark", fm->exit.exit_mark);
  json_kv_u64_or_null(j, "gone_ns", fm->exit.gone_ns != 0, fm->exit.gone_ns);
  json_kv_u64_or_null(j, "rss_bytes", fm->rss_bytes != 0, fm->rss_bytes);
  json_key(j, "memcg");
  if (!fm->memcg.known) {
    json_null(j);
  } else {
    json_obj(j, JSON_INLINE);
    json_kv_str(j, "path", fm->memcg.path);
    json_kv_u64(j, "version", fm->memcg.v2 ? 2 : 1);
    json_kv_u64(j, "usage_bytes", fm->memcg.usage);
    json_kv_u64_or_null(j, "limit_bytes", fm->memcg.limit != UINT64_MAX, fm->memcg.limit);
    json_kv_u64_or_null(j, "peak_bytes", fm->memcg.peak != 0, fm->memcg.peak);
    json_kv_u64(j, "oom_kills", fm->memcg.oom_kills);
    json_obj_end(j);
  }
  json_key(j, "history");
  json_arr(j, JSON_LINES);
  for (i = 0; i < f->n; i++) second_json(j, &f->sec[i]);
  json_arr_end(j);
  json_obj_end(j);
}
