/* flight_write.c - a recording written (ocgc/flight.h): a source's ring
 * file as it is now, then the flight block (wire.h struct ocgc_wire_flight,
 * docs/wire-format.md "Recordings").
 *
 * Invariants:
 * - the ring file's bytes are [0, end of the user-event name table): the
 *   layout source.c validated, nothing the file may hold past it (a
 *   recording of a recording gets one block, the newest); the block
 *   follows at that offset, which is a multiple of 8;
 * - every byte is read with pread(), the file's own or a sealed memfd's:
 *   it cannot fault, and a memfd's holes (the allocation profile's rows
 *   never taken, the name slots never named) read as zeros without being
 *   committed; zero runs of COPY_CHUNK bytes are skipped with lseek() where
 *   the output can seek, so a recording is sparse as the ring is;
 * - the seqlocked regions (the totals, each ring's loss record, the
 *   allocation profile's header and rows in use) are copied consistently
 *   under their seqlocks and laid over the bulk copy, with an even seq:
 *   a recording is a file nobody writes, and its readers must never wait
 *   on a seq left odd by an update the copy caught.  A region that cannot
 *   be read consistently (a producer held busy, a liar) is taken as it is,
 *   its seq made even all the same;
 * - a live ring is copied while its producer writes, so each ring's
 *   window is cut to what the copy holds whole: its tail as read before
 *   the copy (an event past it may be half copied), its head as the loss
 *   record says after the copy (the producer publishes a new head before
 *   it overwrites, so every word it overwrote while the copy ran lies
 *   before it), the loss record read then too; a ring the writer lapped
 *   during the copy is recorded empty at its new head.  Without this, a
 *   copy of a busy ring held words overwritten after the header was
 *   copied, and readers refused the recording as corrupt.  A dead
 *   process's ring is stable and keeps its window;
 * - at most OCGC_FLIGHT_MAX_BYTES are copied (-EFBIG past it); writes
 *   loop on short writes and EINTR. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc/flight.h"
#include "opts.h"
#include "source.h"

#define COPY_CHUNK (64u * 1024u)
#define NAMES_BYTES ((uint64_t)OCGC_WIRE_USER_EVENTS * OCGC_WIRE_USER_NAME_LEN)

/* A region copied consistently, laid over the bulk copy. */
struct overlay {
  uint64_t off, len, seq_off; /* seq_off: its seq word, from off */
  unsigned char *buf;
};

#define MAX_OVERLAYS 2

struct raw_ctx {
  uint64_t off, len;
  unsigned char *buf;
};

static int raw_copy(const struct ocgc_source *s, void *ctx)
{
  struct raw_ctx *c = ctx;
  return ocgc_source_pread(s, c->off, c->buf, c->len);
}

/* [len] bytes at [off] under the seqlock at [seq_off] (file offsets) into
 * buf; taken as they are when the seqlock never settles; the seq made
 * even.  0 or an error of the file. */
static int settled(const struct ocgc_source *s, uint64_t off, uint64_t len, uint64_t seq_off,
                   unsigned char *buf)
{
  struct raw_ctx c = {off, len, buf};
  uint64_t seq;
  int err = src_seqlock_read(s, seq_off, raw_copy, &c);
  if (err == -EAGAIN) err = raw_copy(s, &c);
  if (err != 0) return err;
  memcpy(&seq, buf + (seq_off - off), 8);
  seq &= ~UINT64_C(1);
  memcpy(buf + (seq_off - off), &seq, 8);
  return 0;
}

static void overlays_free(struct overlay *o, unsigned n)
{
  unsigned i;
  for (i = 0; i < n; i++) free(o[i].buf);
}

/* The seqlocked regions of an ocgc file, read consistently, into o[]:
 * how many, or an error. */
static int overlays_read(const struct ocgc_source *s, struct overlay *o)
{
  unsigned n = 0;
  uint64_t len;
  int err = 0;
  if (!s->l.has_ext) return 0;
  /* the totals: their fixed part and by_cause (layout.c checked it fits) */
  len = offsetof(struct ocgc_wire_totals, by_cause) + s->l.kind_count * s->l.cause_slots * 8;
  o[n] = (struct overlay){s->l.totals_offset, len, 0, malloc(len)};
  if (o[n].buf == NULL) return -ENOMEM;
  err = settled(s, o[n].off, len, o[n].off + offsetof(struct ocgc_wire_totals, seq), o[n].buf);
  n++;
  /* the allocation profile's header and the rows in use as it says now
   * (a row taken during the copy comes with the bulk copy) */
  if (err == 0 && s->l.mp_offset != 0) {
    struct ocgc_wire_mp mp;
    uint64_t room = s->l.ext_end - s->l.mp_offset - sizeof mp, rows;
    if ((err = ocgc_source_pread(s, s->l.mp_offset, &mp, sizeof mp)) != 0) goto out;
    if (mp.magic != OCGC_MP_MAGIC) goto out; /* none yet: nothing to settle */
    rows = mp.stacks < mp.rows ? mp.stacks + 1 : mp.rows;
    if (mp.row_size == 0 || mp.row_size % 8 || rows > room / mp.row_size) rows = 0;
    len = sizeof mp + rows * mp.row_size;
    o[n] = (struct overlay){s->l.mp_offset, len, 0, malloc(len)};
    if (o[n].buf == NULL) { err = -ENOMEM; goto out; }
    n++;
    err = settled(s, s->l.mp_offset, len, s->l.mp_offset + offsetof(struct ocgc_wire_mp, seq),
                  o[n - 1].buf);
  }
out:
  if (err != 0) {
    overlays_free(o, n);
    return err;
  }
  return (int)n;
}

/* Lay the parts of o[0..n) that fall in [off, off + len) over buf. */
static void overlay_apply(const struct overlay *o, unsigned n, uint64_t off, unsigned char *buf,
                          uint64_t len)
{
  unsigned i;
  for (i = 0; i < n; i++) {
    uint64_t from = o[i].off > off ? o[i].off : off;
    uint64_t to = o[i].off + o[i].len < off + len ? o[i].off + o[i].len : off + len;
    if (from < to) memcpy(buf + (from - off), o[i].buf + (from - o[i].off), to - from);
  }
}

static int write_all(int fd, const void *buf, size_t n)
{
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (w == 0) return -EIO;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int all_zero(const unsigned char *b, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    if (b[i] != 0) return 0;
  return 1;
}

/* The ring file's bytes [0, end) to fd, the regions o[0..n) laid over. */
static int copy_ring(int fd, const struct ocgc_source *s, uint64_t end, const struct overlay *o,
                     unsigned n)
{
  unsigned char *buf = malloc(COPY_CHUNK);
  int seekable = lseek(fd, 0, SEEK_CUR) >= 0, err = 0;
  uint64_t off;
  if (buf == NULL) return -ENOMEM;
  for (off = 0; off < end && err == 0; off += COPY_CHUNK) {
    uint64_t len = end - off < COPY_CHUNK ? end - off : COPY_CHUNK;
    if ((err = ocgc_source_pread(s, off, buf, len)) != 0) break;
    overlay_apply(o, n, off, buf, len);
    if (seekable && all_zero(buf, (size_t)len) && lseek(fd, (off_t)len, SEEK_CUR) >= 0) continue;
    err = write_all(fd, buf, (size_t)len);
  }
  free(buf);
  return err;
}

static void put_str(char *dst, size_t dn, const char *src, size_t sn)
{
  size_t len = strnlen(src, (sn < dn ? sn : dn) - 1);
  memset(dst, 0, dn);
  memcpy(dst, src, len);
}

#define PUT_STR(dst, src) put_str((dst), sizeof(dst), (src), sizeof(src))

static void wire_second(struct ocgc_wire_flight_second *w, const struct ocgc_flight_second *s)
{
  unsigned c;
  memset(w, 0, sizeof *w);
  w->t = s->t;
  w->pauses = s->pauses;
  w->pause_ns = s->pause_ns;
  w->max_ns = s->max_ns;
  memcpy(w->coll, s->coll, sizeof w->coll);
  w->alloc = s->alloc;
  w->promo = s->promo;
  w->heap = s->heap;
  w->top_heap = s->top_heap;
  w->lost = s->lost;
  w->rss = s->rss;
  w->cg_usage = s->cg_usage;
  for (c = 0; c < OCGC_CAUSE_COUNT; c++) w->cause[c] = s->cause[c];
}

/* The block: header and seconds, to fd. */
static int write_block(int fd, const struct ocgc_flight_meta *m, const struct ocgc_flight_hist *h)
{
  struct ocgc_wire_flight w;
  struct ocgc_flight_second *sec = NULL;
  struct ocgc_wire_flight_second *ws = NULL;
  unsigned n = 0, i;
  int err;
  if (h != NULL) {
    sec = calloc(OCGC_FLIGHT_MAX_WINDOW_S, sizeof *sec);
    ws = calloc(OCGC_FLIGHT_MAX_WINDOW_S, sizeof *ws);
    if (sec == NULL || ws == NULL) { err = -ENOMEM; goto out; }
    n = ocgc_flight_hist_seconds(h, sec, OCGC_FLIGHT_MAX_WINDOW_S);
    for (i = 0; i < n; i++) wire_second(&ws[i], &sec[i]);
  }
  memset(&w, 0, sizeof w);
  w.magic = OCGC_FLIGHT_MAGIC;
  w.version = OCGC_FLIGHT_BLOCK_VERSION;
  w.header_size = sizeof w;
  w.second_size = sizeof(struct ocgc_wire_flight_second);
  w.nseconds = n;
  w.size = w.header_size + n * w.second_size;
  w.reason = m->reason > 0 ? (uint64_t)m->reason : 0;
  w.recorded_ns = m->recorded_ns;
  w.window_s = m->window_s;
  w.pid = m->pid > 0 ? (uint64_t)m->pid : 0;
  w.start_ticks = m->start_ticks;
  w.rss_bytes = m->rss_bytes;
  w.exit_known = m->exit.known != 0;
  w.exit_how = m->exit.how > 0 ? (uint64_t)m->exit.how : 0;
  w.exit_code = m->exit.code;
  w.exit_signal = m->exit.signal > 0 ? (uint64_t)m->exit.signal : 0;
  w.exit_core_dumped = m->exit.core_dumped != 0;
  w.exit_oom_killed = m->exit.oom_killed != 0;
  w.exit_mark = m->exit.exit_mark != 0;
  w.exit_gone_ns = m->exit.gone_ns;
  w.memcg_known = m->memcg.known != 0;
  w.memcg_v2 = m->memcg.v2 != 0;
  w.memcg_usage = m->memcg.usage;
  w.memcg_limit = m->memcg.limit;
  w.memcg_peak = m->memcg.peak;
  w.memcg_oom_kills = m->memcg.oom_kills;
  PUT_STR(w.detail, m->detail);
  PUT_STR(w.program, m->program);
  PUT_STR(w.exe, m->exe);
  PUT_STR(w.build_id, m->build_id);
  PUT_STR(w.memcg_path, m->memcg.path);
  if ((err = write_all(fd, &w, sizeof w)) == 0 && n > 0)
    err = write_all(fd, ws, n * sizeof *ws);
out:
  free(sec);
  free(ws);
  return err;
}

/* The file offset of ring [d]'s header. */
static uint64_t rh_off(const struct ocgc_source *s, uint64_t d)
{
  return s->l.headers_offset + d * s->l.rh_size;
}

/* Each ring's tail before the copy into tail[] (the window's end). */
static int tails_read(const struct ocgc_source *s, uint64_t *tail)
{
  uint64_t d;
  int err;
  for (d = 0; d < s->l.max_domains; d++)
    if ((err = ocgc_source_pread(s, rh_off(s, d) + offsetof(struct ocgc_wire_ring_header, tail),
                                 &tail[d], 8)) != 0)
      return err;
  return 0;
}

/* After the copy written at [base] of fd: each ring's header set to the
 * window the copy holds whole, [head after, tail before], and its loss
 * record (read now, consistently) written with it. */
static int windows_fix(int fd, off_t base, const struct ocgc_source *s, const uint64_t *tail)
{
  uint64_t d, hd[2];
  int err;
  for (d = 0; d < s->l.max_domains; d++) {
    struct ocgc_wire_ext_ring er;
    if (s->l.has_ext) {
      uint64_t at = src_ext_ring(s, d);
      if ((err = settled(s, at, sizeof er, at + offsetof(struct ocgc_wire_ext_ring, seq),
                         (unsigned char *)&er)) != 0)
        return err;
      if (pwrite(fd, &er, sizeof er, base + (off_t)at) != (ssize_t)sizeof er) return -errno;
      hd[0] = er.head_pos;
    } else if ((err = ocgc_source_pread(s, rh_off(s, d), &hd[0], 8)) != 0) {
      return err;
    }
    /* the head only grows; a writer that lapped the copy leaves it empty */
    hd[1] = tail[d] > hd[0] ? tail[d] : hd[0];
    if (pwrite(fd, hd, sizeof hd, base + (off_t)rh_off(s, d)) != (ssize_t)sizeof hd)
      return -errno;
  }
  return 0;
}

int ocgc_flight_write(int fd, const struct ocgc_source *src, const struct ocgc_flight_hist *h,
                      const struct ocgc_flight_meta *m)
{
  struct ocgc_flight_meta meta;
  struct overlay o[MAX_OVERLAYS];
  uint64_t end, *tail;
  off_t base;
  int n, err;
  if (fd < 0 || src == NULL || opts_read(&meta, sizeof meta, m) != 0) return -EINVAL;
  /* layout.c checked that the name table lies inside the file */
  end = src->l.names_offset + NAMES_BYTES;
  if (end > OCGC_FLIGHT_MAX_BYTES) return -EFBIG;
  if ((base = lseek(fd, 0, SEEK_CUR)) < 0) return -errno; /* a file: the windows are set after */
  if ((err = ocgc_source_check_size(src)) != 0) return err;
  if ((tail = calloc(src->l.max_domains, sizeof *tail)) == NULL) return -ENOMEM;
  if ((err = tails_read(src, tail)) != 0 || (n = overlays_read(src, o)) < 0) {
    free(tail);
    return err != 0 ? err : n;
  }
  err = copy_ring(fd, src, end, o, (unsigned)n);
  overlays_free(o, (unsigned)n);
  if (err == 0) err = windows_fix(fd, base, src, tail);
  free(tail);
  if (err == 0) err = write_block(fd, &meta, h);
  return err;
}
