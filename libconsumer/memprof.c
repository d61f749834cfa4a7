/* memprof.c - a process's allocation profile, read from its ring: one
 * consistent copy of the table (ocgc_memprof_read), and the control word
 * that asks the producer for another rate (ocgc_memprof_request).
 *
 * ocgc_memprof_delta() makes a window of two copies, row by row: rows
 * are taken in order and change their stack only when the producer
 * recycles them, with a new generation, so row i of the older copy is row
 * i of the newer in one generation (which the delta checks rather than
 * trusts) and a new stack counted from 0 in another.
 *
 * Invariants: the table's geometry is read once and checked against the
 * extension block (layout.c put the header inside it) and against fixed
 * bounds before anything is allocated or copied; the rows in use are
 * copied under the table's seqlock by the one seqlock reader
 * (src_seqlock_read), their count clamped to the geometry; every frame
 * count is clamped to what both the row and the caller's struct hold.  The
 * control word is written through a descriptor reopened from our own
 * (/proc/self/fd), proved to be the file opened, never through a path the
 * target names. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memprof_lease.h"
#include "ocgc/memprof.h"
#include "opts.h"
#include "attach.h"
#include "source.h"

#define MAX_ROWS 16384u /* twice a producer's: a copy's stacks stay under 20 MiB */
#define MAX_ROW_SIZE 4096u
#define MAX_COPY (UINT64_C(16) << 20)

struct geometry {
  uint64_t off;      /* the header's file offset */
  uint64_t rows, row_size, depth;
  int live_known;    /* rows carry live and generation */
};

/* The table's constants, checked: 0, -ENODATA or OCGC_E_CORRUPT. */
static int read_geometry(const struct ocgc_source *s, struct geometry *g)
{
  struct ocgc_wire_mp h;
  uint64_t bytes;
  int err;
  if (!s->l.has_ext || s->l.mp_offset == 0) return -ENODATA;
  g->off = s->l.mp_offset;
  if ((err = src_word_acquire(s, g->off + offsetof(struct ocgc_wire_mp, magic), &h.magic)) != 0)
    return err;
  /* a producer fills the table and then stores the magic (release) */
  if (h.magic != OCGC_MP_MAGIC) return -ENODATA;
  if ((err = src_copy(s, g->off, &h, sizeof h)) != 0) return err;
  g->rows = h.rows;
  g->row_size = h.row_size;
  g->depth = h.depth;
  /* (a constant, written before the magic) */
  g->live_known = (h.features & OCGC_MP_FEATURE_LIVE) != 0;
  if (g->rows == 0 || g->rows > MAX_ROWS || g->row_size % 8 || g->row_size > MAX_ROW_SIZE ||
      g->depth > (MAX_ROW_SIZE - offsetof(struct ocgc_wire_mp_row, frames)) / 8 ||
      g->row_size < offsetof(struct ocgc_wire_mp_row, frames) + g->depth * 8)
    return OCGC_E_CORRUPT;
  bytes = g->rows * g->row_size; /* bounded above: no overflow */
  if (bytes > MAX_COPY || g->off + sizeof h > s->l.ext_end ||
      bytes > s->l.ext_end - g->off - sizeof h)
    return OCGC_E_CORRUPT;
  return 0;
}

struct copy_ctx {
  const struct geometry *g;
  struct ocgc_wire_mp head;
  unsigned char *rows;
  uint64_t used; /* rows copied: the overflow row and the stacks */
};

static int copy_table(const struct ocgc_source *s, void *v)
{
  struct copy_ctx *c = v;
  int err;
  if ((err = src_copy(s, c->g->off, &c->head, sizeof c->head)) != 0) return err;
  c->used = (c->head.stacks < c->g->rows - 1 ? c->head.stacks : c->g->rows - 1) + 1;
  return src_copy(s, c->g->off + sizeof c->head, c->rows, c->used * c->g->row_size);
}

/* The file's size checked and the table's geometry read, for a copy into
 * [c]: 0, or the error of either. */
static int begin_copy(const struct ocgc_source *src, struct geometry *g, struct copy_ctx *c)
{
  int err;
  if ((err = ocgc_source_check_size(src)) != 0) return err;
  if ((err = read_geometry(src, g)) != 0) return err;
  memset(c, 0, sizeof *c);
  c->g = g;
  return 0;
}

/* [fn] under the table's seqlock; a producer that died mid-update left
 * the seq odd, and what it left is final. */
static int under_seqlock(const struct ocgc_source *src, const struct geometry *g,
                         int (*fn)(const struct ocgc_source *, void *), struct copy_ctx *c)
{
  uint64_t seq = g->off + offsetof(struct ocgc_wire_mp, seq);
  int err = src_seqlock_read(src, seq, fn, c);
  if (err == -EAGAIN && ocgc_source_seq_stuck((struct ocgc_source *)src))
    err = src_seqlock_read(src, seq, fn, c);
  return err;
}

static void take_counts(struct ocgc_memprof_counts *out, const struct ocgc_wire_mp_counts *in)
{
  out->samples = in->samples;
  out->words = in->words;
  out->blocks_x1024 = in->blocks_x1024;
}

static void take_row(struct ocgc_memprof_stack *out, const unsigned char *row,
                     const struct geometry *g)
{
  struct ocgc_wire_mp_row r;
  uint64_t depth;
  memcpy(&r, row, offsetof(struct ocgc_wire_mp_row, frames));
  memset(out, 0, sizeof *out);
  out->kind = OCGC_MP_META_KIND(r.meta);
  out->alloc_index = OCGC_MP_META_INDEX(r.meta);
  out->cut = (r.meta & OCGC_MP_META_CUT) != 0;
  out->overflow = (r.meta & OCGC_MP_META_OVERFLOW) != 0;
  depth = OCGC_MP_META_DEPTH(r.meta);
  if (depth > g->depth) depth = g->depth;
  if (depth > OCGC_MEMPROF_MAX_DEPTH) {
    depth = OCGC_MEMPROF_MAX_DEPTH;
    out->cut = 1;
  }
  out->depth = (unsigned)depth;
  memcpy(out->frames, row + offsetof(struct ocgc_wire_mp_row, frames), depth * 8);
  take_counts(&out->alloc, &r.alloc);
  take_counts(&out->promoted, &r.promoted);
  take_counts(&out->freed, &r.freed);
  if (g->live_known) {
    out->live_known = 1;
    take_counts(&out->live, &r.live);
    out->generation = r.generation;
  }
}

int ocgc_memprof_read(const struct ocgc_source *src, struct ocgc_memprof **out)
{
  struct geometry g;
  struct copy_ctx c;
  struct ocgc_memprof *p;
  uint64_t i;
  int err;

  if (src == NULL || out == NULL) return -EINVAL;
  *out = NULL;
  if ((err = begin_copy(src, &g, &c)) != 0) return err;
  c.rows = malloc(g.rows * g.row_size);
  if (c.rows == NULL) return -ENOMEM;
  err = under_seqlock(src, &g, copy_table, &c);
  if (err != 0) {
    free(c.rows);
    return err;
  }
  p = calloc(1, sizeof *p);
  if (p != NULL) p->stack = calloc(c.used, sizeof *p->stack);
  if (p == NULL || p->stack == NULL) {
    free(p);
    free(c.rows);
    return -ENOMEM;
  }
  p->state = c.head.state <= OCGC_MP_UNAVAILABLE ? (enum ocgc_mp_state)c.head.state : OCGC_MP_OFF;
  p->rate_bytes = c.head.rate_bytes;
  p->rate_since_ns = c.head.rate_since_ns;
  p->rate_changes = c.head.rate_changes;
  p->samples = c.head.samples;
  p->words = c.head.words;
  p->overflow_samples = c.head.overflow_samples;
  p->cut_samples = c.head.cut_samples;
  p->unfollowed = c.head.unfollowed;
  p->followed = c.head.followed;
  p->table_rows = g.rows;
  p->control_seen = c.head.control_seen;
  p->control_result = c.head.control_result <= OCGC_MP_CONTROL_BYTECODE
                          ? (enum ocgc_mp_control_result)c.head.control_result
                          : OCGC_MP_CONTROL_NONE;
  p->control_refused = c.head.control_refused;
  memprof_take_leases(p, c.head.reserved);
  p->live_known = g.live_known;
  if (g.live_known) {
    p->live_cycle = c.head.live_cycle;
    p->live_cycle_ns = c.head.live_cycle_ns;
  }
  p->nstacks = (size_t)c.used;
  for (i = 0; i < c.used; i++) take_row(&p->stack[i], c.rows + i * g.row_size, &g);
  free(c.rows);
  *out = p;
  return 0;
}

static int copy_head(const struct ocgc_source *s, void *v)
{
  struct copy_ctx *c = v;
  return src_copy(s, c->g->off, &c->head, sizeof c->head);
}

int ocgc_memprof_summary(const struct ocgc_source *src, struct ocgc_memprof_summary *out)
{
  struct ocgc_memprof_summary m;
  struct geometry g;
  struct copy_ctx c;
  int err;
  if (src == NULL || out == NULL) return -EINVAL;
  if ((err = begin_copy(src, &g, &c)) != 0) return err;
  if ((err = under_seqlock(src, &g, copy_head, &c)) != 0) return err;
  memset(&m, 0, sizeof m);
  m.sz = sizeof m;
  m.state = c.head.state <= OCGC_MP_UNAVAILABLE ? (enum ocgc_mp_state)c.head.state : OCGC_MP_OFF;
  m.rate_bytes = c.head.rate_bytes;
  m.rate_changes = c.head.rate_changes;
  m.samples = c.head.samples;
  m.words = c.head.words;
  m.overflow_samples = c.head.overflow_samples;
  m.cut_samples = c.head.cut_samples;
  m.unfollowed = c.head.unfollowed;
  m.stacks = c.head.stacks < g.rows - 1 ? c.head.stacks : g.rows - 1;
  m.table_rows = g.rows;
  return opts_write(out, &m, sizeof m);
}

void ocgc_memprof_free(struct ocgc_memprof *p)
{
  if (p == NULL) return;
  free(p->stack);
  free(p);
}

int ocgc_memprof_request(const struct ocgc_source *src, uint64_t rate_bytes, uint64_t *word)
{
  struct geometry g;
  struct stat st;
  char self[64];
  uint64_t old, req, w;
  uint64_t off;
  int fd, err;
  ssize_t n;

  if (src == NULL) return -EINVAL;
  if (rate_bytes != 0 && (rate_bytes < OCGC_MP_RATE_MIN || rate_bytes > OCGC_MP_RATE_MAX))
    return -ERANGE;
  if ((err = ocgc_source_check_size(src)) != 0) return err;
  if ((err = read_geometry(src, &g)) != 0) return err;
  off = g.off + offsetof(struct ocgc_wire_mp, control);
  /* The file we hold, opened again for writing: the kernel checks that we
   * may (the file's owner or root), and no name is resolved. */
  snprintf(self, sizeof self, "/proc/self/fd/%d", src->fd);
  fd = open(self, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return -errno;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != src->dev ||
      (uint64_t)st.st_ino != src->ino) {
    close(fd);
    return OCGC_E_STALE;
  }
  if ((err = src_copy(src, off, &old, 8)) != 0) {
    close(fd);
    return err;
  }
  req = ((old >> OCGC_MP_CONTROL_REQ_SHIFT) + 1) & ((UINT64_C(1) << (64 - OCGC_MP_CONTROL_REQ_SHIFT)) - 1);
  if (req == 0) req = 1;
  w = req << OCGC_MP_CONTROL_REQ_SHIFT | rate_bytes;
  /* One aligned 8-byte write: the producer's acquire load sees the old
   * word or this one. */
  n = pwrite(fd, &w, 8, (off_t)off);
  err = n == 8 ? 0 : n < 0 ? -errno : -EIO;
  close(fd);
  if (err == 0 && word != NULL) *word = w;
  return err;
}

static int same_stack(const struct ocgc_memprof_stack *a, const struct ocgc_memprof_stack *b)
{
  return a->kind == b->kind && a->depth == b->depth && a->alloc_index == b->alloc_index &&
         a->cut == b->cut && a->overflow == b->overflow &&
         memcmp(a->frames, b->frames, a->depth * sizeof a->frames[0]) == 0;
}

/* *d = n - o, each field; 0, or OCGC_E_STALE if a count went back. */
static int sub_counts(struct ocgc_memprof_counts *d, const struct ocgc_memprof_counts *n,
                      const struct ocgc_memprof_counts *o)
{
  if (n->samples < o->samples || n->words < o->words || n->blocks_x1024 < o->blocks_x1024)
    return OCGC_E_STALE;
  d->samples = n->samples - o->samples;
  d->words = n->words - o->words;
  d->blocks_x1024 = n->blocks_x1024 - o->blocks_x1024;
  return 0;
}

static int counted(const struct ocgc_memprof_stack *s)
{
  return s->alloc.samples || s->promoted.samples || s->freed.samples ||
         s->live.samples != s->live_before.samples;
}

/* *v = n - o for a header figure; 0, or OCGC_E_STALE. */
static int sub_figure(uint64_t *v, uint64_t n, uint64_t o)
{
  if (n < o) return OCGC_E_STALE;
  *v = n - o;
  return 0;
}

int ocgc_memprof_delta(const struct ocgc_memprof *older, const struct ocgc_memprof *newer,
                       struct ocgc_memprof **out)
{
  static const struct ocgc_memprof none;
  struct ocgc_memprof *p;
  struct ocgc_memprof_stack *stack;
  size_t i, k = 0;
  int err = 0;

  if (newer == NULL || out == NULL || newer->nstacks == 0) return -EINVAL;
  *out = NULL;
  if (older == NULL) older = &none;
  if (older->nstacks > newer->nstacks) return OCGC_E_STALE;
  p = malloc(sizeof *p);
  stack = calloc(newer->nstacks, sizeof *stack);
  if (p == NULL || stack == NULL) {
    free(p);
    free(stack);
    return -ENOMEM;
  }
  *p = *newer; /* the header as newer says it, then the differences */
  p->stack = stack;
  err = sub_figure(&p->samples, newer->samples, older->samples);
  if (!err) err = sub_figure(&p->words, newer->words, older->words);
  if (!err) err = sub_figure(&p->overflow_samples, newer->overflow_samples, older->overflow_samples);
  if (!err) err = sub_figure(&p->cut_samples, newer->cut_samples, older->cut_samples);
  if (!err) err = sub_figure(&p->unfollowed, newer->unfollowed, older->unfollowed);
  if (!err) err = sub_figure(&p->rate_changes, newer->rate_changes, older->rate_changes);
  for (i = 0; !err && i < newer->nstacks; i++) {
    const struct ocgc_memprof_stack *n = &newer->stack[i];
    struct ocgc_memprof_stack d = *n;
    memset(&d.live_before, 0, sizeof d.live_before);
    if (i < older->nstacks) {
      const struct ocgc_memprof_stack *o = &older->stack[i];
      if (o->live_known != n->live_known || n->generation < o->generation) {
        err = OCGC_E_STALE;
        break;
      }
      if (n->generation != o->generation) {
        /* recycled between the copies: a new stack, all of it the window's */
      } else if (!same_stack(o, n)) {
        err = OCGC_E_STALE;
        break;
      } else {
        err = sub_counts(&d.alloc, &n->alloc, &o->alloc);
        if (!err) err = sub_counts(&d.promoted, &n->promoted, &o->promoted);
        if (!err) err = sub_counts(&d.freed, &n->freed, &o->freed);
        d.live_before = o->live;
      }
    }
    if (!err && (i == 0 || counted(&d))) p->stack[k++] = d;
  }
  p->nstacks = k;
  if (err) {
    ocgc_memprof_free(p);
    return err;
  }
  *out = p;
  return 0;
}

const char *ocgc_memprof_state_name(enum ocgc_mp_state state)
{
  switch (state) {
  case OCGC_MP_ON: return "on";
  case OCGC_MP_ASIDE: return "aside";
  case OCGC_MP_UNAVAILABLE: return "unavailable";
  default: return "off";
  }
}

const char *ocgc_memprof_kind_name(unsigned kind)
{
  static const char *const names[] = {"minor", "major", "custom", "marshal"};
  return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

int ocgc_memprof_answer(const struct ocgc_memprof *p, uint64_t word)
{
  if (p == NULL) return -EINVAL;
  if (p->control_seen != word) {
    /* Request numbers only grow (mod 2^24): a later one read means ours
     * was overwritten before the producer saw it. */
    uint64_t seen = p->control_seen >> OCGC_MP_CONTROL_REQ_SHIFT;
    uint64_t ours = word >> OCGC_MP_CONTROL_REQ_SHIFT;
    uint64_t mask = (UINT64_C(1) << (64 - OCGC_MP_CONTROL_REQ_SHIFT)) - 1;
    uint64_t ahead = (seen - ours) & mask;
    return seen != 0 && ahead != 0 && ahead < mask / 2 ? OCGC_E_STALE : 0;
  }
  switch (p->control_result) {
  case OCGC_MP_CONTROL_APPLIED: return 1;
  case OCGC_MP_CONTROL_REFUSED: return -ERANGE;
  case OCGC_MP_CONTROL_BYTECODE: return -ENOTSUP;
  default: return 0;
  }
}
