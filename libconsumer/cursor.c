/* cursor.c - reading events from every ring of a source, live.
 *
 * Protocol (wire.h): acquire tail; resync to head if it passed us (loss);
 * copy [pos, tail) into a private buffer in one batch; acquire fence;
 * reload head: words below it may have been overwritten during the copy and
 * are discarded as lost; decode the rest from the private copy only.
 *
 * Invariants, per ring:
 * - pos is always an event boundary, head <= pos <= tail as last seen;
 * - for ocgc files, seq is the number of events that start before pos, so
 *   seen + lost + skipped == seq - seq_at_creation exactly;
 * - nothing decoded is read from the mapping: a writer (or anyone else)
 *   changing the file can make events invalid, never make us read out of
 *   bounds;
 * - every access to the mapping runs under the SIGBUS guard (guard.h), and
 *   no callback runs under it: loss found while fetching is reported after
 *   the fetch. */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "guard.h"
#include "shm.h"
#include "source.h"

#define DEFAULT_BATCH_WORDS (UINT64_C(1) << 14) /* 128 KiB: big enough to amortise */
#define MIN_BATCH_WORDS (2 * OCGC_WIRE_MAX_EVENT_WORDS)

struct ring_state {
  uint64_t pos;        /* next word to read */
  uint64_t seq;        /* events before pos (ocgc files) */
};

struct ocgc_cursor {
  struct ocgc_source *src;
  uint64_t lost_pending;     /* events lost during a fetch, not yet reported */
  int lost_pending_exact;
  struct ocgc_cursor_opts o;
  uint64_t *buf;
  uint64_t buf_words;
  struct ring_state *rs;
  struct ocgc_cursor_stats st;
  uint64_t words_seen;       /* for the loss estimate on stock files */
  unsigned next_ring;        /* round-robin start, so one busy ring cannot starve others */
};

/* A consistent (head, events before head) pair.  ocgc files: the producer's
 * seqlock; stock files: head alone.  Returns 0 or -EAGAIN. */
static int read_head(const struct ocgc_cursor *c, uint64_t d, uint64_t *head, uint64_t *events)
{
  const struct ocgc_source *s = c->src;
  unsigned tries;
  if (!s->l.has_ext) {
    /* Acquire: pairs with the writer's release store of head, made before
     * it overwrites anything below it. */
    *head = shm_load_acquire(&src_ring_header(s, d)[0]);
    *events = 0;
    return 0;
  }
  for (tries = 0; tries < 10000; tries++) {
    const uint64_t *er = src_ext_ring(s, d);
    /* Acquire: pairs with the producer's release store of the even seq. */
    uint64_t s1 = shm_load_acquire(&er[0]), s2;
    if ((s1 & 1) && !s->gone) {
      if (tries > 100) sched_yield();
      continue;
    }
    *head = shm_load(&er[1]);
    *events = shm_load(&er[2]);
    /* Acquire fence: pairs with the producer's release fence after making
     * seq odd, so a torn pair shows up as a changed seq. */
    shm_fence_acquire();
    s2 = shm_load(&er[0]);
    if (s1 == s2 || s->gone) return 0;
  }
  return -EAGAIN;
}

/* Count loss now; tell the caller in report_lost(), outside the guard. */
static void account_lost(struct ocgc_cursor *c, uint64_t words, uint64_t events, int exact)
{
  c->st.lost_words += words;
  c->st.lost += events;
  if (!exact) c->st.lost_exact = 0;
  if (c->lost_pending == 0) c->lost_pending_exact = 1;
  c->lost_pending += events;
  if (!exact) c->lost_pending_exact = 0;
}

static void report_lost(struct ocgc_cursor *c, unsigned d)
{
  uint64_t n = c->lost_pending;
  c->lost_pending = 0;
  if (n && c->o.on_lost) c->o.on_lost(d, n, c->lost_pending_exact, c->o.ctx);
}

/* Move ring d's position up to head if the writer overwrote what we had not
 * read.  Returns 0, or a negative error. */
static uint64_t load_tail(const struct ocgc_cursor *c, unsigned d);

static int resync(struct ocgc_cursor *c, unsigned d, uint64_t *tail)
{
  struct ring_state *r = &c->rs[d];
  uint64_t head = 0, events = 0;
  unsigned tries;
  int err;
  /* A head past our tail means the writer moved on after we loaded tail:
   * load the pair again, tail first, so that head <= tail holds and then
   * tail - head cannot exceed the ring for an honest writer. */
  for (tries = 0; tries < 1000; tries++) {
    if ((err = read_head(c, d, &head, &events)) != 0) return err;
    if (head <= *tail) break;
    *tail = load_tail(c, d);
  }
  if (head > *tail || *tail - head > c->src->l.ring_words) return OCGC_E_CORRUPT;
  if (head <= r->pos) return 0;
  if (c->src->l.has_ext) {
    if (events < r->seq) return OCGC_E_CORRUPT;
    account_lost(c, head - r->pos, events - r->seq, 1);
    r->seq = events;
  } else {
    /* Stock files count loss in words; estimate events from the mean event
     * length seen so far (2.5 words before anything was seen). */
    uint64_t words = head - r->pos;
    uint64_t n = c->st.seen ? (uint64_t)(((unsigned __int128)words * c->st.seen +
                                          c->words_seen - 1) / c->words_seen)
                            : (words * 2 + 4) / 5;
    account_lost(c, words, n ? n : 1, 0);
  }
  r->pos = head;
  return 0;
}

static uint64_t load_tail(const struct ocgc_cursor *c, unsigned d)
{
  /* Acquire: pairs with the writer's release store of tail, after the
   * event words it covers. */
  return shm_load_acquire(&src_ring_header(c->src, d)[1]);
}

/* Walk headers from head to tail in place, to learn how many events stand
 * before tail (ocgc files, OCGC_START_NOW).  Retries if the writer moves
 * head during the walk. */
static int seek_tail(struct ocgc_cursor *c, unsigned d)
{
  const uint64_t *data = src_ring_data(c->src, d);
  uint64_t mask = c->src->l.ring_words - 1;
  unsigned tries;
  for (tries = 0; tries < 100; tries++) {
    uint64_t tail = load_tail(c, d), head, events, head2, events2, pos, n = 0;
    int err = read_head(c, d, &head, &events);
    if (err) return err;
    if (head > tail) continue; /* lapped between the loads: again */
    if (tail - head > c->src->l.ring_words) return OCGC_E_CORRUPT;
    for (pos = head; pos < tail;) {
      uint64_t h = shm_load(&data[pos & mask]);
      uint64_t len = OCGC_EV_LENGTH(h);
      if (len == 0 || len > tail - pos) break;
      if (OCGC_EV_IS_USER(h) || OCGC_EV_TYPE(h) != OCGC_RT_PADDING) n++;
      pos += len;
    }
    shm_fence_acquire();
    err = read_head(c, d, &head2, &events2);
    if (err) return err;
    if (head2 != head) continue; /* overwritten while walking: again */
    if (pos != tail) return OCGC_E_CORRUPT;
    c->rs[d].pos = tail;
    c->rs[d].seq = events + n;
    return 0;
  }
  return -EAGAIN;
}

static int start_positions(struct ocgc_cursor *c);

static int guarded_start(struct ocgc_cursor *c)
{
  int err;
  OCGC_GUARDED(c->src->map, c->src->size, err, start_positions(c));
  return err;
}

int ocgc_cursor_new(struct ocgc_source *src, const struct ocgc_cursor_opts *opts,
                    struct ocgc_cursor **out)
{
  struct ocgc_cursor *c;
  unsigned d;
  int err = 0;
  if (src == NULL || out == NULL) return -EINVAL;
  if ((err = ocgc_source_check_size(src)) != 0) return err;
  c = calloc(1, sizeof *c);
  if (c == NULL) return -ENOMEM;
  c->src = src;
  if (opts != NULL) memcpy(&c->o, opts, opts->sz < sizeof c->o ? opts->sz : sizeof c->o);
  c->o.sz = sizeof c->o;
  c->buf_words = c->o.batch_words ? c->o.batch_words : DEFAULT_BATCH_WORDS;
  if (c->buf_words < MIN_BATCH_WORDS) c->buf_words = MIN_BATCH_WORDS;
  /* A batch never needs more than the ring holds. */
  if (c->buf_words > src->l.ring_words && src->l.ring_words >= MIN_BATCH_WORDS)
    c->buf_words = src->l.ring_words;
  c->buf = malloc(c->buf_words * 8);
  c->rs = calloc(src->l.max_domains, sizeof *c->rs);
  c->st.lost_exact = src->l.has_ext;
  if (c->buf == NULL || c->rs == NULL) { ocgc_cursor_free(c); return -ENOMEM; }
  err = guarded_start(c);
  if (err == -EAGAIN && ocgc_source_seq_stuck(src)) err = guarded_start(c);
  if (err != 0) { ocgc_cursor_free(c); return err; }
  for (d = 0; d < src->l.max_domains; d++) c->st.skipped += c->rs[d].seq;
  *out = c;
  return 0;
}

/* Under the guard: where each ring's reading starts. */
static int start_positions(struct ocgc_cursor *c)
{
  const struct ocgc_source *src = c->src;
  unsigned d;
  int err = 0;
  for (d = 0; d < src->l.max_domains && err == 0; d++) {
    uint64_t head, events, tail;
    if (c->o.start == OCGC_START_NOW) {
      if (src->l.has_ext) {
        err = seek_tail(c, d);
      } else {
        tail = load_tail(c, d);
        c->rs[d].pos = tail;
      }
    } else {
      err = read_head(c, d, &head, &events);
      c->rs[d].pos = head;
      c->rs[d].seq = events;
    }
  }
  return err;
}

void ocgc_cursor_free(struct ocgc_cursor *c)
{
  if (c == NULL) return;
  free(c->buf);
  free(c->rs);
  free(c);
}

/* Copy ring words [pos, pos + n) into buf (two pieces across the end). */
static void copy_words(const struct ocgc_cursor *c, unsigned d, uint64_t pos, uint64_t n)
{
  const uint64_t *data = src_ring_data(c->src, d);
  uint64_t size = c->src->l.ring_words, start = pos & (size - 1);
  uint64_t first = n < size - start ? n : size - start;
  memcpy(c->buf, data + start, first * 8);
  if (n > first) memcpy(c->buf + first, data, (n - first) * 8);
}

/* The rest of ring d cannot be decoded: skip to tail, count it as lost. */
static void skip_corrupt(struct ocgc_cursor *c, unsigned d, uint64_t tail)
{
  struct ring_state *r = &c->rs[d];
  if (tail > r->pos) account_lost(c, tail - r->pos, 1, 0);
  r->pos = tail;
  report_lost(c, d);
}

/* One batch of ring d, copied out of the mapping. */
struct batch {
  uint64_t tail;  /* tail as last loaded */
  uint64_t base;  /* ring position of buf[0] */
  uint64_t n;     /* words copied */
  uint64_t i;     /* first word of the copy still valid */
};

/* Under the guard: bring the next batch of ring d into c->buf.  b->n is 0
 * when there is nothing new.  Returns 0 or a negative error. */
static int fetch(struct ocgc_cursor *c, unsigned d, struct batch *b)
{
  struct ring_state *r = &c->rs[d];
  int err;
  b->tail = load_tail(c, d);
  b->n = 0;
  if ((err = resync(c, d, &b->tail)) != 0) return err;
  if (r->pos >= b->tail) return 0;
  b->n = b->tail - r->pos;
  if (b->n > c->buf_words) b->n = c->buf_words;
  b->base = r->pos;
  copy_words(c, d, b->base, b->n);
  /* Acquire fence: pairs with the writer's release fence between
   * publishing a new head and overwriting the words below it. */
  shm_fence_acquire();
  if ((err = resync(c, d, &b->tail)) != 0) return err;
  b->i = r->pos - b->base; /* words of the copy overwritten meanwhile */
  return 0;
}

/* fetch() under the guard, in a frame of its own so that no caller's
 * locals live across the sigsetjmp. */
static int guarded_fetch(struct ocgc_cursor *c, unsigned d, struct batch *b)
{
  int err;
  OCGC_GUARDED(c->src->map, c->src->size, err, fetch(c, d, b));
  return err;
}

/* Poll one ring.  Returns events delivered (>= 0) or a negative error;
 * *stop is set when a callback or the limit asked to stop. */
static int64_t poll_ring(struct ocgc_cursor *c, unsigned d, uint64_t limit, int *stop)
{
  struct ring_state *r = &c->rs[d];
  uint64_t mask = c->src->l.ring_words - 1;
  int64_t delivered = 0;

  for (;;) {
    struct batch b = {0, 0, 0, 0};
    uint64_t i;
    int err;
    err = guarded_fetch(c, d, &b);
    if (err == -EAGAIN && !c->src->gone && ocgc_source_seq_stuck(c->src))
      err = guarded_fetch(c, d, &b); /* killed mid-publication: read what it left */
    report_lost(c, d);
    if (err == OCGC_E_CORRUPT) { skip_corrupt(c, d, b.tail); return err; }
    if (err) return err;
    if (b.n == 0) return delivered;
    for (i = b.i; i < b.n;) {
      struct ocgc_event ev;
      int padding;
      int64_t len = ocgc_decode(c->buf + i, b.n - i, &ev, &padding);
      uint64_t slot = (b.base + i) & mask;
      if (len == 0) {
        if (b.n == b.tail - b.base) len = OCGC_E_CORRUPT; /* cut short by tail itself */
        else break;                                       /* by the batch: next round */
      }
      if (len < 0 || slot + (uint64_t)len > mask + 1 ||
          (padding && slot + (uint64_t)len != mask + 1)) {
        r->pos = b.base + i;
        skip_corrupt(c, d, b.tail);
        return OCGC_E_CORRUPT;
      }
      i += (uint64_t)len;
      r->pos = b.base + i;
      if (padding) continue;
      r->seq++;
      c->st.seen++;
      c->words_seen += (uint64_t)len;
      delivered++;
      if (c->o.on_event) {
        ev.ring = d;
        if (ev.user) ev.name = ocgc_source_user_name(c->src, ev.id);
        if (c->o.on_event(&ev, c->o.ctx)) *stop = 1;
      }
      if (*stop || (limit && (uint64_t)delivered >= limit)) {
        *stop = 1;
        return delivered;
      }
    }
  }
}

int64_t ocgc_cursor_poll(struct ocgc_cursor *c, uint64_t max_events)
{
  uint64_t nd, k;
  int64_t total = 0;
  int stop = 0, err;
  if (c == NULL) return -EINVAL;
  if ((err = ocgc_source_check_size(c->src)) != 0) return err;
  nd = c->src->l.max_domains;
  for (k = 0; k < nd && !stop; k++) {
    unsigned d = (unsigned)((c->next_ring + k) % nd);
    int64_t got = poll_ring(c, d, max_events ? max_events - (uint64_t)total : 0, &stop);
    if (got < 0) return got;
    total += got;
    if (stop) c->next_ring = (unsigned)((d + 1) % nd);
  }
  return total;
}

void ocgc_cursor_stats(const struct ocgc_cursor *c, struct ocgc_cursor_stats *out)
{
  if (c == NULL || out == NULL) return;
  *out = c->st;
}
