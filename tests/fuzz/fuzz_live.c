/* fuzz_live.c - libFuzzer target: a ring file that changes between polls,
 * read live through the public API (sources, cursors from the oldest event
 * and from now, aggregators, snapshots, totals, info, user names).
 *
 * The input is a small program.  Byte 0 lays the file out with the test
 * ring writer (tests/unit/ringgen.c): 1..4 rings of 16..1024 words, with or
 * without the ocgc extension block.  Then operations, each an opcode byte
 * and its operands (missing bytes read as 0), until the input or MAX_OPS
 * runs out: append valid events (the producer's protocol) or events with a
 * raw header to a ring, overwrite bytes or nudge a word anywhere (file
 * header, ring head/tail, extension block, seqlocks, totals, names, data),
 * update the totals as the producer does, rename a user slot, truncate or
 * restore the file, poll a cursor (with a small max_events or a callback
 * that stops), poll an aggregator and take snapshots, read info, totals
 * and names, reopen the source.  At the end every reader drains the rings.
 *
 * The only acceptable outcomes are results and error codes: no crash, no
 * sanitizer report, no leak, no hang (every loop here is bounded by the
 * input, and MAX_EVENTS bounds what the readers can be handed).  While the
 * file has only been written as the producer writes (no raw event, no
 * overwrite, no truncation: `clean'), nothing may fail, and for ocgc files
 * a cursor that has read up to the tails must account for every event:
 * seen + lost + skipped == events written.
 *
 * The file is a temporary file (in $TMPDIR, else /dev/shm, else /tmp),
 * unlinked at once (ringgen writes by path); the readers open it as
 * /proc/self/fd/N.  Writes through the writer's mapping happen only while
 * the file is at least its original size (a truncated mapping raises
 * SIGBUS), and events take at most half a ring (ringgen's room-making
 * needs that); overwrites use pwrite(), and the layout they aim at comes
 * from ringgen's parameters, never from the file.  A reader's mapping is
 * the library's business: truncation must come back as OCGC_E_TRUNCATED,
 * and no SIGBUS handler is installed: the library must not need one.
 *
 * OCGC_FUZZ_TRACE=1 in the environment prints each operation and the
 * writer's state, to follow a reproducer. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringgen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 256u
#define MAX_EVENTS 8192u /* appended per input */
#define NCUR 4u
#define NAGG 2u
#define NSLOTS 16u       /* user slots the valid events use */

struct in {
  const uint8_t *p, *end;
};

static unsigned u8(struct in *in)
{
  return in->p < in->end ? *in->p++ : 0;
}

/* Little-endian, [bytes] of them. */
static uint64_t num(struct in *in, unsigned bytes)
{
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < bytes; i++) v |= (uint64_t)u8(in) << (8 * i);
  return v;
}

static void fail(const char *what, long long a, long long b)
{
  fprintf(stderr, "fuzz_live: %s (%lld, %lld)\n", what, a, b);
  abort();
}

struct reader {
  struct live *L;
  int counting;        /* on_event is the cursor's callback */
  uint64_t delivered;  /* callbacks in the current poll */
  unsigned stop_every; /* the callback asks to stop after this many (0: never) */
  int draining;        /* never stop: the final read to the tails */
};

struct live {
  struct rg_file f;
  char path[96];       /* /proc/self/fd/N */
  uint64_t cur_size;   /* the file's size now */
  uint64_t ts;         /* the writer's clock */
  unsigned events;     /* appended so far */
  int clean;
  struct ocgc_source *src;
  struct ocgc_cursor *cur[NCUR];
  struct reader rd[NCUR];
  struct ocgc_agg *agg[NAGG];
  struct ocgc_snapshot *snap[NAGG]; /* the latest of each, for rates */
  uint64_t sink;
};

/* ---- the readers ---------------------------------------------------------------------- */

static void check_err(struct live *L, const char *what, long long err)
{
  if (err >= 0) return;
  if (ocgc_strerror((int)err) == NULL) fail("no sentence for an error", err, 0);
  if (L->clean) fail(what, err, 0);
}

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct reader *r = ctx;
  struct live *L = r->L;
  int begin, cause = ocgc_event_cause(L->src, ev), kind = ocgc_event_kind(L->src, ev, &begin);
  unsigned i;

  if (ev->ring >= L->f.max_domains) fail("event of a ring that is not there", ev->ring, 0);
  if (ev->payload_words > OCGC_WIRE_MAX_EVENT_WORDS - 2) fail("payload", ev->payload_words, 0);
  if (cause < -1 || cause >= (int)OCGC_CAUSE_SLOTS) fail("cause", cause, 0);
  if (kind < -1 || kind >= (int)OCGC_KIND_COUNT) fail("kind", kind, 0);
  for (i = 0; i < ev->payload_words; i++) L->sink += ev->payload[i]; /* in bounds? */
  if (ev->name != NULL) L->sink += strlen(ev->name);
  (void)ocgc_phase_name(OCGC_IDS_53, ev->id);
  (void)ocgc_counter_name(OCGC_IDS_52, ev->id);
  (void)ocgc_lifecycle_name(ev->id);
  r->delivered++;
  return !r->draining && r->stop_every && r->delivered % r->stop_every == 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct reader *r = ctx;
  if (ring >= r->L->f.max_domains) fail("loss on a ring that is not there", ring, 0);
  if (lost == 0) fail("a loss of nothing reported", ring, exact);
}

static void free_readers(struct live *L)
{
  unsigned i;
  for (i = 0; i < NCUR; i++) {
    ocgc_cursor_free(L->cur[i]);
    L->cur[i] = NULL;
  }
  for (i = 0; i < NAGG; i++) {
    ocgc_snapshot_free(L->snap[i]);
    ocgc_agg_free(L->agg[i]);
    L->snap[i] = NULL;
    L->agg[i] = NULL;
  }
}

static void reopen(struct live *L)
{
  int err;
  free_readers(L);
  ocgc_source_close(L->src);
  L->src = NULL;
  err = ocgc_source_open_path(L->path, NULL, &L->src);
  check_err(L, "open", err);
  if (err != 0) L->src = NULL;
}

/* With nothing hostile done, a cursor at the tails has accounted for every
 * event written (ocgc files count exactly). */
static void check_accounting(struct live *L, const struct ocgc_cursor *c)
{
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t written = 0;
  unsigned d;
  if (!L->clean || !L->f.has_ext) return;
  for (d = 0; d < L->f.max_domains; d++) written += L->f.rings[d].written;
  ocgc_cursor_stats(c, &st);
  if (st.seen + st.lost + st.skipped != written)
    fail("seen + lost + skipped != written", (long long)(st.seen + st.lost + st.skipped),
         (long long)written);
  if (!st.lost_exact) fail("inexact loss in an ocgc file", 0, 0);
}

static void poll_cursor(struct live *L, unsigned i, uint64_t max, int draining)
{
  struct reader *r = &L->rd[i];
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  int64_t got;

  r->delivered = 0;
  r->draining = draining;
  got = ocgc_cursor_poll(L->cur[i], max);
  check_err(L, "cursor poll", got);
  if (got >= 0 && r->counting && (uint64_t)got != r->delivered)
    fail("poll count != callbacks", got, (long long)r->delivered);
  if (got >= 0 && max && (uint64_t)got > max) fail("poll beyond max_events", got, (long long)max);
  ocgc_cursor_stats(L->cur[i], &st);
  if (got >= 0 && draining && !max) check_accounting(L, L->cur[i]);
}

static void op_poll(struct live *L, struct in *in)
{
  unsigned i = u8(in) % NCUR, m = u8(in);
  if (L->src == NULL) return;
  if (L->cur[i] == NULL) {
    struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
    static const size_t batch[4] = {0, 1, 64, 3000};
    unsigned o = u8(in);
    int err;
    co.start = o & 1 ? OCGC_START_NOW : OCGC_START_OLDEST;
    co.batch_words = batch[(o >> 1) & 3];
    co.on_event = o & 8 ? NULL : on_event;
    co.on_lost = on_lost;
    co.ctx = &L->rd[i];
    L->rd[i].L = L;
    L->rd[i].counting = co.on_event != NULL;
    L->rd[i].stop_every = (o >> 4) & 3 ? (o >> 4) : 0;
    err = ocgc_cursor_new(L->src, &co, &L->cur[i]);
    check_err(L, "cursor new", err);
    if (err != 0) L->cur[i] = NULL;
    /* Made now, first read after later writes: the writer may overwrite
     * what lies between its start and the head it saw. */
    if (err != 0 || (o & 0x40)) return;
  }
  /* max_events: small (0 is none) for a quarter, and with a callback that
   * stops; else none */
  if (L->rd[i].stop_every || (m & 0xc0) == 0)
    poll_cursor(L, i, m & 7, 0);
  else
    poll_cursor(L, i, 0, 0);
}

static void snapshot(struct live *L, unsigned j, struct in *in)
{
  struct ocgc_snapshot *s;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_cause_row row = OCGC_OPTS_INIT(struct ocgc_cause_row);
  struct ocgc_rates rates = OCGC_OPTS_INIT(struct ocgc_rates);
  const struct ocgc_hist *h;
  unsigned k, phase = u8(in) % (OCGC_PHASE_MAX + 4), cause = u8(in) % (OCGC_CAUSE_SLOTS + 2);
  int err = ocgc_agg_snapshot(L->agg[j], &s);
  check_err(L, "snapshot", err);
  if (err != 0) return;
  ocgc_snapshot_counters(s, &c);
  h = ocgc_snapshot_pauses(s);
  if (h == NULL) fail("no pause histogram", 0, 0);
  L->sink += ocgc_hist_percentile(h, (double)u8(in) * 100.0 / 255.0) + ocgc_hist_count(h) +
             ocgc_hist_min(h) + ocgc_hist_max(h) + ocgc_hist_sum(h) + ocgc_hist_clamped(h) +
             ocgc_hist_count_le(h, num(in, 4));
  for (k = 0; k <= OCGC_KIND_COUNT; k++) {
    h = ocgc_snapshot_kind(s, k);
    if ((h == NULL) != (k == OCGC_KIND_COUNT)) fail("kind histogram", k, 0);
    if (h != NULL) L->sink += ocgc_hist_percentile(h, 99.0);
    err = ocgc_snapshot_cause(s, k, cause, &row);
    if ((err != 0) != (k == OCGC_KIND_COUNT || cause >= OCGC_CAUSE_SLOTS))
      fail("cause row", k, cause);
    if (err == 0) L->sink += row.count + row.total_ns + row.worst_ns;
  }
  h = ocgc_snapshot_phase(s, phase);
  if (h != NULL) {
    if (phase >= OCGC_PHASE_MAX) fail("a phase beyond OCGC_PHASE_MAX", phase, 0);
    L->sink += ocgc_hist_percentile(h, 50.0);
  }
  if (L->snap[j] != NULL) {
    if (ocgc_snapshot_rates(L->snap[j], s, &rates) == 0) L->sink += (uint64_t)(rates.gc_time_share >= 0);
    ocgc_snapshot_free(L->snap[j]);
  }
  L->snap[j] = s;
}

static void op_agg(struct live *L, struct in *in, int draining)
{
  unsigned j = u8(in) % NAGG, o = u8(in);
  int64_t got;
  if (L->src == NULL) return;
  if (L->agg[j] == NULL) {
    struct ocgc_agg_opts ao = OCGC_OPTS_INIT(struct ocgc_agg_opts);
    int err;
    ao.start = j ? OCGC_START_NOW : OCGC_START_OLDEST;
    ao.no_phases = (o & 1) != 0;
    err = ocgc_agg_new(L->src, &ao, &L->agg[j]);
    check_err(L, "agg new", err);
    if (err != 0) L->agg[j] = NULL;
    if (err != 0 || (o & 0x40)) return; /* made now, first polled later */
  }
  got = ocgc_agg_poll(L->agg[j]);
  check_err(L, "agg poll", got);
  if (draining || (o & 0x80)) snapshot(L, j, in);
}

static void op_info(struct live *L, struct in *in)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  uint64_t w;
  unsigned d, k;
  int err;
  if (L->src == NULL) return;
  err = ocgc_source_info(L->src, &info);
  check_err(L, "info", err);
  if (err == 0 && L->clean &&
      (info.max_domains != L->f.max_domains || info.ring_words != L->f.ring_words ||
       info.has_ext != L->f.has_ext))
    fail("info does not describe the file", (long long)info.max_domains,
         (long long)info.ring_words);
  /* (A file overwritten or cut and regrown may have lost its extension
   * block, or read as having more rings: only a clean one is known.) */
  err = ocgc_source_totals(L->src, &t);
  if (L->f.has_ext) check_err(L, "totals", err);
  else if (L->clean && err != -ENODATA) fail("totals of a stock file", err, 0);
  for (d = 0; d <= L->f.max_domains; d++) {
    err = ocgc_source_written(L->src, d, &w);
    if (d < L->f.max_domains && L->f.has_ext) check_err(L, "written", err);
    else if (L->clean && err == 0) fail("written of a missing ring, or a stock one", d, 0);
  }
  for (k = 0; k < 3; k++) {
    unsigned b = (unsigned)num(in, 2);
    unsigned slot = b & 0x8000 ? b % (OCGC_WIRE_USER_EVENTS + 8) : b % NSLOTS;
    const char *name = ocgc_source_user_name(L->src, slot);
    if (name != NULL && strlen(name) >= OCGC_WIRE_USER_NAME_LEN) fail("name too long", 0, 0);
  }
}

/* ---- the writer --------------------------------------------------------------------- */

/* The writer's mapping is backed only while the file is at least its size. */
static int mapped(const struct live *L)
{
  return L->cur_size >= L->f.size;
}

/* ringgen (as the producer) makes room for an event and the padding before
 * it by dropping whole old events: both together must fit in the ring, so
 * an event may take at most half of it. */
static void write_ev(struct live *L, unsigned d, uint64_t header, const uint64_t *payload)
{
  if (2 * OCGC_EV_LENGTH(header) > L->f.ring_words || L->events >= MAX_EVENTS) return;
  rg_write(&L->f, d, header, L->ts, payload);
  L->events++;
}

/* One event the producer could write, chosen and filled from the input. */
static void append_valid(struct live *L, unsigned d, struct in *in)
{
  static const unsigned phases[] = {OCGC_PH_MINOR, OCGC_PH_MAJOR_SLICE,
                                    OCGC_PH_MAJOR_FINISH_CYCLE, OCGC_PH_COMPACT,
                                    OCGC_PH_MAJOR, OCGC_PH_MINOR_LOCAL_ROOTS,
                                    OCGC_PH_EXPLICIT_GC_MAJOR, OCGC_PH_MAJOR_MARK};
  uint64_t payload[24];
  unsigned what = u8(in), id = u8(in), k, n;
  int cc;

  memset(payload, 0, sizeof payload);
  payload[0] = num(in, 3);
  /* Mostly forward; sometimes backwards, which no producer's clock does
   * (a span that ends before it begins is an error), but readers survive. */
  if ((what & 0x80) && (id & 0xf) < 8) {
    L->ts -= (uint64_t)(8 - (id & 0xf)) * 1000u;
    L->clean = 0;
  } else {
    L->ts += (uint64_t)(id & 0x3f) * 997u;
  }
  switch (what % 12) {
  case 0: /* BEGIN / END of a phase, mostly a known one */
  case 1:
    k = id & 0x80 ? (id & 0x7f) : phases[id % 8];
    write_ev(L, d, OCGC_EV_HEADER(2, 0, what % 12 ? OCGC_RT_END : OCGC_RT_BEGIN, k), payload);
    break;
  case 2: /* a whole collection: cause, BEGIN, END */
    k = id % OCGC_KIND_COUNT;
    cc = ocgc_cause_counter((id >> 2) % OCGC_CAUSE_COUNT);
    payload[0] = 1;
    if (cc >= 0)
      write_ev(L, d, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, cc), payload);
    else
      write_ev(L, d, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, (id >> 2) & 1), payload);
    write_ev(L, d, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, phases[k]), NULL);
    L->ts += (uint64_t)(id + 1) * 1500u;
    write_ev(L, d, OCGC_EV_HEADER(2, 0, OCGC_RT_END, phases[k]), NULL);
    break;
  case 3: /* a counter: cause, allocated, promoted, or any id */
    write_ev(L, d, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, id & 0x80 ? id & 0x7f : id % 11),
             payload);
    break;
  case 4: /* a user int on a named slot (causes, cycles, heap ...) */
    write_ev(L, d, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, id % NSLOTS), payload);
    break;
  case 5: /* unit / span begin / span end */
    write_ev(L, d, OCGC_EV_HEADER(2, 1, id & 0x80 ? OCGC_USER_UNIT : 2 + (id & 1), id % NSLOTS),
             payload);
    break;
  case 6: /* lifecycle: RING_STOP has no data */
    k = id % 10;
    write_ev(L, d, OCGC_EV_HEADER(k == OCGC_LC_RING_STOP ? 2 : 3, 0, OCGC_RT_LIFECYCLE, k),
             payload);
    break;
  case 7: /* an allocation histogram */
    for (k = 0; k < 20; k++) payload[k] = (uint64_t)id * k;
    write_ev(L, d, OCGC_EV_HEADER(22, 0, OCGC_RT_ALLOC, 0), payload);
    break;
  case 8: /* a custom user event: payload words, last byte the pad count */
    n = 1 + id % 6;
    for (k = 0; k < n; k++) payload[k] = num(in, 8);
    payload[n - 1] = (payload[n - 1] & ~(UINT64_C(0xff) << 56)) | ((uint64_t)(id % 8) << 56);
    write_ev(L, d, OCGC_EV_HEADER(2 + n, 1, OCGC_USER_CUSTOM, id % NSLOTS), payload);
    break;
  default: /* minor collections, the commonest by far */
    payload[0] = 1;
    write_ev(L, d, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_FORCE_MINOR_ALLOC_SMALL),
             payload);
    write_ev(L, d, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR), NULL);
    payload[0] = (uint64_t)id * 4096u;
    write_ev(L, d, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED), payload);
    L->ts += 20000u + id;
    write_ev(L, d, OCGC_EV_HEADER(2, 0, OCGC_RT_END, OCGC_PH_MINOR), NULL);
    break;
  }
}

static void op_append(struct live *L, struct in *in)
{
  unsigned d = u8(in) % L->f.max_domains, n = 1 + u8(in) % 8, i;
  for (i = 0; i < n && mapped(L); i++) append_valid(L, d, in);
}

/* Many events at once: wraps the ring (loss) between two polls. */
static void op_wrap(struct live *L, struct in *in)
{
  unsigned d = u8(in) % L->f.max_domains, n = (unsigned)(L->f.ring_words / 4) * (1 + u8(in) % 8);
  unsigned i, id = u8(in);
  uint64_t v = 7;
  for (i = 0; i < n && mapped(L); i++) {
    L->ts += 100;
    if (id & 1)
      write_ev(L, d, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_PROMOTED), &v);
    else
      write_ev(L, d, OCGC_EV_HEADER(2, 0, i & 1 ? OCGC_RT_END : OCGC_RT_BEGIN, OCGC_PH_MINOR),
               NULL);
  }
}

/* An event whose header word comes from the input, its length made one
 * ringgen can write. */
static void op_append_raw(struct live *L, struct in *in)
{
  uint64_t payload[16], h;
  unsigned d = u8(in) % L->f.max_domains, o = u8(in), len, i;
  h = num(in, 8);
  len = 1 + (unsigned)(OCGC_EV_LENGTH(h) % 24);
  if (2 * len > L->f.ring_words) len = (unsigned)L->f.ring_words / 2;
  h = (h & ~(UINT64_C(0x3ff) << 54)) | ((uint64_t)len << 54);
  if (o & 1) h &= ~OCGC_EV_RESERVED_MASK; /* else mostly rejected at once */
  for (i = 0; i < 16; i++) payload[i] = i < 2 ? num(in, 8) : 0;
  if (!mapped(L)) return;
  L->clean = 0;
  write_ev(L, d, h, len > 2 && len - 2 <= 16 ? payload : NULL);
}

/* [offset, offset + len) of region [r] of the file. */
static void region(const struct live *L, unsigned r, unsigned d, uint64_t *off, uint64_t *len)
{
  const struct rg_file *f = &L->f;
  uint64_t ho = OCGC_WIRE_HEADER_SIZE + (f->has_ext ? ocgc_wire_ext_size(f->max_domains) : 0);
  uint64_t dat = ho + (uint64_t)f->max_domains * sizeof(struct ocgc_wire_ring_header);
  uint64_t names = dat + (uint64_t)f->max_domains * f->ring_words * 8;
  switch (f->has_ext ? r % 8 : r % 5) {
  case 0: *off = 0; *len = OCGC_WIRE_HEADER_SIZE; break;
  case 1: /* head, tail */
    *off = ho + (uint64_t)d * sizeof(struct ocgc_wire_ring_header); *len = 16; break;
  case 2: *off = dat + (uint64_t)d * f->ring_words * 8; *len = f->ring_words * 8; break;
  case 3: *off = names; *len = NSLOTS * OCGC_WIRE_USER_NAME_LEN; break;
  case 4: *off = 0; *len = f->size; break;
  case 5: *off = OCGC_WIRE_HEADER_SIZE; *len = sizeof(struct ocgc_wire_ext); break;
  case 6: /* seq, head_pos, head_events, written_events */
    *off = OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext) +
           (uint64_t)d * sizeof(struct ocgc_wire_ext_ring);
    *len = 32;
    break;
  default:
    *off = OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext) +
           (uint64_t)f->max_domains * sizeof(struct ocgc_wire_ext_ring);
    *len = sizeof(struct ocgc_wire_totals);
    break;
  }
}

static void put(struct live *L, const void *buf, size_t n, uint64_t off)
{
  if (pwrite(L->f.fd, buf, n, (off_t)off) != (ssize_t)n) return;
  if (off + n > L->cur_size) L->cur_size = off + n;
  L->clean = 0;
}

static void op_overwrite(struct live *L, struct in *in)
{
  unsigned r = u8(in), d = u8(in) % L->f.max_domains, n = 1 + u8(in) % 16, i;
  uint64_t off, len, at = num(in, 3);
  uint8_t buf[16];
  region(L, r, d, &off, &len);
  for (i = 0; i < n; i++) buf[i] = (uint8_t)u8(in);
  put(L, buf, n, off + at % len);
}

/* One word of a region set to a value made to matter: the word it was plus
 * or minus a little (head, tail, seq, offsets), or an edge value. */
static void op_nudge(struct live *L, struct in *in)
{
  static const uint64_t edge[8] = {0, 1, 2, UINT64_MAX, UINT64_C(1) << 63, 1u << 30,
                                   OCGC_EXT_MAGIC, OCGC_STATE_RUNNING};
  unsigned r = u8(in), d = u8(in) % L->f.max_domains, o = u8(in);
  uint64_t off, len, w = 0, at;
  region(L, r, d, &off, &len);
  at = off + (num(in, 2) * 8) % ((len + 7) / 8 * 8);
  if (pread(L->f.fd, &w, 8, (off_t)at) < 0) w = 0;
  switch (o & 3) {
  case 0: w += (uint64_t)((int)(o >> 2) - 32); break;
  case 1: w += (uint64_t)((int)(o >> 2) - 32) * L->f.ring_words; break;
  case 2: w = edge[(o >> 2) % 8]; break;
  default: w = num(in, 8); break;
  }
  put(L, &w, 8, at);
}

/* What the producer does: totals under their seqlock (a collection counted
 * in its kind's counter and cause row at once, allocation, the heap), the
 * exit state. */
static void op_totals(struct live *L, struct in *in)
{
  struct ocgc_wire_totals *t;
  uint64_t seq, *count;
  unsigned what = u8(in), v = u8(in), k;
  if (!L->f.has_ext || !mapped(L)) return;
  t = L->f.totals;
  seq = __atomic_load_n(&t->seq, __ATOMIC_RELAXED);
  if (seq & 1) return; /* someone made it odd: a producer would not go on */
  __atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  switch (what % 3) {
  case 0:
    k = (what >> 2) % OCGC_KIND_COUNT;
    count = k == OCGC_KIND_MINOR ? &t->minor_collections
          : k == OCGC_KIND_MAJOR_SLICE ? &t->major_slices
          : k == OCGC_KIND_MAJOR_FINISH ? &t->major_collections : &t->compactions;
    ++*count;
    t->by_cause[k][v % OCGC_CAUSE_COUNT]++;
    if (k == OCGC_KIND_MAJOR_FINISH && (v & 0x80)) t->forced_major_collections++;
    t->kind_time_ns[k] += v * 1000u;
    t->gc_time_ns += v * 1000u;
    break;
  case 1:
    t->minor_words += v * 1024u;
    t->promoted_words += v;
    t->major_words += v * 8u;
    t->direct_major_words += v & 0x0f;
    break;
  default:
    t->heap_words = (uint64_t)(v + 1) * 4096u;
    if (t->heap_words > t->top_heap_words) t->top_heap_words = t->heap_words;
    t->heap_chunks = 1 + v % 8;
    break;
  }
  L->ts += 10;
  t->updated_ns = L->ts;
  __atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
  if (what & 0x80) {
    L->f.ext->exited_ns = L->ts;
    __atomic_store_n(&L->f.ext->state, OCGC_STATE_EXITED, __ATOMIC_RELEASE);
  }
}

/* Rename a slot (which no producer does to a slot in use), or fill it
 * without a NUL.  By pwrite(): rg_set_name() finds the table through the
 * file's header, which may be hostile by now. */
static void op_name(struct live *L, struct in *in)
{
  char name[OCGC_WIRE_USER_NAME_LEN];
  unsigned o = u8(in), slot = o % NSLOTS, n = o & 0x80 ? sizeof name : u8(in) % 24, i;
  uint64_t off, len;
  memset(name, 0, sizeof name);
  for (i = 0; i < n; i++) /* no NUL inside; past 8 bytes, the first 8 again */
    name[i] = (char)((i < 8 ? u8(in) : (unsigned char)name[i - 8]) | 1);
  if (n < 4) memcpy(name, "ocgc.cause.weak", 16);
  region(L, 3, 0, &off, &len);
  put(L, name, sizeof name, off + slot * OCGC_WIRE_USER_NAME_LEN);
}

/* Cut (or grow) the file at one of its boundaries, give or take a little.
 * The layout comes from ringgen's parameters, never from the file, which
 * may have been overwritten. */
static void op_truncate(struct live *L, struct in *in)
{
  const struct rg_file *f = &L->f;
  uint64_t pts[10], to, ext = f->has_ext ? ocgc_wire_ext_size(f->max_domains) : 0;
  unsigned p = u8(in);
  int delta = (int)u8(in) - 128;
  pts[0] = 0;
  pts[1] = OCGC_WIRE_HEADER_SIZE;                              /* the header */
  pts[2] = OCGC_WIRE_HEADER_SIZE + (ext ? sizeof(struct ocgc_wire_ext) : 0);
  pts[3] = pts[2] + (ext ? f->max_domains * sizeof(struct ocgc_wire_ext_ring) : 0);
  pts[4] = OCGC_WIRE_HEADER_SIZE + ext;                        /* ring headers */
  pts[5] = pts[4] + f->max_domains * sizeof(struct ocgc_wire_ring_header); /* data */
  pts[6] = pts[5] + f->ring_words * 4;                         /* mid ring 0 */
  pts[7] = pts[5] + f->max_domains * f->ring_words * 8;        /* names */
  pts[8] = pts[7] + OCGC_WIRE_USER_NAME_LEN;
  pts[9] = f->size;
  to = pts[p % 10];
  if (p & 0x80) to += (uint64_t)(int64_t)delta * 8; /* may wrap: clamped below */
  else if (delta < 0 && (uint64_t)-delta <= to) to -= (uint64_t)-delta;
  if (to > f->size + 65536) to = f->size;
  if (ftruncate(f->fd, (off_t)to) != 0) return;
  L->cur_size = to;
  L->clean = 0;
}

static void op_restore(struct live *L, struct in *in)
{
  uint64_t to = L->f.size + (u8(in) & 1 ? 4096 : 0);
  if (L->cur_size >= to) return;
  if (ftruncate(L->f.fd, (off_t)to) == 0) L->cur_size = to;
}

/* ---- the program ----------------------------------------------------------------- */

static const char *const slot_names[NSLOTS] = {
    "ocgc.cause.explicit",    "ocgc.cause.minor_heap_full_c", "ocgc.major_cycle.start",
    "ocgc.major_cycle.end",   "ocgc.forced_major",            "ocgc.heap.grow",
    "ocgc.heap.shrink",       "ocgc.major_slice.work",        "ocgc.major_alloc.direct",
    "ocgc.cause.major_slice_due", "ocgc.cause.shutdown",      "app.requests",
    "ocgc.cause.",            "ocgc.cause.nonesuch",          "", "x"};

static int make_file(struct live *L, unsigned b0)
{
  static unsigned long serial;
  const char *tmp = getenv("TMPDIR");
  char path[4096];
  unsigned i, tries;
  int err = -EEXIST;

  /* A tmpfs if there is one: a disk file system's page cache costs a
   * third of the executions. */
  if (tmp == NULL || *tmp == '\0')
    tmp = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
  for (tries = 0; tries < 4 && err == -EEXIST; tries++) {
    snprintf(path, sizeof path, "%s/ocgc-fuzz-live.%ld.%lu", tmp, (long)getpid(), serial++);
    err = rg_create(&L->f, path, !(b0 & 4), 1 + (b0 & 3), UINT64_C(16) << ((b0 >> 3) % 7));
  }
  if (err != 0) {
    static int said;
    if (!said++)
      fprintf(stderr, "fuzz_live: cannot make a file in %s: %s\n", tmp, strerror(-err));
    return -1;
  }
  unlink(path);
  L->cur_size = L->f.size;
  for (i = 0; i < NSLOTS; i++)
    if (slot_names[i][0] != '\0') rg_set_name(&L->f, i, slot_names[i]);
  snprintf(L->path, sizeof L->path, "/proc/self/fd/%d", L->f.fd);
  return 0;
}

/* The writer's state after an operation (OCGC_FUZZ_TRACE). */
static void show(const struct live *L)
{
  unsigned d;
  fprintf(stderr, "   size %llu clean %d ts %llu src %s\n", (unsigned long long)L->cur_size,
          L->clean, (unsigned long long)L->ts, L->src ? "open" : "none");
  for (d = 0; d < L->f.max_domains && L->cur_size >= L->f.size; d++)
    fprintf(stderr, "   ring %u: head %llu tail %llu written %llu\n", d,
            (unsigned long long)L->f.rings[d].head, (unsigned long long)L->f.rings[d].tail,
            (unsigned long long)L->f.rings[d].written);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int trace = -1;
  struct in in = {data, data + size};
  struct live L;
  unsigned ops, i;

  if (trace < 0) trace = getenv("OCGC_FUZZ_TRACE") != NULL;
  if (size == 0) return 0;
  memset(&L, 0, sizeof L);
  L.clean = 1;
  L.ts = 1000000;
  if (make_file(&L, u8(&in)) != 0) return 0;
  reopen(&L);
  for (ops = 0; ops < MAX_OPS && in.p < in.end; ops++) {
    unsigned op = u8(&in) % 20;
    if (trace) fprintf(stderr, "op %u at %zu\n", op, (size_t)(in.p - data - 1));
    switch (op) {
    case 0: case 1: case 2: op_append(&L, &in); break;
    case 3: op_wrap(&L, &in); break;
    case 4: op_append_raw(&L, &in); break;
    case 5: op_overwrite(&L, &in); break;
    case 6: case 7: op_nudge(&L, &in); break;
    case 8: op_totals(&L, &in); break;
    case 9: op_name(&L, &in); break;
    case 10: op_truncate(&L, &in); break;
    case 11: op_restore(&L, &in); break;
    case 12: case 13: case 14: op_poll(&L, &in); break;
    case 15: case 16: op_agg(&L, &in, 0); break;
    case 17: op_info(&L, &in); break;
    case 18: reopen(&L); break;
    default: { /* drop a cursor: the next poll makes a fresh one */
      unsigned k = u8(&in) % NCUR;
      ocgc_cursor_free(L.cur[k]);
      L.cur[k] = NULL;
      break;
    }
    }
    if (trace) show(&L);
  }
  /* Every reader reads to the tails; with a clean file, exactly. */
  for (i = 0; i < NCUR; i++)
    if (L.cur[i] != NULL) poll_cursor(&L, i, 0, 1);
  if (L.src != NULL) {
    struct in none = {NULL, NULL};
    for (i = 0; i < NAGG; i++) {
      uint8_t sel[2] = {(uint8_t)i, 0};
      struct in pick = {sel, sel + 2};
      if (L.agg[i] != NULL) op_agg(&L, &pick, 1);
    }
    op_info(&L, &none);
  }
  free_readers(&L);
  ocgc_source_close(L.src);
  rg_close(&L.f);
  (void)L.sink;
  return 0;
}
