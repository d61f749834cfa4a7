/* cursor.c - reading events from every ring of a source, live.
 *
 * Protocol (wire.h): acquire tail; resync to head if it passed us (loss);
 * copy [pos, tail) into a private buffer in one batch with pread(), between
 * two full fences (see fetch()); reload head: words below it may have been
 * overwritten during the copy and are discarded as lost; decode the rest
 * from the private copy only.
 *
 * Invariants, per ring:
 * - pos is always an event boundary, head <= pos <= tail as last seen, and
 *   pos never moves back (a tail that does is a corrupt ring);
 * - for ocgc files, seq is the number of events that start before pos, so
 *   seen + lost + skipped == seq - seq_at_creation exactly, and seq <= pos
 *   (every event is at least one word);
 * - of lost, lost_before counts the events below `attach' (the tail when
 *   the cursor was made): those a full ring's writer overwrote before a
 *   cursor from the oldest event reached them, which it never could have
 *   read had it started from now;
 * - events that start before `start' (OCGC_START_NOW: the tail when the
 *   cursor was made) are counted as skipped, not delivered: a cursor is made
 *   in O(1) whatever the writer does, and catches up in its polls;
 * - nothing decoded is read from the file in place: a writer (or anyone
 *   else) changing the file can make events invalid, never make us read
 *   out of bounds; the header words are read as words.c reads them, which
 *   cannot fault;
 * - every poll ends within its budget of events and time (struct
 *   ocgc_cursor_opts), and says when it stopped short (stats.behind);
 * - a seqlock that stayed held is read as final only once attach.c says
 *   its producer is dead (ocgc_source_seq_stuck): the poll asks, after a
 *   read gave up; the reads (words.c) never check liveness. */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "opts.h"
#include "decode.h"
#include "clock.h"
#include "attach.h"
#include "source.h"

#define DEFAULT_BATCH_WORDS (UINT64_C(1) << 14) /* 128 KiB: big enough to amortise */
#define MIN_BATCH_WORDS (2 * OCGC_WIRE_MAX_EVENT_WORDS)
#define DEFAULT_POLL_EVENTS (UINT64_C(1) << 20)
#define DEFAULT_POLL_NS UINT64_C(10000000) /* 10 ms */
#define CLOCK_EVERY 64u /* events between two looks at the clock (about 20 ns each) */

/* Why a poll stopped before the tails. */
enum stop { GOING = 0, STOP_CALLER, STOP_BUDGET };

struct ring_state {
  uint64_t pos;        /* next word to read */
  uint64_t seq;        /* events before pos (ocgc files) */
  uint64_t start;      /* events before this word are skipped, not delivered */
  uint64_t attach;     /* the tail when the cursor was made: an event lost
                          below it was written before (stats.lost_before) */
};

struct ocgc_cursor {
  struct ocgc_source *src;
  uint64_t lost_pending;     /* events lost during a fetch, not yet reported */
  int lost_pending_exact;
  struct ocgc_cursor_opts o;
  uint64_t *buf;
  uint64_t buf_words;
  uint64_t buf_used;         /* the most words a batch copied since the
                                buffer's pages were last given back */
  struct ring_state *rs;
  struct ocgc_cursor_stats st;
  uint64_t words_seen;       /* for the loss estimate on stock files */
  unsigned next_ring;        /* round-robin start, so one busy ring cannot starve others */
  uint64_t max_events;       /* budget of one poll, resolved from the options */
  uint64_t max_ns;
  uint64_t deadline;         /* CLOCK_MONOTONIC ns at which this poll ends */
  uint64_t work;             /* events decoded in this poll, delivered or not */
  int out_of_time;           /* the deadline passed */
  int limit_stop;            /* enum stop: whose limit the event limit is */
  int inexact;               /* made while the producer held its seqlock:
                                no event counts, loss estimated (as stock) */
  uint64_t *headers;         /* a file read by copy: its ring headers, copied
                                once a poll (see idle_ring) */
  int filtering;             /* this poll passes by idle rings */
};

/* Most rings of a stock file are idle (OCaml 5 has 128 of them), and
 * reading a copied file's head and tail costs system calls (words.c), five
 * a ring for an ocgc file: a poll first copies all ring headers at once,
 * when they are few enough bytes, and passes by rings whose tail has not
 * moved.  A copy is only a hint: a torn or stale tail costs a ring one
 * poll's delay, or a normal read.  Not once an ocgc producer says it has
 * exited: a ring at its tail is then checked against its final counts. */
#define HEADERS_COPY_MAX (1024u * 1024)

static int idle_ring(const struct ocgc_cursor *c, unsigned d)
{
  const uint64_t *h;
  if (!c->filtering) return 0;
  h = c->headers + d * c->src->l.rh_size / 8;
  return h[1] == c->rs[d].pos && h[0] <= c->rs[d].pos; /* tail, head */
}

/* Whether this poll is out of time; a look at the clock each call. */
static int past_deadline(struct ocgc_cursor *c)
{
  if (!c->out_of_time && cm_mono_ns() >= c->deadline) c->out_of_time = 1;
  return c->out_of_time;
}

/* A consistent (head, events before head) pair.  ocgc files: the producer's
 * seqlock; stock files: head alone.  Returns 0, -EAGAIN (the seq stayed odd
 * for SRC_SEQ_WAIT_NS, or kept changing until the poll's deadline) or
 * OCGC_E_CORRUPT. */
static int read_head(struct ocgc_cursor *c, uint64_t d, uint64_t *head, uint64_t *events)
{
  const struct ocgc_source *s = c->src;
  const uint64_t er = src_ext_ring(s, d);
  uint64_t odd_since = 0;
  unsigned tries;
  int err;
  if (!s->l.has_ext) {
    /* Acquire: pairs with the writer's release store of head, made before
     * it overwrites anything below it. */
    *events = 0;
    return src_counter_acquire(s, src_ring_header(s, d), 1, head);
  }
  for (tries = 0; tries < 100000; tries++) {
    uint64_t s1, s2, pair[2];
    /* Acquire: pairs with the producer's release store of the even seq. */
    if ((err = src_seq_acquire(s, er, &s1)) != 0) return err;
    if (tries % 64 == 63) {
      if (past_deadline(c)) break;
      sched_yield(); /* a producer preempted mid-update: let it run */
    }
    if ((s1 & 1) && !s->gone) {
      /* Not the whole poll's budget: a stopped producer would cost that
       * much at every poll (an agent following a hundred of them spent
       * half a core on it). */
      if (tries % 64 == 63) {
        uint64_t now = cm_mono_ns();
        if (odd_since == 0) odd_since = now;
        else if (now - odd_since >= SRC_SEQ_WAIT_NS) break;
      }
      continue;
    }
    odd_since = 0;
    if ((err = src_copy(s, er + 8, pair, sizeof pair)) != 0) return err;
    *head = pair[0];
    *events = pair[1];
    /* Pairs with the producer's release fence after making seq odd, so a
     * torn pair shows up as a changed seq. */
    src_fence_acquire(s);
    if ((err = src_copy(s, er, &s2, 8)) != 0) return err;
    if (s1 == s2 || s->gone) return *events <= *head ? 0 : OCGC_E_CORRUPT;
  }
  return -EAGAIN;
}

static int load_tail(const struct ocgc_cursor *c, unsigned d, uint64_t *tail)
{
  /* Acquire: pairs with the writer's release store of tail, after the
   * event words it covers. */
  return src_counter_acquire(c->src, src_ring_header(c->src, d) + 8, 0, tail);
}

/* A (head, events, tail) triple that the writer could have left at one
 * moment: head <= tail, at most a ring apart.  tail is loaded first, and
 * again after head when the pair is not one: the writer lapped the ring
 * between the two loads (a copied file's loads are system calls apart, and
 * a fast writer laps a small ring in a microsecond), or the file lies.
 * Returns 0, -EAGAIN (the writer kept lapping us, or the poll's time ran
 * out) or OCGC_E_CORRUPT (the same impossible pair twice: a lie). */
static int read_span(struct ocgc_cursor *c, unsigned d, uint64_t *head, uint64_t *events,
                     uint64_t *tail)
{
  const uint64_t ring = c->src->l.ring_words;
  uint64_t last_head = 0, last_tail = 0;
  unsigned tries;
  int err;
  for (tries = 0; tries < 1000; tries++) {
    if ((err = read_head(c, d, head, events)) != 0) return err;
    if (*head <= *tail && *tail - *head <= ring) return 0;
    if (tries > 0 && *head == last_head && *tail == last_tail) return OCGC_E_CORRUPT;
    last_head = *head;
    last_tail = *tail;
    if (tries % 64 == 63 && past_deadline(c)) return -EAGAIN;
    if ((err = load_tail(c, d, tail)) != 0) return err;
    if (*head <= *tail && *tail - *head <= ring) return 0;
  }
  return -EAGAIN;
}

/* Count events passed unread: as lost (reported by report_lost(), once
 * the batch is fetched) or, below the cursor's start, as skipped. */
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

/* Of [events] overwritten in ring d between its position and [head], the
 * ones that start below the tail of the cursor's making go to
 * stats.lost_before: all of them, none, or (a stretch across that tail,
 * whose split in events is not known) a share by words, rounded down. */
static void lost_before(struct ocgc_cursor *c, unsigned d, uint64_t head, uint64_t events)
{
  const struct ring_state *r = &c->rs[d];
  if (r->pos >= r->attach || head <= r->pos) return;
  if (head <= r->attach) c->st.lost_before += events;
  else c->st.lost_before += (uint64_t)((unsigned __int128)events * (r->attach - r->pos) /
                                       (head - r->pos));
}

/* Move ring d's position up to head if the writer overwrote what we had not
 * read.  Returns 0, or a negative error. */
static int resync(struct ocgc_cursor *c, unsigned d, uint64_t *tail)
{
  struct ring_state *r = &c->rs[d];
  uint64_t head = 0, events = 0;
  int err;
  if ((err = read_span(c, d, &head, &events, tail)) != 0) return err;
  if (head <= r->pos) return 0;
  if (c->src->l.has_ext && !c->inexact) {
    if (events < r->seq) return OCGC_E_CORRUPT;
    if (head <= r->start) {
      c->st.skipped += events - r->seq; /* written before the cursor's start */
    } else {
      /* Some may predate the start: the split is unknown, and a loss is
       * what the caller must hear of. */
      account_lost(c, head - r->pos, events - r->seq, 1);
      lost_before(c, d, head, events - r->seq);
    }
    r->seq = events;
  } else {
    /* Stock files count loss in words; estimate events from the mean event
     * length seen so far (2.5 words before anything was seen). */
    uint64_t words = head - r->pos;
    uint64_t n = c->st.seen ? (uint64_t)(((unsigned __int128)words * c->st.seen +
                                          c->words_seen - 1) / c->words_seen)
                            : (words * 2 + 4) / 5;
    account_lost(c, words, n ? n : 1, 0);
    lost_before(c, d, head, n ? n : 1);
  }
  r->pos = head;
  return 0;
}

/* Where each ring's reading starts.  O(1) per ring: a
 * start-from-now cursor of an ocgc file starts at head, whose event count
 * the producer publishes, and skips what lies below the tail of now. */
static int start_positions(struct ocgc_cursor *c)
{
  const struct ocgc_source *src = c->src;
  unsigned d;
  int err = 0;
  for (d = 0; d < src->l.max_domains && err == 0; d++) {
    struct ring_state *r = &c->rs[d];
    uint64_t head = 0, events = 0, tail = 0;
    if ((err = load_tail(c, d, &tail)) != 0) break;
    if (c->inexact) { /* no counts to be had: positions from the header */
      if ((err = src_counter_acquire(src, src_ring_header(src, d), 1, &head)) != 0) break;
      if (head > tail || tail - head > src->l.ring_words) { err = OCGC_E_CORRUPT; break; }
      r->pos = r->start = c->o.start == OCGC_START_NOW ? tail : head;
      r->attach = tail;
      continue;
    }
    if (c->o.start == OCGC_START_NOW && !src->l.has_ext) {
      r->pos = r->start = r->attach = tail; /* no event counts to keep */
      continue;
    }
    if ((err = read_span(c, d, &head, &events, &tail)) != 0) break;
    r->pos = head;
    r->seq = events;
    r->start = c->o.start == OCGC_START_NOW ? tail : head;
    r->attach = tail;
    c->st.skipped += events;
  }
  return err;
}

/* The budget of one poll (or of making the cursor). */
static void budget_begin(struct ocgc_cursor *c)
{
  uint64_t now = cm_mono_ns();
  c->work = 0;
  c->out_of_time = 0;
  c->deadline = c->max_ns > UINT64_MAX - now ? UINT64_MAX : now + c->max_ns;
}

int ocgc_cursor_new(struct ocgc_source *src, const struct ocgc_cursor_opts *opts,
                    struct ocgc_cursor **out)
{
  struct ocgc_cursor *c;
  int err = 0;
  if (src == NULL || out == NULL) return -EINVAL;
  if ((err = ocgc_source_check_size(src)) != 0) return err;
  c = calloc(1, sizeof *c);
  if (c == NULL) return -ENOMEM;
  c->src = src;
  if ((err = opts_read(&c->o, sizeof c->o, opts)) != 0) {
    free(c);
    return err;
  }
  c->o.sz = sizeof c->o;
  c->buf_words = c->o.batch_words ? c->o.batch_words : DEFAULT_BATCH_WORDS;
  if (c->buf_words < MIN_BATCH_WORDS) c->buf_words = MIN_BATCH_WORDS;
  /* A batch never needs more than the ring holds. */
  if (c->buf_words > src->l.ring_words && src->l.ring_words >= MIN_BATCH_WORDS)
    c->buf_words = src->l.ring_words;
  c->max_events = c->o.poll_max_events ? c->o.poll_max_events : DEFAULT_POLL_EVENTS;
  c->max_ns = c->o.poll_max_ns ? c->o.poll_max_ns : DEFAULT_POLL_NS;
  /* A mapping of its own, so that its pages can be given back (see
   * buf_give_back). */
  c->buf = mmap(NULL, c->buf_words * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (c->buf == MAP_FAILED) c->buf = NULL;
  c->rs = calloc(src->l.max_domains, sizeof *c->rs);
  c->st.lost_exact = src->l.has_ext;
  if (src->map == NULL && src->l.max_domains > 1 &&
      src->l.max_domains * src->l.rh_size <= HEADERS_COPY_MAX &&
      (c->headers = malloc(src->l.max_domains * src->l.rh_size)) == NULL) {
    ocgc_cursor_free(c);
    return -ENOMEM;
  }
  if (c->buf == NULL || c->rs == NULL) { ocgc_cursor_free(c); return -ENOMEM; }
  budget_begin(c);
  err = start_positions(c);
  if (err == -EAGAIN && ocgc_source_seq_stuck(src)) {
    /* Its producer is dead: no wait ends its odd seqlock, and whether the
     * first try ran out of time (a loaded machine) must not decide what
     * is read.  A gone source's reads do not wait on the seqlock, so a
     * budget of their own is bounded by the rings' size. */
    c->st.skipped = 0;
    budget_begin(c);
    err = start_positions(c);
  }
  if (err == -EAGAIN) {
    /* A live producer keeps its seqlock busy: start without its counts,
     * and count loss as for stock files (estimated), rather than fail. */
    c->st.skipped = 0;
    c->inexact = 1;
    c->st.lost_exact = 0;
    err = start_positions(c);
  }
  if (err != 0) { ocgc_cursor_free(c); return err; }
  *out = c;
  return 0;
}

void ocgc_cursor_free(struct ocgc_cursor *c)
{
  if (c == NULL) return;
  if (c->buf != NULL) munmap(c->buf, c->buf_words * 8);
  free(c->rs);
  free(c->headers);
  free(c);
}

/* The rest of ring d cannot be decoded: skip to tail (never back), count
 * it as lost. */
static void skip_corrupt(struct ocgc_cursor *c, unsigned d, uint64_t tail)
{
  struct ring_state *r = &c->rs[d];
  c->st.corrupt++;
  if (tail > r->pos) {
    account_lost(c, tail - r->pos, 1, 0);
    r->pos = tail;
  }
  report_lost(c, d);
}

/* One batch of ring d, copied out of the file. */
struct batch {
  uint64_t tail;  /* tail as last loaded */
  uint64_t base;  /* ring position of buf[0] */
  uint64_t n;     /* words copied */
  uint64_t i;     /* first word of the copy still valid */
};

/* Copy ring words [pos, pos + n) into buf (two pieces across the end). */
static int copy_words(struct ocgc_cursor *c, unsigned d, uint64_t pos, uint64_t n)
{
  const struct ocgc_source *s = c->src;
  uint64_t size = s->l.ring_words, start = pos & (size - 1);
  uint64_t first = n < size - start ? n : size - start;
  uint64_t base = src_ring_data(s, d);
  int err;
  if (n > c->buf_used) c->buf_used = n;
  err = ocgc_source_pread(s, base + start * 8, c->buf, first * 8);
  if (err == 0 && n > first) err = ocgc_source_pread(s, base, c->buf + first, (n - first) * 8);
  return err;
}

/* An ocgc file whose producer has exited has final counts: a cursor that
 * reached a ring's tail has passed exactly as many events as the producer
 * says it wrote there.  Anything else is a forged count. */
static int check_final(const struct ocgc_cursor *c, unsigned d)
{
  const struct ocgc_source *s = c->src;
  uint64_t state, written, tail;
  int err;
  if (!s->l.has_ext || c->inexact) return 0;
  /* Acquire: pairs with the producer's release store of state at exit,
   * after its last event and counts. */
  if ((err = src_word_acquire(s, OCGC_WIRE_HEADER_SIZE + offsetof(struct ocgc_wire_ext, state),
                              &state)) != 0)
    return err;
  if (state != OCGC_STATE_EXITED) return 0;
  if ((err = src_copy(s, src_ext_ring(s, d) + offsetof(struct ocgc_wire_ext_ring, written_events),
                      &written, 8)) != 0 ||
      (err = load_tail(c, d, &tail)) != 0)
    return err;
  if (tail != c->rs[d].pos) return 0; /* not there yet (or moving: not final) */
  return written == c->rs[d].seq ? 0 : OCGC_E_CORRUPT;
}

/* Bring the next batch of ring d into c->buf.  b->n is 0 when there is nothing new.  Returns 0 or a negative
 * error. */
static int fetch(struct ocgc_cursor *c, unsigned d, struct batch *b)
{
  struct ring_state *r = &c->rs[d];
  int err;
  b->n = 0;
  if ((err = load_tail(c, d, &b->tail)) != 0) return err;
  if (b->tail < r->pos) return OCGC_E_CORRUPT; /* a tail moved back */
  if ((err = resync(c, d, &b->tail)) != 0) return err;
  if (r->pos >= b->tail) return check_final(c, d);
  b->n = b->tail - r->pos;
  if (b->n > c->buf_words) b->n = c->buf_words;
  b->base = r->pos;
  /* Full fences on both sides of the copy, not acquire ones: the copy's
   * loads are made by the kernel with string moves, for which x86 documents
   * weaker ordering than for plain loads, and a copy that read a word before
   * the tail load that published it, or after the head load that should
   * tell us it was overwritten, would decode old events as new.  Two
   * fences per batch cost nothing next to the system call. */
  __atomic_thread_fence(__ATOMIC_SEQ_CST); /* tail load before the copy */
  if ((err = copy_words(c, d, b->base, b->n)) != 0) return err;
  /* Pairs with the writer's release fence between publishing a new head
   * and overwriting the words below it: the copy before the head reload. */
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if ((err = resync(c, d, &b->tail)) != 0) return err;
  b->i = r->pos - b->base; /* words of the copy overwritten meanwhile */
  return 0;
}

/* Poll one ring.  Returns events delivered (>= 0) or a negative error;
 * *stop is set when a callback, the caller's limit or the budget ends the
 * poll. */
static int64_t poll_ring(struct ocgc_cursor *c, unsigned d, uint64_t limit, int *stop)
{
  struct ring_state *r = &c->rs[d];
  uint64_t mask = c->src->l.ring_words - 1;
  int64_t delivered = 0;

  for (;;) {
    struct batch b = {0, 0, 0, 0};
    uint64_t i;
    int err;
    if (past_deadline(c)) { *stop = STOP_BUDGET; return delivered; }
    err = fetch(c, d, &b);
    /* A seqlock that stayed busy for all the tries (not merely until the
     * deadline) may be a producer killed mid-publication: if it is dead,
     * what it left is final, read as it is. */
    if (err == -EAGAIN && !c->out_of_time && !c->src->gone && ocgc_source_seq_stuck(c->src))
      err = fetch(c, d, &b);
    report_lost(c, d);
    if (err == OCGC_E_CORRUPT) { skip_corrupt(c, d, b.tail); return err; }
    if (err) return err;
    if (b.n == 0) return delivered;
    for (i = b.i; i < b.n;) {
      struct ocgc_event ev;
      int padding;
      int64_t len = ocgc_decode(c->buf + i, b.n - i, &ev, &padding);
      uint64_t at = b.base + i, slot = at & mask;
      if (len == 0) {
        if (b.n == b.tail - b.base) len = OCGC_E_CORRUPT; /* cut short by tail itself */
        else break;                                       /* by the batch: next round */
      }
      if (len < 0 || slot + (uint64_t)len > mask + 1 ||
          (padding && slot + (uint64_t)len != mask + 1)) {
        r->pos = at;
        skip_corrupt(c, d, b.tail);
        return OCGC_E_CORRUPT;
      }
      i += (uint64_t)len;
      r->pos = b.base + i;
      if (padding) continue;
      r->seq++;
      if (++c->work % CLOCK_EVERY == 0 && past_deadline(c)) *stop = STOP_BUDGET;
      if (at < r->start) {
        c->st.skipped++;
      } else {
        c->st.seen++;
        c->words_seen += (uint64_t)len;
        delivered++;
        if (c->o.on_event) {
          ev.ring = d;
          if (ev.user) ev.name = ocgc_source_user_name(c->src, ev.id);
          if (c->o.on_event(&ev, c->o.ctx)) *stop = STOP_CALLER;
        }
        if ((uint64_t)delivered >= limit && *stop == GOING) *stop = c->limit_stop;
      }
      if (*stop != GOING) return delivered;
    }
  }
}

/* Once a poll ends caught up after batches that went past BUF_KEEP_BYTES
 * of the copy buffer (the first read of a full ring, a burst), the pages
 * past that are given back: an agent that follows a thousand processes
 * would otherwise keep 128 KiB resident for each, though most polls copy a
 * few words.  Not while the ring keeps the cursor behind: its next poll
 * would only fault them in again. */
#define BUF_KEEP_BYTES (16u * 1024)

static void buf_give_back(struct ocgc_cursor *c)
{
  uint64_t used = c->buf_used * 8;
  if (used <= BUF_KEEP_BYTES) return;
  c->buf_used = 0;
  (void)madvise((char *)c->buf + BUF_KEEP_BYTES, used - BUF_KEEP_BYTES, MADV_DONTNEED);
}

/* Whether this poll passes by idle rings (c->filtering), and the copy of
 * the ring headers it does it with.  Returns 0 or a negative error. */
static int start_filter(struct ocgc_cursor *c)
{
  const struct ocgc_source *s = c->src;
  uint64_t state = 0;
  int err;
  c->filtering = 0;
  if (c->headers == NULL) return 0;
  if (s->l.has_ext && !c->inexact) {
    /* Acquire: pairs with the producer's release store of state at exit. */
    err = src_word_acquire(s, OCGC_WIRE_HEADER_SIZE + offsetof(struct ocgc_wire_ext, state),
                           &state);
    if (err == -EAGAIN) return 0; /* changing: read every ring */
    if (err != 0) return err;
    if (state == OCGC_STATE_EXITED) return 0;
  }
  if ((err = src_copy(s, s->l.headers_offset, c->headers, s->l.max_domains * s->l.rh_size)) != 0)
    return err;
  c->filtering = 1;
  return 0;
}

int64_t ocgc_cursor_poll(struct ocgc_cursor *c, uint64_t max_events)
{
  uint64_t nd, k, limit;
  int64_t total = 0;
  int stop = GOING, busy = 0;
  int err;
  if (c == NULL) return -EINVAL;
  if ((err = ocgc_source_check_size(c->src)) != 0) return err;
  budget_begin(c);
  c->src->poll_gen++; /* empty user-name slots may be read again */
  c->src->polling++;
  limit = max_events && max_events < c->max_events ? max_events : c->max_events;
  c->limit_stop = limit == max_events ? STOP_CALLER : STOP_BUDGET;
  nd = c->src->l.max_domains;
  if ((err = start_filter(c)) != 0) {
    c->src->polling--;
    return err;
  }
  for (k = 0; k < nd && stop == GOING; k++) {
    unsigned d = (unsigned)((c->next_ring + k) % nd);
    int64_t got;
    if (idle_ring(c, d)) continue;
    got = poll_ring(c, d, limit - (uint64_t)total, &stop);
    if (got == -EAGAIN) {
      /* A producer that held its seqlock past SRC_SEQ_WAIT_NS (stopped,
       * preempted, or hostile) only ends the poll early: what was delivered stands,
       * and the next poll starts from the next ring. */
      c->st.busy_polls++;
      stop = STOP_BUDGET;
      busy = 1;
      got = 0;
    }
    if (got < 0) {
      c->st.behind = 1;
      c->next_ring = (unsigned)((d + 1) % nd);
      c->src->polling--;
      return got;
    }
    total += got;
    if (stop != GOING) c->next_ring = (unsigned)((d + 1) % nd);
  }
  c->src->polling--;
  /* Caught up, or held by a producer that keeps its seqlock (whose next
   * poll may be long in coming: a stopped one is left alone for a while). */
  if (stop == GOING || busy) buf_give_back(c);
  c->st.behind = stop != GOING;
  if (stop == STOP_BUDGET) c->st.cut_polls++;
  return total;
}

void ocgc_cursor_stats(const struct ocgc_cursor *c, struct ocgc_cursor_stats *out)
{
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  if (c == NULL || out == NULL || out->sz < sizeof out->sz) return;
  st = c->st;
  st.sz = sizeof st;
  (void)opts_write(out, &st, sizeof st);
}

const struct ocgc_source *cursor_source(const struct ocgc_cursor *c)
{
  return c->src;
}
