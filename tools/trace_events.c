/* trace_events.c - the translation of `ocgc trace` (trace.h): a source's
 * events in, Chrome/Perfetto trace events (the Trace Event Format) out,
 * through the JSON writer.
 *
 * - Every span (phase begin/end, user span) becomes one "X" complete event,
 *   pid = the producer's pid, tid = the ring index, name = the phase name;
 *   a collection's cause is its "cause" argument (none when no cause was
 *   announced).  Which begin pairs with which end, and which cause belongs
 *   to which collection, is libocgc's collection stream's to say (the rules
 *   every consumer shares: consumer.h): it hands each span over as it
 *   closes, cut or not, with its depth and its begin order on its ring.
 * - The spans come in the order viewers want (libocgc's span orderer,
 *   ocgc/order.h: each tree parents first, same-timestamp siblings in
 *   begin order, at most --max-held spans held, default
 *   TRACE_MAX_HELD_DEFAULT, 64 Ki, 2 MiB).  When the orderer gives a ring
 *   early, the spans still open are "B" events (args.early = true), each
 *   with its "E" when it ends (or is cut: args.cut on the E); a thread
 *   instant "slices written early" (args: spans, open, max_held) marks the
 *   place, stderr says so once, and otherData.written_early counts them.
 *   Invariant: every X has a non-negative dur, and the events of a ring
 *   nest properly.  Nothing else here grows with what the target writes:
 *   per ring a fixed state (at most 4096 rings; the stream's is fixed
 *   too), names and counter tracks written as they come, metadata one line
 *   per ring, a fixed user-event table (OCGC_WIRE_USER_EVENTS bytes).
 * - A loss (on_lost, or events overwritten before a --file read began)
 *   makes the stream cut the ring's open spans at its last timestamp
 *   (args.cut = "events lost") and puts a global instant "events lost" at
 *   the next event's timestamp, with the count and whether it is exact.  An
 *   end whose begin was lost (or came before the attach) is dropped.  Spans
 *   still open when the trace ends are cut at the ring's last timestamp
 *   (args.cut = "end of trace"), spans whose end never came when a span
 *   around them ended ("end not seen").
 * - Counters become "C" counter tracks, lifecycle events and the major
 *   cycle markers become "i" instants, and "M" metadata name the process
 *   (the program) and the rings.  Cause events and the producer's stop
 *   marks (OCGC_UEV_STOP_JOIN) are not shown: they are what the stream
 *   reads, not events of their own.
 *
 * Only libocgc's public API is used. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define MAX_RINGS 4096u /* rings traced at most */

/* ---- the output ------------------------------------------------------------------ */

static int write_all(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0) return EIO;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

void trace_out_flush(struct trace_out *o)
{
  if (o->err == 0) o->err = write_all(o->fd, o->buf, o->n);
  o->n = 0;
}

void trace_out_put(void *ctx, const char *s, size_t n)
{
  struct trace_out *o = ctx;
  if (o->err) return;
  o->bytes += n;
  if (n > sizeof o->buf - o->n) trace_out_flush(o);
  if (o->err) return;
  if (n >= sizeof o->buf) {
    o->err = write_all(o->fd, s, n);
    return;
  }
  memcpy(o->buf + o->n, s, n);
  o->n += n;
}

/* ---- trace events ------------------------------------------------------------------ */

struct trace_ring {
  uint64_t last_ts;
  int seen;                   /* any event on this ring */
  uint64_t lost_pending;      /* loss not yet marked */
  int lost_exact;
};

/* How a user event slot is shown, found once by name. */
static const char *const cut_names[] = {
  [OCGC_CUT_NONE] = NULL, [OCGC_CUT_LOST] = "events lost",
  [OCGC_CUT_UNTERMINATED] = "end not seen", [OCGC_CUT_END] = "end of trace",
};

static const char *cut_name(unsigned cut)
{
  return cut < sizeof cut_names / sizeof cut_names[0] ? cut_names[cut] : NULL;
}

/* A trace event starts: the common fields.  ts is in microseconds with
 * the nanoseconds kept exactly as three decimals. */
static void ev_start(struct trace *t, const char *name, const char *cat, const char *ph,
                     uint64_t ts)
{
  struct json *j = &t->j;
  json_obj(j, JSON_INLINE);
  json_kv_str(j, "name", name);
  json_kv_str(j, "cat", cat);
  json_kv_str(j, "ph", ph);
  json_key(j, "ts");
  json_milli(j, ts);
  json_kv_u64(j, "pid", t->pid);
}

static const char *span_name(const struct trace *t, const struct ocgc_span *s, char *buf, size_t n)
{
  const char *name;
  if (s->user) {
    if ((name = ocgc_source_user_name(t->src, s->id)) != NULL) return name;
    snprintf(buf, n, "user_%u", s->id);
    return buf;
  }
  if ((name = ocgc_phase_name(t->ids, s->id)) != NULL) return name;
  snprintf(buf, n, "phase_%u", s->id);
  return buf;
}

/* An X event, or a B event for a span still open (ocgc_ordered_fn); a
 * collection's cause is its argument unless none was announced. */
static void emit_span(const struct ocgc_span *s, int open, void *ctx)
{
  struct trace *t = ctx;
  struct json *j = &t->j;
  int cause = s->kind >= 0 && s->cause > OCGC_CAUSE_UNKNOWN;
  char buf[32];
  ev_start(t, span_name(t, s, buf, sizeof buf), s->user ? "user" : "gc", open ? "B" : "X",
           s->begin);
  json_kv_u64(j, "tid", s->ring);
  if (!open) {
    json_key(j, "dur");
    json_milli(j, s->end - s->begin);
  }
  if (cause || s->cut != OCGC_CUT_NONE || open) {
    const char *c = cause ? ocgc_cause_name((unsigned)s->cause) : NULL;
    json_key(j, "args");
    json_obj(j, JSON_INLINE);
    if (cause) json_kv_str(j, "cause", c ? c : "unknown");
    if (s->cut != OCGC_CUT_NONE) json_kv_str(j, "cut", cut_name(s->cut));
    if (open) json_kv_bool(j, "early", 1);
    json_obj_end(j);
  }
  json_obj_end(j);
  t->spans++; /* a B and its E are one slice */
}

/* The E event of a span written as B. */
static void emit_end(const struct ocgc_span *s, void *ctx)
{
  struct trace *t = ctx;
  struct json *j = &t->j;
  char buf[32];
  ev_start(t, span_name(t, s, buf, sizeof buf), s->user ? "user" : "gc", "E", s->end);
  json_kv_u64(j, "tid", s->ring);
  if (s->cut != OCGC_CUT_NONE) {
    json_key(j, "args");
    json_obj(j, JSON_INLINE);
    json_kv_str(j, "cut", cut_name(s->cut));
    json_obj_end(j);
  }
  json_obj_end(j);
}

/* An instant: [scope] "t" (thread), "p" (process) or "g" (global); an
 * argument [arg] = v unless arg is NULL. */
static void emit_instant(struct trace *t, const char *name, const char *cat, const char *scope,
                         unsigned ring, uint64_t ts, const char *arg, uint64_t v)
{
  struct json *j = &t->j;
  ev_start(t, name, cat, "i", ts);
  json_kv_u64(j, "tid", ring);
  json_kv_str(j, "s", scope);
  if (arg != NULL) {
    json_key(j, "args");
    json_obj(j, JSON_INLINE);
    json_kv_u64(j, arg, v);
    json_obj_end(j);
  }
  json_obj_end(j);
}

static void emit_counter(struct trace *t, const char *name, const char *arg, uint64_t ts,
                         uint64_t v)
{
  struct json *j = &t->j;
  ev_start(t, name, "gc", "C", ts);
  json_key(j, "args");
  json_obj(j, JSON_INLINE);
  json_kv_u64(j, arg, v);
  json_obj_end(j);
  json_obj_end(j);
}

static void emit_lost(struct trace *t, unsigned ring, uint64_t ts, uint64_t n, int exact,
                      int before_start)
{
  struct json *j = &t->j;
  ev_start(t, "events lost", "ocgc", "i", ts);
  json_kv_u64(j, "tid", ring);
  json_kv_str(j, "s", "g");
  json_key(j, "args");
  json_obj(j, JSON_INLINE);
  json_kv_u64(j, "count", n);
  json_kv_bool(j, "exact", exact);
  if (before_start) json_kv_str(j, "when", "overwritten before the trace began reading");
  json_obj_end(j);
  json_obj_end(j);
}

/* ---- spans, in order (libocgc's orderer holds them back) ----------------------------- */

/* Ring [ring] wrote [held] held spans and [open] open ones early: an
 * instant marks the place, stderr says so once. */
static void on_early(unsigned ring, size_t held, unsigned open, void *ctx)
{
  struct trace *t = ctx;
  ev_start(t, "slices written early", "ocgc", "i", t->rings[ring].last_ts);
  json_kv_u64(&t->j, "tid", ring);
  json_kv_str(&t->j, "s", "t");
  json_key(&t->j, "args");
  json_obj(&t->j, JSON_INLINE);
  json_kv_u64(&t->j, "spans", held);
  json_kv_u64(&t->j, "open", open);
  json_kv_u64(&t->j, "max_held", t->max_held);
  json_obj_end(&t->j);
  json_obj_end(&t->j);
  t->early++;
  if (!t->warned) {
    t->warned = 1;
    fprintf(stderr, "ocgc trace: more than %zu slices held back inside slices that stay open "
            "(ring %u): written early, the open ones as begin/end events (marked \"slices "
            "written early\"; --max-held raises the limit)\n", t->max_held, ring);
  }
}

/* The stream closed a span: to the orderer. */
static void on_span(const struct ocgc_span *os, void *ctx)
{
  struct trace *t = ctx;
  if (ocgc_span_order_add(t->order, t->stream, os, t->closing) != 0) t->oom = 1;
}

/* ---- events ------------------------------------------------------------------------ */

/* A user event's int, as the counter or instant its name says. */
static void on_user_int(struct trace *t, const struct ocgc_event *ev, const char *name)
{
  switch (ocgc_event_meaning(t->src, ev)) {
  case OCGC_MEANS_CAUSE: case OCGC_MEANS_STOP_JOIN: return; /* read by the stream */
  case OCGC_MEANS_SLICE_WORK:
    emit_counter(t, "major_slice_work", "words", ev->timestamp, ev->value);
    return;
  case OCGC_MEANS_HEAP_GROW: case OCGC_MEANS_HEAP_SHRINK:
    emit_counter(t, "heap_words", "words", ev->timestamp, ev->value);
    return;
  case OCGC_MEANS_DIRECT_ALLOC:
    emit_counter(t, "major_alloc_direct", "words", ev->timestamp, ev->value);
    return;
  case OCGC_MEANS_CYCLE_START:
    emit_instant(t, "major_cycle_start", "gc", "t", ev->ring, ev->timestamp, "cycle", ev->value);
    return;
  case OCGC_MEANS_CYCLE_END:
    emit_instant(t, "major_cycle_end", "gc", "t", ev->ring, ev->timestamp,
                 "major_collections", ev->value);
    return;
  case OCGC_MEANS_FORCED_MAJOR:
    emit_instant(t, "forced_major", "gc", "t", ev->ring, ev->timestamp,
                 "forced_major_collections", ev->value);
    return;
  default: emit_counter(t, name, "value", ev->timestamp, ev->value); return;
  }
}

static void on_user(struct trace *t, const struct ocgc_event *ev)
{
  char buf[32];
  const char *name = ev->name;
  if (name == NULL) {
    snprintf(buf, sizeof buf, "user_%u", ev->id);
    name = buf;
  }
  switch (ev->type) {
  case OCGC_USER_SPAN_BEGIN: case OCGC_USER_SPAN_END: return; /* the stream's */
  case OCGC_USER_INT: on_user_int(t, ev, name); return;
  default:
    if (ocgc_event_meaning(t->src, ev) == OCGC_MEANS_STOP_JOIN) return; /* the stream's */
    emit_instant(t, name, "user", "t", ev->ring, ev->timestamp, NULL, 0);
    return;
  }
}

static void on_runtime(struct trace *t, const struct ocgc_event *ev)
{
  char buf[32];
  const char *name;
  if (ev->type == OCGC_RT_COUNTER) {
    int bytes = ev->id == OCGC_CT_MINOR_ALLOCATED || ev->id == OCGC_CT_MINOR_PROMOTED;
    if ((name = ocgc_counter_name(t->ids, ev->id)) == NULL) {
      snprintf(buf, sizeof buf, "counter_%u", ev->id);
      name = buf;
    }
    emit_counter(t, name, bytes ? "bytes" : "value", ev->timestamp, ev->value);
  } else if (ev->type == OCGC_RT_LIFECYCLE) {
    if ((name = ocgc_lifecycle_name(ev->id)) == NULL) {
      snprintf(buf, sizeof buf, "lifecycle_%u", ev->id);
      name = buf;
    }
    emit_instant(t, name, "lifecycle", "p", ev->ring, ev->timestamp,
                 ev->id == OCGC_LC_RING_STOP ? NULL : "data", ev->value);
  }
  /* begins and ends are the stream's; allocation buckets are not shown */
}

int trace_on_event(const struct ocgc_event *ev, void *ctx)
{
  struct trace *t = ctx;
  struct trace_ring *r;
  if (ev->ring >= t->nrings) return 0;
  r = &t->rings[ev->ring];
  if (t->skipped_pending) {
    emit_lost(t, ev->ring, ev->timestamp, t->skipped_pending, t->skipped_exact, 1);
    t->skipped_pending = 0;
  }
  if (r->lost_pending) {
    emit_lost(t, ev->ring, ev->timestamp, r->lost_pending, r->lost_exact, 0);
    r->lost_pending = 0;
  }
  r->seen = 1;
  r->last_ts = ev->timestamp;
  if (ev->timestamp > t->last_ts) t->last_ts = ev->timestamp;
  ocgc_stream_event(t->stream, ev);
  if (ocgc_event_cause(t->src, ev) >= 0) return 0; /* an argument of its collection */
  if (ev->user) on_user(t, ev);
  else on_runtime(t, ev);
  return 0;
}

void trace_on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct trace *t = ctx;
  struct trace_ring *r;
  if (ring >= t->nrings) return;
  r = &t->rings[ring];
  /* The ends of the open spans may be among the lost events: the stream
   * cuts them at the last thing we saw, so that no span claims time we
   * know nothing of.  All of it is written here: no early write. */
  t->closing = 1;
  ocgc_stream_lost(t->stream, ring);
  t->closing = 0;
  ocgc_span_order_flush(t->order, ring);
  if (r->lost_pending == 0) r->lost_exact = 1;
  r->lost_pending += lost;
  if (!exact) r->lost_exact = 0;
  t->lost += lost;
}

void trace_skipped(struct trace *t, uint64_t skipped, int exact)
{
  t->skipped_pending = skipped;
  t->skipped_exact = exact;
}

/* ---- head and tail ----------------------------------------------------------------- */

int trace_start(struct trace *t, struct trace_out *out, const struct ocgc_source *src,
                uint64_t pid, size_t max_held)
{
  struct ocgc_stream_opts so = OCGC_OPTS_INIT(struct ocgc_stream_opts);
  struct ocgc_span_order_opts oo = OCGC_OPTS_INIT(struct ocgc_span_order_opts);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  int err;
  memset(t, 0, sizeof *t);
  t->src = src;
  t->max_held = max_held;
  if ((err = ocgc_source_info(src, &info)) != 0) return err;
  t->ids = info.ids;
  t->pid = info.has_ext ? info.pid : pid;
  t->nrings = info.max_domains > MAX_RINGS ? MAX_RINGS : (unsigned)info.max_domains;
  t->rings = calloc(t->nrings ? t->nrings : 1, sizeof *t->rings);
  if (t->rings == NULL) return -ENOMEM;
  oo.max_held = max_held;
  oo.on_span = emit_span;
  oo.on_end = emit_end;
  oo.on_early = on_early;
  oo.ctx = t;
  if ((err = ocgc_span_order_new(t->nrings ? t->nrings : 1, &oo, &t->order)) != 0) return err;
  so.on_span = on_span;
  so.ctx = t;
  if ((err = ocgc_stream_new(src, &so, &t->stream)) != 0) return err;
  json_init(&t->j, trace_out_put, out, JSON_COMPACT);
  json_obj(&t->j, JSON_INLINE);
  json_key(&t->j, "traceEvents");
  json_arr(&t->j, JSON_LINES);
  if (info.has_ext && info.program[0] != '\0') {
    json_obj(&t->j, JSON_INLINE);
    json_kv_str(&t->j, "name", "process_name");
    json_kv_str(&t->j, "ph", "M");
    json_kv_u64(&t->j, "pid", t->pid);
    json_kv_u64(&t->j, "tid", 0);
    json_key(&t->j, "args");
    json_obj(&t->j, JSON_INLINE);
    json_kv_str(&t->j, "name", info.program);
    json_obj_end(&t->j);
    json_obj_end(&t->j);
  }
  return 0;
}

/* otherData: where the trace comes from and what was lost. */
static void other_data(struct trace *t, const struct ocgc_cursor_stats *st, const char *what)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct json *j = &t->j;
  json_key(j, "otherData");
  json_obj(j, JSON_INLINE);
  json_kv_str(j, "source", what);
  if (ocgc_source_info(t->src, &info) == 0 && info.has_ext) {
    json_kv_str(j, "program", info.program);
    json_kv_u64(j, "pid", info.pid);
    json_kv_str(j, "ocaml_version", info.ocaml_version);
    json_kv_str(j, "ocgc_version", info.ocgc_version);
  }
  json_kv_u64(j, "events_seen", st->seen);
  json_kv_u64(j, "events_lost", st->lost);
  json_kv_u64(j, "events_skipped", st->skipped);
  json_kv_bool(j, "lost_exact", st->lost_exact);
  json_kv_u64(j, "max_held", t->max_held);
  json_kv_u64(j, "written_early", t->early);
  json_obj_end(j);
}

void trace_end(struct trace *t, const struct ocgc_cursor_stats *st, const char *what)
{
  struct json *j = &t->j;
  unsigned i;
  char name[32];
  t->skipped = st->skipped;
  t->closing = 1; /* all of it is written below: no early write on the way */
  ocgc_stream_finish(t->stream);
  t->closing = 0;
  for (i = 0; i < t->nrings; i++) {
    struct trace_ring *r = &t->rings[i];
    ocgc_span_order_flush(t->order, i);
    if (r->lost_pending)
      emit_lost(t, i, r->last_ts ? r->last_ts : t->last_ts, r->lost_pending, r->lost_exact, 0);
  }
  if (t->skipped_pending) emit_lost(t, 0, t->last_ts, t->skipped_pending, t->skipped_exact, 1);
  for (i = 0; i < t->nrings; i++) {
    if (!t->rings[i].seen && i != 0) continue;
    ev_start(t, "thread_name", "__metadata", "M", 0);
    json_kv_u64(j, "tid", i);
    json_key(j, "args");
    json_obj(j, JSON_INLINE);
    snprintf(name, sizeof name, "ring %u", i);
    json_kv_str(j, "name", name);
    json_obj_end(j);
    json_obj_end(j);
  }
  json_arr_end(j);
  json_kv_str(j, "displayTimeUnit", "ns");
  other_data(t, st, what);
  json_obj_end(j);
  json_raw(j, "\n");
}

void trace_free(struct trace *t)
{
  ocgc_stream_free(t->stream);
  ocgc_span_order_free(t->order);
  free(t->rings);
}
