/* trace.c - `ocgc trace`: write a Chrome/Perfetto JSON trace (the Trace
 * Event Format) of a ring file, or of a live process for a while.
 *
 * What it owns: turning the event stream of libocgc's cursor into trace
 * events, and writing them safely.
 *
 * - Every span (phase begin/end, user span) becomes one "X" complete event,
 *   pid = the producer's pid, tid = the ring index, name = the phase name;
 *   a collection's cause (announced just before its begin, at the same
 *   timestamp) is its "cause" argument.
 * - Spans are paired per ring with a stack (MAX_DEPTH deep; begins past it
 *   are counted and their ends skipped).  The spans of one outermost span
 *   are held back until it ends and then written sorted by start, parents
 *   before children (then in begin order), because viewers nest
 *   same-timestamp events in the order they read them.  Invariant: every X
 *   has a non-negative dur, and the X events of a ring nest properly.
 * - What is held back is bounded, whatever the target writes (an outer
 *   span begun and never ended would otherwise hold every span after it):
 *   at most --max-held spans (default MAX_HELD_DEFAULT, 64 Ki, 2 MiB) in
 *   all rings together.  When an event would pass that, the ring holding
 *   the most is written early: its held spans, sorted as above, as X
 *   events, and the spans still open around them as "B" events merged into
 *   that order (args.early = true); each of those gets its "E" when it
 *   ends (or is cut: args.cut on the E).  Nothing is cut or split, the
 *   nesting stays proper and the same-timestamp order too.  A thread
 *   instant "slices written early" (args: spans, open, max_held) marks the
 *   place, stderr says so once, and otherData.written_early counts them.
 *   Invariant: stack[0..nopen) of a ring are written as B (their E
 *   pending), the rest not yet; while depth == nopen nothing is held, so
 *   the spans of an open span written early stream out as their own
 *   subtrees end.  Memory: each ring's array holds at most max_held + 1 +
 *   MAX_DEPTH spans, is freed after a flush when larger than KEEP_CAP, and
 *   grows by doubling: at most about 2 x max_held + KEEP_CAP x rings spans
 *   are allocated in all, and qsort's buffer for one ring's.  Nothing else
 *   here grows with what the target writes: per ring a fixed state (its
 *   stack, 2 KiB; at most 4096 rings), names and counter tracks written as
 *   they come, metadata one line per ring, a fixed user-event table
 *   (OCGC_WIRE_USER_EVENTS bytes).
 * - A loss (on_lost, or events overwritten before a --file read began)
 *   closes the ring's open spans at its last timestamp (args.cut = "events
 *   lost") and puts a global instant "events lost" at the next event's
 *   timestamp, with the count and whether it is exact.  An end whose begin
 *   was lost (or came before the attach) is dropped.  Spans still open when
 *   the trace ends are closed at the ring's last timestamp (args.cut).
 * - Counters become "C" counter tracks, lifecycle events and the major
 *   cycle markers become "i" instants, and "M" metadata name the process
 *   (the program) and the rings.
 * - The output goes to a temporary file next to -o FILE, renamed over it
 *   only once everything was written and synced: FILE is either the whole
 *   trace or untouched.  Writes go through our own buffer over write(2) so
 *   that the first error (ENOSPC...) is kept with its errno.
 *
 * Only libocgc's public API is used. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "ocgc/consumer.h"
#include "util.h"

#define MAX_DEPTH 64
#define MAX_HELD_DEFAULT 65536u     /* spans held back in all rings (32 B each) */
#define MAX_HELD_LIMIT (1u << 24)   /* the most --max-held takes: 512 MiB */
#define KEEP_CAP 16                 /* a ring's array at most this big outlives a flush */
#define POLL_NS UINT64_C(10000000) /* 10 ms: keeps a default-sized ring from wrapping */

/* ---- output: a buffer over write(2) that keeps the first error ------------- */

struct out {
  int fd;
  int err;       /* first errno of a failed write, 0 if none */
  int first;     /* no trace event written yet (no comma needed) */
  size_t n;
  char buf[1 << 16];
};

static void out_flush(struct out *o)
{
  size_t done = 0;
  while (done < o->n && o->err == 0) {
    ssize_t w = write(o->fd, o->buf + done, o->n - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      o->err = errno;
    } else if (w == 0) {
      o->err = EIO;
    } else {
      done += (size_t)w;
    }
  }
  o->n = 0;
}

static void out_printf(struct out *o, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void out_printf(struct out *o, const char *fmt, ...)
{
  va_list ap;
  int len;
  if (o->err) return;
  va_start(ap, fmt);
  len = vsnprintf(o->buf + o->n, sizeof o->buf - o->n, fmt, ap);
  va_end(ap);
  if (len < 0) { o->err = EINVAL; return; }
  if ((size_t)len >= sizeof o->buf - o->n) {
    /* Did not fit: flush and format again into the empty buffer.  Our
     * pieces are short (names are at most 128 bytes), so it fits now. */
    out_flush(o);
    if (o->err) return;
    va_start(ap, fmt);
    len = vsnprintf(o->buf, sizeof o->buf, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= sizeof o->buf) { o->err = EINVAL; return; }
  }
  o->n += (size_t)len;
}

static void out_json_string(struct out *o, const char *s)
{
  char tmp[8];
  out_printf(o, "\"");
  for (; s != NULL && *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') out_printf(o, "\\%c", c);
    else if (c < 0x20) {
      snprintf(tmp, sizeof tmp, "\\u%04x", c);
      out_printf(o, "%s", tmp);
    } else {
      out_printf(o, "%c", c);
    }
  }
  out_printf(o, "\"");
}

/* A trace event starts: the separator, then the common fields.  ts is in
 * microseconds with the nanoseconds kept exactly as three decimals. */
static void ev_start(struct out *o, const char *name, const char *cat, const char *ph,
                     uint64_t ts, uint64_t pid)
{
  out_printf(o, "%s{\"name\":", o->first ? "" : ",\n");
  o->first = 0;
  out_json_string(o, name);
  out_printf(o, ",\"cat\":\"%s\",\"ph\":\"%s\",\"ts\":%" PRIu64 ".%03u,\"pid\":%" PRIu64,
             cat, ph, ts / 1000, (unsigned)(ts % 1000), pid);
}

/* ---- the translation --------------------------------------------------------- */

enum cut { CUT_NONE, CUT_LOSS, CUT_END, CUT_UNTERMINATED };

struct span {
  uint64_t ts, end;
  uint64_t seq;           /* begin order on its ring: orders same-start siblings */
  int16_t cause;          /* enum ocgc_cause, or -1 */
  uint16_t id;            /* 13 bits in the header (OCGC_EV_ID) */
  uint8_t depth;          /* < MAX_DEPTH */
  uint8_t user;
  uint8_t cut;            /* enum cut */
  uint8_t open;           /* still open: written as a B event (flush_early) */
};

struct ring {
  struct span stack[MAX_DEPTH];
  unsigned depth;
  unsigned nopen;             /* stack[0..nopen) written as B events, E pending */
  uint64_t overflow;          /* begins past MAX_DEPTH, whose ends we skip */
  uint64_t seq;               /* spans begun on this ring */
  struct span *done;          /* closed spans held back (not written yet) */
  size_t ndone, cap;
  int pending_cause;
  uint64_t pending_ts;
  uint64_t last_ts;
  int seen;                   /* any event on this ring */
  uint64_t lost_pending;      /* loss not yet marked */
  int lost_exact;
};

/* How a user event slot is shown, found once by name. */
enum ucls {
  U_UNKNOWN = 0, U_CAUSE, U_SLICE_WORK, U_HEAP, U_DIRECT, U_CYCLE_START, U_CYCLE_END,
  U_FORCED, U_OTHER
};

struct trace {
  struct out *o;
  struct ocgc_source *src;
  enum ocgc_ids ids;
  uint64_t pid;
  struct ring *rings;
  unsigned nrings;
  unsigned char *ucls;        /* OCGC_WIRE_USER_EVENTS entries */
  uint64_t last_ts;
  int any;
  uint64_t skipped_pending;   /* --file: events overwritten before we read */
  int skipped_exact;
  /* what the summary line says */
  uint64_t spans, markers, lost, unmatched, cut;
  int oom;
  size_t max_held;            /* --max-held */
  size_t held;                /* closed spans held back, all rings */
  uint64_t early;             /* flush_early calls */
  int warned;                 /* the stderr line about them was written */
  int closing;                /* in close_all: no flush_early */
};

static const char *span_name(const struct trace *t, const struct span *s, char *buf, size_t n)
{
  const char *name;
  if (s->user) {
    name = ocgc_source_user_name(t->src, s->id);
    if (name != NULL) return name;
    snprintf(buf, n, "user_%u", s->id);
    return buf;
  }
  name = ocgc_phase_name(t->ids, s->id);
  if (name != NULL) return name;
  snprintf(buf, n, "phase_%u", s->id);
  return buf;
}

static const char *const cut_names[] = {NULL, "events lost", "end of trace", "end not seen"};

/* An X event, or a B event for a span still open (s->open). */
static void emit_span(struct trace *t, unsigned ring, const struct span *s)
{
  char buf[32];
  struct out *o = t->o;
  const char *sep = "";
  ev_start(o, span_name(t, s, buf, sizeof buf), s->user ? "user" : "gc", s->open ? "B" : "X",
           s->ts, t->pid);
  out_printf(o, ",\"tid\":%u", ring);
  if (!s->open) {
    uint64_t dur = s->end >= s->ts ? s->end - s->ts : 0;
    out_printf(o, ",\"dur\":%" PRIu64 ".%03u", dur / 1000, (unsigned)(dur % 1000));
  }
  if (s->cause >= 0 || s->cut != CUT_NONE || s->open) {
    out_printf(o, ",\"args\":{");
    if (s->cause >= 0) {
      const char *c = ocgc_cause_name((unsigned)s->cause);
      out_printf(o, "\"cause\":\"%s\"", c ? c : "unknown");
      sep = ",";
    }
    if (s->cut != CUT_NONE) {
      out_printf(o, "%s\"cut\":\"%s\"", sep, cut_names[s->cut]);
      sep = ",";
    }
    if (s->open) out_printf(o, "%s\"early\":true", sep);
    out_printf(o, "}");
  }
  out_printf(o, "}");
  t->spans++; /* a B and its E are one slice */
  if (s->cut != CUT_NONE) t->cut++;
}

/* The E event of a span written as B.  Never before its B: a hostile
 * timestamp going backwards gives a zero-length slice, as for X. */
static void emit_end(struct trace *t, unsigned ring, const struct span *s, uint64_t end,
                     enum cut cut)
{
  char buf[32];
  struct out *o = t->o;
  ev_start(o, span_name(t, s, buf, sizeof buf), s->user ? "user" : "gc", "E",
           end >= s->ts ? end : s->ts, t->pid);
  out_printf(o, ",\"tid\":%u", ring);
  if (cut != CUT_NONE) {
    out_printf(o, ",\"args\":{\"cut\":\"%s\"}", cut_names[cut]);
    t->cut++;
  }
  out_printf(o, "}");
}

static int span_order(const void *a, const void *b)
{
  const struct span *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
  return 0;
}

/* Room for [extra] more spans in ring r's array.  Returns 0, or -1 with
 * t->oom set. */
static int hold_room(struct trace *t, struct ring *r, size_t extra)
{
  size_t need = r->ndone + extra, cap = r->cap ? r->cap : KEEP_CAP;
  struct span *p;
  if (need <= r->cap) return 0;
  while (cap < need) cap *= 2;
  /* held <= max_held + 1 and the open spans of a flush_early: no more */
  if (cap > t->max_held + 1 + MAX_DEPTH && need <= t->max_held + 1 + MAX_DEPTH)
    cap = t->max_held + 1 + MAX_DEPTH;
  p = realloc(r->done, cap * sizeof *p);
  if (p == NULL) { t->oom = 1; return -1; }
  r->done = p;
  r->cap = cap;
  return 0;
}

/* Write what ring [ring] holds, sorted: parents first, same-start
 * siblings in begin order. */
static void flush_held(struct trace *t, unsigned ring)
{
  struct ring *r = &t->rings[ring];
  size_t i;
  if (r->ndone == 0) return; /* (done may still be NULL: qsort wants a pointer) */
  qsort(r->done, r->ndone, sizeof r->done[0], span_order);
  for (i = 0; i < r->ndone; i++) {
    emit_span(t, ring, &r->done[i]);
    if (!r->done[i].open) t->held--;
  }
  r->ndone = 0;
  if (r->cap > KEEP_CAP) {
    /* Only a long tree needed it: give it back, so that the arrays of
     * all rings together stay within about twice max_held. */
    free(r->done);
    r->done = NULL;
    r->cap = 0;
  }
}

/* Too much is held: write ring [ring]'s held spans now, and the spans
 * still open around them as B events (their E comes when they end). */
static void flush_early(struct trace *t, unsigned ring)
{
  struct ring *r = &t->rings[ring];
  size_t nheld = r->ndone;
  unsigned k, nopen = r->depth - r->nopen;
  if (hold_room(t, r, nopen) != 0) return;
  for (k = r->nopen; k < r->depth; k++) {
    r->done[r->ndone] = r->stack[k];
    r->done[r->ndone].open = 1;
    r->ndone++;
  }
  flush_held(t, ring);
  r->nopen = r->depth;
  ev_start(t->o, "slices written early", "ocgc", "i", r->last_ts, t->pid);
  out_printf(t->o, ",\"tid\":%u,\"s\":\"t\",\"args\":{\"spans\":%zu,\"open\":%u,"
             "\"max_held\":%zu}}", ring, nheld, nopen, t->max_held);
  t->markers++;
  t->early++;
  if (!t->warned) {
    t->warned = 1;
    fprintf(stderr, "ocgc trace: more than %zu slices held back inside slices that stay open "
            "(ring %u): written early, the open ones as begin/end events (marked \"slices "
            "written early\"; --max-held raises the limit)\n", t->max_held, ring);
  }
}

/* The ring holding the most (there is one: t->held > 0). */
static unsigned fullest_ring(const struct trace *t)
{
  unsigned i, best = 0;
  for (i = 1; i < t->nrings; i++)
    if (t->rings[i].ndone > t->rings[best].ndone) best = i;
  return best;
}

/* Span s, just popped off ring [ring]'s stack (at index r->depth), ends
 * at [end]. */
static void close_span(struct trace *t, unsigned ring, const struct span *s, uint64_t end,
                       enum cut cut)
{
  struct ring *r = &t->rings[ring];
  struct span *d;
  if (r->depth < r->nopen) {
    /* Written as B: nothing is held inside it (depth was nopen), but
     * should something be, it must come before the E. */
    flush_held(t, ring);
    emit_end(t, ring, s, end, cut);
    r->nopen = r->depth;
    return;
  }
  if (hold_room(t, r, 1) != 0) return;
  d = &r->done[r->ndone++];
  *d = *s;
  d->end = end;
  d->cut = (uint8_t)cut;
  t->held++;
  if (r->depth == r->nopen) flush_held(t, ring); /* its whole tree is here */
  else if (t->held > t->max_held && !t->closing) flush_early(t, fullest_ring(t));
}

/* Close every open span of ring [ring] at its last timestamp. */
static void close_all(struct trace *t, unsigned ring, enum cut cut)
{
  struct ring *r = &t->rings[ring];
  /* All of it is written below: no early write on the way (at most
   * MAX_DEPTH more are held meanwhile). */
  t->closing = 1;
  while (r->depth > 0) {
    r->depth--;
    close_span(t, ring, &r->stack[r->depth], r->last_ts, cut);
  }
  t->closing = 0;
  r->overflow = 0;
  flush_held(t, ring);
}

static void span_begin(struct trace *t, unsigned ring, const struct ocgc_event *ev, int kind)
{
  struct ring *r = &t->rings[ring];
  struct span *s;
  if (r->depth >= MAX_DEPTH) { r->overflow++; return; }
  s = &r->stack[r->depth];
  memset(s, 0, sizeof *s);
  s->ts = ev->timestamp;
  s->id = (uint16_t)ev->id;
  s->user = ev->user != 0;
  s->depth = (uint8_t)r->depth;
  s->seq = r->seq++;
  s->cause = -1;
  if (kind >= 0) {
    if (r->pending_cause >= 0 && r->pending_ts == ev->timestamp)
      s->cause = (int16_t)(r->pending_cause > INT16_MAX ? INT16_MAX : r->pending_cause);
    r->pending_cause = -1;
  }
  r->depth++;
}

static void span_end(struct trace *t, unsigned ring, const struct ocgc_event *ev)
{
  struct ring *r = &t->rings[ring];
  unsigned i;
  if (r->overflow > 0) { r->overflow--; return; }
  for (i = r->depth; i > 0; i--)
    if (r->stack[i - 1].id == ev->id && r->stack[i - 1].user == (ev->user != 0)) break;
  if (i == 0) {
    /* Its begin came before the attach or was lost: nothing to pair. */
    t->unmatched++;
    return;
  }
  /* Spans above the match never saw their end: close them here too, so
   * that the nesting stays proper. */
  while (r->depth > i) {
    r->depth--;
    close_span(t, ring, &r->stack[r->depth], ev->timestamp, CUT_UNTERMINATED);
  }
  r->depth--;
  close_span(t, ring, &r->stack[r->depth], ev->timestamp, CUT_NONE);
}

static void emit_lost(struct trace *t, unsigned ring, uint64_t ts, uint64_t n, int exact,
                      int before_start)
{
  struct out *o = t->o;
  ev_start(o, "events lost", "ocgc", "i", ts, t->pid);
  out_printf(o, ",\"tid\":%u,\"s\":\"g\",\"args\":{\"count\":%" PRIu64 ",\"exact\":%s%s}}",
             ring, n, exact ? "true" : "false",
             before_start ? ",\"when\":\"overwritten before the trace began reading\"" : "");
  t->markers++;
}

static void emit_counter(struct trace *t, const char *name, const char *arg, uint64_t ts,
                         uint64_t v)
{
  ev_start(t->o, name, "gc", "C", ts, t->pid);
  out_printf(t->o, ",\"args\":{\"%s\":%" PRIu64 "}}", arg, v);
}

static void emit_instant(struct trace *t, const char *name, const char *cat, const char *scope,
                         unsigned ring, uint64_t ts, const char *arg, uint64_t v)
{
  ev_start(t->o, name, cat, "i", ts, t->pid);
  out_printf(t->o, ",\"tid\":%u,\"s\":\"%s\"", ring, scope);
  if (arg != NULL) out_printf(t->o, ",\"args\":{\"%s\":%" PRIu64 "}", arg, v);
  out_printf(t->o, "}");
}

static enum ucls user_class(struct trace *t, const struct ocgc_event *ev)
{
  static const struct { const char *name; enum ucls c; } known[] = {
    {OCGC_UEV_SLICE_WORK, U_SLICE_WORK}, {OCGC_UEV_HEAP_GROW, U_HEAP},
    {OCGC_UEV_HEAP_SHRINK, U_HEAP}, {OCGC_UEV_DIRECT_ALLOC, U_DIRECT},
    {OCGC_UEV_CYCLE_START, U_CYCLE_START}, {OCGC_UEV_CYCLE_END, U_CYCLE_END},
    {OCGC_UEV_FORCED_MAJOR, U_FORCED},
  };
  const char *name;
  size_t i;
  if (ev->id >= OCGC_WIRE_USER_EVENTS) return U_OTHER;
  if (t->ucls[ev->id] != U_UNKNOWN) return (enum ucls)t->ucls[ev->id];
  name = ev->name;
  if (name == NULL) return U_OTHER; /* not registered yet: look again next time */
  t->ucls[ev->id] = U_OTHER;
  if (strncmp(name, OCGC_UEV_CAUSE_PREFIX, sizeof OCGC_UEV_CAUSE_PREFIX - 1) == 0)
    t->ucls[ev->id] = U_CAUSE;
  for (i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(name, known[i].name) == 0) t->ucls[ev->id] = (unsigned char)known[i].c;
  return (enum ucls)t->ucls[ev->id];
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
  case OCGC_USER_SPAN_BEGIN: span_begin(t, ev->ring, ev, -1); return;
  case OCGC_USER_SPAN_END: span_end(t, ev->ring, ev); return;
  case OCGC_USER_INT: break;
  default: emit_instant(t, name, "user", "t", ev->ring, ev->timestamp, NULL, 0); return;
  }
  switch (user_class(t, ev)) {
  case U_CAUSE: return; /* an argument of the collection that follows */
  case U_SLICE_WORK: emit_counter(t, "major_slice_work", "words", ev->timestamp, ev->value); return;
  case U_HEAP: emit_counter(t, "heap_words", "words", ev->timestamp, ev->value); return;
  case U_DIRECT:
    emit_counter(t, "major_alloc_direct", "words", ev->timestamp, ev->value);
    return;
  case U_CYCLE_START:
    emit_instant(t, "major_cycle_start", "gc", "t", ev->ring, ev->timestamp, "cycle", ev->value);
    return;
  case U_CYCLE_END:
    emit_instant(t, "major_cycle_end", "gc", "t", ev->ring, ev->timestamp,
                 "major_collections", ev->value);
    return;
  case U_FORCED:
    emit_instant(t, "forced_major", "gc", "t", ev->ring, ev->timestamp,
                 "forced_major_collections", ev->value);
    return;
  default: emit_counter(t, name, "value", ev->timestamp, ev->value); return;
  }
}

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct trace *t = ctx;
  struct ring *r;
  int cause, kind, begin = 0;
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
  if (!t->any || ev->timestamp > t->last_ts) t->last_ts = ev->timestamp;
  t->any = 1;

  cause = ocgc_event_cause(t->src, ev);
  if (cause >= 0) {
    r->pending_cause = cause;
    r->pending_ts = ev->timestamp;
    return 0;
  }
  if (ev->user) { on_user(t, ev); return 0; }
  switch (ev->type) {
  case OCGC_RT_BEGIN:
    kind = ocgc_event_kind(t->src, ev, &begin);
    span_begin(t, ev->ring, ev, kind);
    break;
  case OCGC_RT_END: span_end(t, ev->ring, ev); break;
  case OCGC_RT_COUNTER: {
    const char *name = ocgc_counter_name(t->ids, ev->id);
    char buf[32];
    int bytes = ev->id == OCGC_CT_MINOR_ALLOCATED || ev->id == OCGC_CT_MINOR_PROMOTED;
    if (name == NULL) { snprintf(buf, sizeof buf, "counter_%u", ev->id); name = buf; }
    emit_counter(t, name, bytes ? "bytes" : "value", ev->timestamp, ev->value);
    break;
  }
  case OCGC_RT_LIFECYCLE: {
    const char *name = ocgc_lifecycle_name(ev->id);
    char buf[32];
    if (name == NULL) { snprintf(buf, sizeof buf, "lifecycle_%u", ev->id); name = buf; }
    emit_instant(t, name, "lifecycle", "p", ev->ring, ev->timestamp,
                 ev->id == OCGC_LC_RING_STOP ? NULL : "data", ev->value);
    break;
  }
  default: break; /* allocation buckets: not shown */
  }
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct trace *t = ctx;
  struct ring *r;
  if (ring >= t->nrings) return;
  r = &t->rings[ring];
  /* The ends of the open spans may be among the lost events: cut them at
   * the last thing we saw, so that no span claims time we know nothing of. */
  close_all(t, ring, CUT_LOSS);
  r->pending_cause = -1;
  if (r->lost_pending == 0) r->lost_exact = 1;
  r->lost_pending += lost;
  if (!exact) r->lost_exact = 0;
  t->lost += lost;
}

/* ---- the command ----------------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
  (void)sig;
  stop_requested = 1;
}

static void trace_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc trace [--duration D] [--dir DIR] [--max-held N] PID -o OUT.json\n"
          "       ocgc trace [--max-held N] --file FILE -o OUT.json\n\n"
          "Write a Chrome/Perfetto JSON trace (Trace Event Format; open it in\n"
          "ui.perfetto.dev or chrome://tracing) of the GC events of the running\n"
          "OCaml process PID, followed from now for D (default 10s) or until the\n"
          "process exits or ocgc is interrupted (Ctrl-C ends the trace early and\n"
          "still writes it); or of everything the ring file FILE holds.\n\n"
          "The trace has a slice per phase (minor, major_slice, compact, their\n"
          "sub-phases, explicit Gc calls), pid = the process, tid = the ring;\n"
          "collections carry their cause as args.cause; counter tracks for the\n"
          "bytes allocated and promoted by each minor collection, the heap size,\n"
          "the work of each major slice; instants for the lifecycle and major\n"
          "cycles; and a global instant \"events lost\" (args.count, args.exact)\n"
          "wherever the ring overwrote events before they were read: slices cut\n"
          "by a loss end at the loss, with args.cut.\n\n"
          "The slices inside a slice are held back until it ends, so that they\n"
          "can be written sorted; at most N in all (--max-held).  Past that\n"
          "(a span that never ends), the slices held are written at once, the\n"
          "slices still open around them as begin/end events (args.early), with\n"
          "an instant \"slices written early\" there.\n\n"
          "  -o, --output OUT    where to write (required); '-' for stdout.  OUT is\n"
          "                      written whole or not at all (a temporary file is\n"
          "                      renamed over it); a failed write exits with %d\n"
          "  -d, --duration D    how long to follow PID: 10, 1.5s, 500ms, 2m...\n"
          "  -f, --file FILE     read the ring file FILE instead of a process\n"
          "  --dir DIR           look for DIR/PID.events instead of searching the\n"
          "                      process's memory map\n"
          "  --max-held N        slices held back at most, in all (default %u,\n"
          "                      32 bytes each; 1 to %u)\n"
          "  -h, --help          this text\n",
          OCGC_EXIT_ERROR, MAX_HELD_DEFAULT, MAX_HELD_LIMIT);
}

/* The temporary file next to [path], created with mkstemp; its name goes in
 * *tmp (malloc'd).  Returns the fd or -1 (errno set). */
static int open_temp(const char *path, char **tmp)
{
  const char *slash = strrchr(path, '/');
  size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
  size_t n = strlen(path) + 16;
  mode_t mask;
  int fd;
  *tmp = malloc(n);
  if (*tmp == NULL) { errno = ENOMEM; return -1; }
  /* Hidden (".name.XXXXXX") in the same folder, so that rename() is atomic. */
  snprintf(*tmp, n, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
  fd = mkstemp(*tmp);
  if (fd < 0) {
    int e = errno;
    free(*tmp);
    *tmp = NULL;
    errno = e;
    return -1;
  }
  /* mkstemp makes it 0600; the trace is an ordinary file: honour umask. */
  mask = umask(0);
  umask(mask);
  (void)fchmod(fd, 0666 & ~mask);
  return fd;
}

static void write_header(struct trace *t, const struct ocgc_source_info *info)
{
  struct out *o = t->o;
  out_printf(o, "{\"traceEvents\":[\n");
  o->first = 1;
  if (info->has_ext && info->program[0] != '\0') {
    out_printf(o, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRIu64
               ",\"tid\":0,\"args\":{\"name\":", t->pid);
    out_json_string(o, info->program);
    out_printf(o, "}}");
    o->first = 0;
  }
}

static void write_trailer(struct trace *t, const struct ocgc_source_info *info,
                          const struct ocgc_cursor_stats *st, const char *what)
{
  struct out *o = t->o;
  unsigned i;
  for (i = 0; i < t->nrings; i++) {
    if (!t->rings[i].seen && i != 0) continue;
    ev_start(o, "thread_name", "__metadata", "M", 0, t->pid);
    out_printf(o, ",\"tid\":%u,\"args\":{\"name\":\"ring %u\"}}", i, i);
  }
  out_printf(o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":");
  out_json_string(o, what);
  if (info->has_ext) {
    out_printf(o, ",\"program\":");
    out_json_string(o, info->program);
    out_printf(o, ",\"pid\":%" PRIu64 ",\"ocaml_version\":", info->pid);
    out_json_string(o, info->ocaml_version);
    out_printf(o, ",\"ocgc_version\":");
    out_json_string(o, info->ocgc_version);
  }
  out_printf(o, ",\"events_seen\":%" PRIu64 ",\"events_lost\":%" PRIu64
             ",\"events_skipped\":%" PRIu64 ",\"lost_exact\":%s,\"max_held\":%zu"
             ",\"written_early\":%" PRIu64 "}}\n",
             st->seen, st->lost, st->skipped, st->lost_exact ? "true" : "false", t->max_held,
             t->early);
}

/* Is the process we follow still there?  ocgc files say so themselves;
 * stock files have no identity, so ask the kernel. */
static int still_alive(const struct ocgc_source *src, int pid)
{
  int err = ocgc_source_check_alive(src);
  if (err == -ENODATA) return kill(pid, 0) == 0 || errno == EPERM;
  return err == 0;
}

int cmd_trace(int argc, char **argv)
{
  static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"duration", required_argument, NULL, 'd'},
    {"file", required_argument, NULL, 'f'},
    {"dir", required_argument, NULL, 'D'},
    {"max-held", required_argument, NULL, 'M'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_source_info info;
  struct ocgc_cursor_stats st;
  struct ocgc_cursor *cur = NULL;
  struct ocgc_source *src = NULL;
  struct trace t;
  struct out *o = NULL;
  struct sigaction sa, old_int, old_term, old_pipe;
  const char *output = NULL, *file = NULL, *dir = NULL;
  char *tmp = NULL, label[48];
  uint64_t duration = UINT64_C(10000000000), max_events;
  int opt, pid = 0, err = 0, rc = 0, fd = -1;
  unsigned i;

  memset(&t, 0, sizeof t);
  t.max_held = MAX_HELD_DEFAULT;
  label[0] = '\0';
  optind = 1;
  while ((opt = getopt_long(argc, argv, "o:d:f:h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'o': output = optarg; break;
    case 'd':
      if (ocgc_parse_duration(optarg, &duration) != 0 || duration == 0) {
        fprintf(stderr, "ocgc trace: --duration takes a duration such as 10, 1.5s, 500ms "
                "or 2m, not '%s'\n", optarg);
        return OCGC_EXIT_USAGE;
      }
      break;
    case 'f': file = optarg; break;
    case 'D': dir = optarg; break;
    case 'M': {
      char *end;
      unsigned long n;
      errno = 0;
      n = strtoul(optarg, &end, 10);
      if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-' || n < 1 ||
          n > MAX_HELD_LIMIT) {
        fprintf(stderr, "ocgc trace: --max-held takes a number of slices from 1 to %u, "
                "not '%s'\n", MAX_HELD_LIMIT, optarg);
        return OCGC_EXIT_USAGE;
      }
      t.max_held = (size_t)n;
      break;
    }
    case 'h': trace_usage(stdout); return 0;
    default: trace_usage(stderr); return OCGC_EXIT_USAGE;
    }
  }
  if (file != NULL ? optind != argc : optind != argc - 1) {
    fprintf(stderr, "ocgc trace: give a PID or --file FILE (one of them); "
            "'ocgc trace --help' tells more\n");
    return OCGC_EXIT_USAGE;
  }
  if (file == NULL && (pid = ocgc_cmd_parse_pid(argv[optind])) < 0) {
    fprintf(stderr, "ocgc trace: '%s' is not a process id ('ocgc ls' lists the "
            "attachable processes)\n", argv[optind]);
    return OCGC_EXIT_USAGE;
  }
  if (file != NULL && dir != NULL) {
    fprintf(stderr, "ocgc trace: --dir goes with a PID, not with --file\n");
    return OCGC_EXIT_USAGE;
  }
  if (output == NULL || output[0] == '\0') {
    fprintf(stderr, "ocgc trace: say where to write the trace: -o OUT.json (or -o - "
            "for stdout)\n");
    return OCGC_EXIT_USAGE;
  }

  /* The output first: a folder we cannot write to should fail before we
   * spend --duration following a process. */
  if (strcmp(output, "-") == 0) {
    fd = STDOUT_FILENO;
  } else if ((fd = open_temp(output, &tmp)) < 0) {
    fprintf(stderr, "ocgc trace: cannot write %s: %s\n", output, strerror(errno));
    return OCGC_EXIT_ERROR;
  }
  o = malloc(sizeof *o);
  t.ucls = calloc(OCGC_WIRE_USER_EVENTS, 1);
  if (o == NULL || t.ucls == NULL) {
    fprintf(stderr, "ocgc trace: out of memory\n");
    rc = OCGC_EXIT_ERROR;
    goto out;
  }
  memset(o, 0, offsetof(struct out, buf));
  o->fd = fd;
  o->first = 1;
  t.o = o;
  if (pid) snprintf(label, sizeof label, "process %d", pid);

  err = ocgc_cmd_open("trace", pid, dir, file, &src);
  if (err) { rc = ocgc_exit_code(err); goto out; }
  t.src = src;
  if ((err = ocgc_source_info(src, &info)) != 0) goto fail;
  t.ids = info.ids == OCGC_IDS_53 ? OCGC_IDS_53 : OCGC_IDS_52;
  t.pid = info.has_ext ? info.pid : (uint64_t)pid;
  t.nrings = info.max_domains > 4096 ? 4096 : (unsigned)info.max_domains;
  t.rings = calloc(t.nrings ? t.nrings : 1, sizeof *t.rings);
  if (t.rings == NULL) { err = -ENOMEM; goto fail; }
  for (i = 0; i < t.nrings; i++) t.rings[i].pending_cause = -1;

  co.start = file != NULL ? OCGC_START_OLDEST : OCGC_START_NOW;
  co.on_event = on_event;
  co.on_lost = on_lost;
  co.ctx = &t;
  if ((err = ocgc_cursor_new(src, &co, &cur)) != 0) goto fail;
  if (file != NULL) {
    /* What the ring overwrote before we came is lost to the trace too
     * (the cursor counts it as skipped): mark it at the first event. */
    ocgc_cursor_stats(cur, &st);
    t.skipped_pending = st.skipped;
    t.skipped_exact = st.lost_exact;
  }
  write_header(&t, &info);
  max_events = ocgc_drain_events(src);

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  /* A closed stdout pipe is a write error we report, not a silent death. */
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, &old_pipe);

  if (file != NULL) {
    err = ocgc_drain_cursor(cur, max_events, &stop_requested);
  } else {
    uint64_t deadline = ocgc_now_ns() + duration;
    if (isatty(STDERR_FILENO))
      fprintf(stderr, "ocgc trace: following process %d until it exits or for %.3g s "
              "(Ctrl-C stops early)\n", pid, (double)duration / 1e9);
    for (;;) {
      /* Alive before the drain: events written before an exit are read. */
      int alive = still_alive(src, pid);
      /* Gone: nothing more is written, read what is left whole. */
      err = ocgc_drain_cursor(cur, max_events, &stop_requested);
      if (err != 0 || !alive || stop_requested || o->err || t.oom || ocgc_now_ns() >= deadline)
        break;
      ocgc_cursor_stats(cur, &st);
      if (!st.behind) ocgc_sleep_ns(POLL_NS); /* else read on at once */
    }
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (err) goto fail;
  if (t.oom) { err = -ENOMEM; goto fail; }

  for (i = 0; i < t.nrings; i++) {
    struct ring *r = &t.rings[i];
    close_all(&t, i, CUT_END);
    if (r->lost_pending) emit_lost(&t, i, r->last_ts ? r->last_ts : t.last_ts,
                                   r->lost_pending, r->lost_exact, 0);
  }
  if (t.skipped_pending) emit_lost(&t, 0, t.last_ts, t.skipped_pending, t.skipped_exact, 1);
  ocgc_cursor_stats(cur, &st);
  write_trailer(&t, &info, &st, file != NULL ? file : label);
  out_flush(o);
  sigaction(SIGPIPE, &old_pipe, NULL);
  if (t.oom) { err = -ENOMEM; goto fail; }
  if (o->err == 0 && tmp != NULL) {
    /* Synced before the rename: after a crash OUT is the old file or the
     * whole new one, never a prefix. */
    if (fsync(fd) != 0) o->err = errno;
    if (close(fd) != 0 && o->err == 0) o->err = errno;
    fd = -1;
    if (o->err == 0 && rename(tmp, output) != 0) o->err = errno;
  }
  if (o->err) {
    fprintf(stderr, "ocgc trace: cannot write %s: %s\n",
            tmp != NULL ? output : "to stdout", strerror(o->err));
    rc = OCGC_EXIT_ERROR;
    goto out;
  }
  if (tmp != NULL) { free(tmp); tmp = NULL; } /* renamed: nothing to remove */
  {
    uint64_t lost = t.lost + (file != NULL ? st.skipped : 0);
    fprintf(stderr, "ocgc trace: wrote %s: %" PRIu64 " slices, %" PRIu64 " events lost%s",
            strcmp(output, "-") == 0 ? "stdout" : output, t.spans, lost,
            lost ? " (marked \"events lost\")" : "");
    if (t.early) fprintf(stderr, ", %" PRIu64 " early writes of held slices", t.early);
    fprintf(stderr, "\n");
  }
  goto out;

fail:
  fprintf(stderr, "ocgc trace: %s: %s\n", file != NULL ? file : label, ocgc_strerror(err));
  rc = ocgc_exit_code(err);
  if (rc == 0) rc = OCGC_EXIT_ERROR;
out:
  if (fd >= 0 && fd != STDOUT_FILENO) close(fd);
  if (tmp != NULL) { unlink(tmp); free(tmp); }
  ocgc_cursor_free(cur);
  ocgc_source_close(src);
  if (t.rings != NULL)
    for (i = 0; i < t.nrings; i++) free(t.rings[i].done);
  free(t.rings);
  free(t.ucls);
  free(o);
  return rc;
}
