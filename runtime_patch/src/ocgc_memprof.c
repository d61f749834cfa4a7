/* ocgc_memprof.c - ocgc's own allocation sampling: which call stacks
 * allocate, promote and free, kept in the ring's allocation profile
 * (struct ocgc_wire_mp), beside the runtime's statmemprof (memprof.c),
 * whose trigger and tracking points it shares (patch 0002).
 *
 * Invariants:
 * - It samples only while its rate is not 0, the program is native code,
 *   and the program's own Gc.Memprof is not started (memprof.c calls in
 *   only then: its [started] is 0 and its lambda is 0), so a program that
 *   runs Gc.Memprof sees exactly a stock runtime's behaviour: the same
 *   callbacks, from the same untouched random generator.
 * - A sample runs no OCaml code and allocates nothing: the stack is walked
 *   into a fixed buffer, the row found in a private index, the figures
 *   kept in private memory and copied into the shared table under its
 *   seqlock.  Nothing is read back from the mapping but the control word
 *   and the lease slots (ocgc_mp_lease.c), bounded before use: what others
 *   write there (or anywhere in the table) cannot steer the writer.
 * - Each word allocated is sampled with probability 1/W (W = rate / 8):
 *   the distances between sampled words are geometric draws, from a
 *   generator of ocgc's own, as statmemprof's are from its own.  A block of
 *   h words drawn n times counts n samples, n * W words and n * W / h
 *   blocks, at the rate in force when it was drawn; its promotion, its
 *   death and its time in use count the same, so in-use figures stay right
 *   when the rate changes.
 * - At most FOLLOW_MAX sampled blocks are followed at once (a weak
 *   reference each, as statmemprof's), in a reservation whose pages are
 *   committed as entries are used: blocks still young are those from
 *   [young_from] on; a minor collection finds each promoted or dead, the
 *   end of marking finds the major ones dead (still white), compaction
 *   moves them (caml_invert_root).  A sample past the limit is counted, not
 *   followed (mp.unfollowed), and never in use.
 * - In use is as of the last completed marking (Go's "as of the last GC"):
 *   each entry keeps the count of markings begun when it was sampled
 *   (mp.cycles, caml_ocgc_mp_cycle_start); the end of a marking adds to
 *   its row's `live` each entry sampled before that marking began and not
 *   found dead (F_LIVE), and takes back out each F_LIVE entry it finds
 *   dead.  An entry sampled during the marking was not traced by it (a
 *   block allocated or promoted then is black): it waits for the next.  A
 *   minor sample that dies young is never in use.  So `live` never holds
 *   garbage the collector has not reached, and never more than was
 *   allocated.
 * - Stacks are folded before they become keys: a return address seen
 *   again further in drops the frames since its first occurrence, so
 *   recursion (direct or mutual) of any depth makes one row.
 * - Rows are taken in order (shared rows 1 .. stacks are in use); a full
 *   table recycles a row none of whose blocks is followed, whose live is
 *   0, unchanged for OCGC_MP_RECYCLE_NS (its generation word grows), and
 *   failing that counts the stack in row 0, the overflow row.
 * - A forked child starts with an empty table, nothing followed and a new
 *   generator state; its parent's table is untouched.  Its private tables
 *   are given back (madvise MADV_DONTNEED: zero pages again, nothing
 *   copied nor written), never cleared by writing.  A sample never
 *   makes the child's file: before the child's first GC event (which
 *   makes it) samples go into the private table only, published whole when
 *   the file is made, so that a child that allocates a little and execs
 *   (the exec'd image never removes what the child made) leaves no entry
 *   in the folder, at any rate.
 * - Everything runs with the runtime lock held, inside the writers' guard
 *   (ocgc_writer.h's caml_ocgc_writer_enter) whenever the mapping is
 *   written: no lock of its own, so none crosses a release of the runtime
 *   lock. */

#define CAML_INTERNALS
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "caml/address_class.h"
#include "caml/compact.h"
#include "caml/domain_state.h"
#include "caml/major_gc.h"
#include "caml/memprof.h"
#include "caml/minor_gc.h"
#include "caml/mlvalues.h"
#include "caml/ocgc.h"
#include "caml/stack.h"
#include "ocgc_clock.h"
#include "ocgc_memprof.h"
#include "ocgc_mp_lease.h"
#include "ocgc_place.h"
#include "ocgc_writer.h"

#define FOLLOW_MAX 1048576u          /* sampled blocks followed at once */
#define INDEX_SLOTS (2u * OCGC_MP_ROWS) /* private hash index: half full at most */
#define RAW_MAX 1024u                /* frames walked before folding */
#define SEEN_SLOTS (2u * RAW_MAX)    /* the fold's index of addresses */
/* How many rows a full table looks at for one to recycle, per new stack. */
#define RECYCLE_LOOK 64u

int caml_ocgc_mp_on = 0;

#ifdef NATIVE_CODE
#define NATIVE 1 /* stacks can be walked */
#else
#define NATIVE 0 /* bytecode: never sampled */
#endif

#define F_YOUNG 1u /* still in the minor heap */
#define F_LIVE 2u  /* counted in its row's live */

struct followed {
  value block;      /* weak: the sampled block, while it lives */
  uint64_t words;   /* n * W */
  uint64_t blocks;  /* n * W * 1024 / h */
  uint32_t samples; /* n */
  uint32_t cycle;   /* mp.cycles when sampled (only compared for equality) */
  uint16_t row;
  uint16_t flags;   /* F_* */
};

struct key {
  uint64_t hash;    /* 0: free private row */
  uint64_t meta;
  uint32_t nfollow; /* followed entries of the row */
  uint32_t unused;
  uint64_t frames[OCGC_MP_DEPTH];
};

/* A row's published words, from alloc to changed_ns (struct
 * ocgc_wire_mp_row's order). */
struct fig {
  struct ocgc_wire_mp_counts alloc, promoted, freed, live;
  uint64_t generation, changed_ns;
};
#define FIG_WORDS (sizeof(struct fig) / 8)
_Static_assert(offsetof(struct ocgc_wire_mp_row, alloc) + sizeof(struct fig) ==
                   offsetof(struct ocgc_wire_mp_row, frames),
               "a row's figures are its words from alloc to the frames");

/* The stack walk's scratch (capture). */
struct walk {
  uint64_t raw[RAW_MAX];  /* innermost first, as walked */
  uint64_t out[RAW_MAX];  /* folded, outermost first */
  struct {
    uint64_t addr;
    uint32_t pos, stamp;
  } seen[SEEN_SLOTS];     /* address -> its place in out, valid when stamp is */
  uint32_t stamp;
};

static struct {
  uint64_t rate_bytes;    /* in force; 0: off */
  uint64_t w;             /* words per sample: rate_bytes / 8 */
  double log1m_p;         /* log(1 - 1/w) */
  uint64_t to_next;       /* words to the next sampled word outside the minor heap */
  uint64_t rng[4];        /* xoshiro256** */
  int program;            /* the program's own Gc.Memprof is started */
  int inherited;          /* a forked child's tables still hold its parent's */
  int early;              /* the tables hold samples made before the file */
  int said_refused;       /* the one stderr line for a refused control word */
  struct ocgc_wire_mp *shared;  /* the file's table, or NULL */
  struct ocgc_wire_mp head;     /* our copy of the header's figures */
  struct fig *rows;             /* our copy of the rows' figures (OCGC_MP_ROWS) */
  struct key *keys;             /* our copy of the rows' keys */
  uint16_t *index;              /* INDEX_SLOTS: row, 0 free */
  struct followed *follow;      /* FOLLOW_MAX */
  struct walk *walk;
  uint32_t nfollow, young_from;
  uint32_t cycles;              /* markings begun (wraps: compared for equality) */
  unsigned recycle_at;          /* the next row a full table looks at */
  unsigned rows_max;            /* rows the file lets us write (caml_ocgc_file.mp_rows) */
  uint64_t recycle_ns;          /* a row this quiet may be recycled */
  uint64_t seq;
} mp;

/* ---- random draws --------------------------------------------------------------- */

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(void)
{
  uint64_t *s = mp.rng, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return r;
}

static void rng_seed(void)
{
  struct timespec ts;
  uint64_t x;
  int i;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  x = (uint64_t)getpid() * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)ts.tv_nsec ^
      ((uint64_t)ts.tv_sec << 32);
  for (i = 0; i < 4; i++) { /* splitmix64 */
    uint64_t z = (x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    mp.rng[i] = z ^ (z >> 31);
  }
}

/* Words from here to the next sampled word, this one included: a
 * geometric draw of parameter 1/W, at least 1. */
static uint64_t geom(void)
{
  double u = ((double)(rng_next() >> 11) + 1.0) * 0x1.0p-53; /* in (0, 1] */
  double g;
  if (mp.w <= 1) return 1;
  g = floor(log(u) / mp.log1m_p) + 1.0;
  return g >= 0x1.0p62 ? UINT64_C(1) << 62 : (uint64_t)g;
}

/* Samples among the next [words] words of the stream outside the minor heap. */
static uint32_t binom(uint64_t words)
{
  uint32_t n = 0;
  while (mp.to_next <= words) {
    words -= mp.to_next;
    mp.to_next = geom();
    n++;
  }
  mp.to_next -= words;
  return n;
}

/* ---- publication ------------------------------------------------------------- */

static void store_words(uint64_t *dst, const uint64_t *src, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++) __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

/* The seqlock around every change of the shared table (readers: libocgc's
 * memprof.c): odd, then the words, then even with release (pairs with the
 * reader's acquire fence before its second load of seq). */
static void pub_begin(void)
{
  __atomic_store_n(&mp.shared->seq, ++mp.seq, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void pub_end(void)
{
  __atomic_store_n(&mp.shared->seq, ++mp.seq, __ATOMIC_RELEASE);
}

#define HEAD_FIGURES_WORDS                                                      \
  ((offsetof(struct ocgc_wire_mp, control) - offsetof(struct ocgc_wire_mp, state)) / 8)

static void pub_head(void)
{
  store_words(&mp.shared->state, &mp.head.state, HEAD_FIGURES_WORDS);
  __atomic_store_n(&mp.shared->live_cycle, mp.head.live_cycle, __ATOMIC_RELAXED);
  __atomic_store_n(&mp.shared->live_cycle_ns, mp.head.live_cycle_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&mp.shared->features, mp.head.features, __ATOMIC_RELAXED);
  __atomic_store_n(&mp.shared->control_seen, caml_ocgc_mp_control.seen, __ATOMIC_RELAXED);
  __atomic_store_n(&mp.shared->control_result, mp.head.control_result, __ATOMIC_RELAXED);
  __atomic_store_n(&mp.shared->control_refused, mp.head.control_refused, __ATOMIC_RELAXED);
  caml_ocgc_lease_publish(mp.shared->reserved);
}

static void pub_row_counts(unsigned r)
{
  store_words((uint64_t *)&((struct ocgc_wire_mp_row *)(mp.shared + 1))[r].alloc,
              (const uint64_t *)&mp.rows[r], FIG_WORDS);
}

static void pub_row_key(unsigned r)
{
  struct ocgc_wire_mp_row *s = &((struct ocgc_wire_mp_row *)(mp.shared + 1))[r];
  store_words(s->frames, mp.keys[r].frames, OCGC_MP_DEPTH);
  __atomic_store_n(&s->meta, mp.keys[r].meta, __ATOMIC_RELAXED);
}

/* ---- the table --------------------------------------------------------------- */

/* The private tables, made when sampling first starts: one anonymous
 * mapping placed out of the program's way (ocgc_place.c), not malloc's,
 * whose large blocks are mappings too and would move the program's later
 * ones (and whose free would raise its mmap threshold).  A reservation
 * (MAP_NORESERVE, about 50 MiB of address space, mostly the followed
 * entries): a page is committed when first written, so what a program pays
 * grows with the stacks it samples and the samples it follows.  Never
 * unmapped: a forked child gives its copy's pages back. */
#define TABLES_BYTES                                                               \
  ((size_t)OCGC_MP_ROWS * sizeof(struct fig) + (size_t)OCGC_MP_ROWS * sizeof(struct key) + \
   (size_t)FOLLOW_MAX * sizeof(struct followed) + sizeof(struct walk) +                  \
   (size_t)INDEX_SLOTS * sizeof(uint16_t))

static int tables_ready(void)
{
  char *t;
  if (mp.rows != NULL) return 1;
  t = caml_ocgc_place_map(TABLES_BYTES, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (t == MAP_FAILED) return 0;
  /* Largest alignment first: everything but the index is of 64-bit words. */
  mp.rows = (struct fig *)t;
  mp.keys = (struct key *)(t + (size_t)OCGC_MP_ROWS * sizeof *mp.rows);
  mp.follow = (struct followed *)((char *)mp.keys + (size_t)OCGC_MP_ROWS * sizeof *mp.keys);
  mp.walk = (struct walk *)((char *)mp.follow + (size_t)FOLLOW_MAX * sizeof *mp.follow);
  mp.index = (uint16_t *)((char *)mp.walk + sizeof *mp.walk);
  return 1;
}

/* A new, empty table (a new file, or a forked child's).  The private
 * mapping's pages are given back rather than written with zeros: the
 * kernel maps the zero page again, so a cleared table costs no page (a
 * forked child's memset of its parent's tables copied every page they
 * had). */
static void tables_clear(void)
{
  uint64_t rate = mp.rate_bytes, cycle = mp.head.live_cycle, cycle_ns = mp.head.live_cycle_ns;
  if (mp.rows != NULL) (void)madvise(mp.rows, TABLES_BYTES, MADV_DONTNEED);
  mp.nfollow = mp.young_from = 0;
  mp.recycle_at = 1;
  memset(&mp.head, 0, sizeof mp.head);
  mp.head.rate_bytes = rate;
  mp.head.live_cycle = cycle;
  mp.head.live_cycle_ns = cycle_ns;
  mp.head.features = OCGC_MP_FEATURE_LIVE;
  if (mp.keys != NULL) mp.keys[0].meta = OCGC_MP_META_OVERFLOW;
}

/* A forked child's tables are cleared at its first sample or its file,
 * not at the fork: a child that execs touches none of their pages. */
static void tables_own(void)
{
  if (!mp.inherited) return;
  mp.inherited = 0;
  tables_clear();
}

static uint64_t key_hash(const uint64_t *frames, unsigned depth, uint64_t meta)
{
  uint64_t h = meta * UINT64_C(0x9E3779B97F4A7C15) + 1;
  unsigned i;
  for (i = 0; i < depth; i++) {
    h ^= frames[i];
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 32;
  }
  return h | 1; /* never 0: 0 marks a free row */
}

/* Take row [r] out of the index (linear probing: the entries after it
 * in its run that may not stay are moved back, so every lookup still
 * finds its row before an empty slot). */
static void unindex(unsigned r)
{
  const unsigned mask = INDEX_SLOTS - 1;
  unsigned i = (unsigned)mp.keys[r].hash & mask, j, k, probes;
  for (probes = 0; mp.index[i] != r; probes++, i = (i + 1) & mask)
    if (mp.index[i] == 0 || probes == INDEX_SLOTS) return; /* not there: nothing to do */
  for (;;) {
    mp.index[i] = 0;
    for (j = i;;) {
      j = (j + 1) & mask;
      if (mp.index[j] == 0) return;
      k = (unsigned)mp.keys[mp.index[j]].hash & mask; /* its first choice */
      /* it stays if k lies cyclically in (i, j] */
      if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
      mp.index[i] = mp.index[j];
      i = j;
      break;
    }
  }
}

/* A full table's row for a new stack: one, among the next RECYCLE_LOOK,
 * that holds nothing any more (no entry followed, nothing live) and has
 * not changed for OCGC_MP_RECYCLE_NS (readers took its last figures), or
 * 0.  Bounded: a table of busy rows costs a new stack 64 looks. */
static unsigned recycle(uint64_t now)
{
  unsigned k, r;
  if (mp.head.stacks == 0) return 0;
  for (k = 0; k < RECYCLE_LOOK; k++) {
    r = mp.recycle_at;
    mp.recycle_at = r >= mp.head.stacks ? 1 : r + 1;
    if (r == 0 || r > mp.head.stacks) continue;
    if (mp.keys[r].nfollow == 0 && mp.rows[r].live.samples == 0 &&
        now - mp.rows[r].changed_ns >= (mp.recycle_ns ? mp.recycle_ns : OCGC_MP_RECYCLE_NS) &&
        now >= mp.rows[r].changed_ns) {
      uint64_t gen = mp.rows[r].generation + 1;
      unindex(r);
      memset(&mp.rows[r], 0, sizeof mp.rows[r]);
      mp.rows[r].generation = gen;
      memset(mp.keys[r].frames, 0, sizeof mp.keys[r].frames);
      return r;
    }
  }
  return 0;
}

/* The row of a stack: found, made (rows in order, then recycled), or 0,
 * the overflow row; a new row's key is published if [pub]. */
static unsigned row_of(const uint64_t *frames, unsigned depth, uint64_t meta, int pub,
                       uint64_t now)
{
  uint64_t h = key_hash(frames, depth, meta);
  unsigned slot = (unsigned)h & (INDEX_SLOTS - 1), probes, r;
  for (probes = 0; probes < INDEX_SLOTS; probes++, slot = (slot + 1) & (INDEX_SLOTS - 1)) {
    r = mp.index[slot];
    if (r == 0) break;
    if (mp.keys[r].hash == h && mp.keys[r].meta == meta &&
        memcmp(mp.keys[r].frames, frames, depth * sizeof *frames) == 0)
      return r;
  }
  if (probes == INDEX_SLOTS) return 0;
  if (mp.head.stacks + 1 < mp.rows_max) {
    r = (unsigned)++mp.head.stacks;
  } else {
    if ((r = recycle(now)) == 0) return 0;
    /* the index changed: the free slot is found again */
    for (slot = (unsigned)h & (INDEX_SLOTS - 1); mp.index[slot] != 0;
         slot = (slot + 1) & (INDEX_SLOTS - 1)) {
    }
  }
  mp.index[slot] = (uint16_t)r;
  mp.keys[r].hash = h;
  mp.keys[r].meta = meta;
  mp.keys[r].nfollow = 0;
  memcpy(mp.keys[r].frames, frames, depth * sizeof *frames);
  mp.rows[r].changed_ns = now;
  if (pub) {
    pub_row_key(r);
    pub_row_counts(r);
  }
  return r;
}

static inline unsigned seen_slot(uint64_t a)
{
  return (unsigned)((a * UINT64_C(0x9E3779B97F4A7C15)) >> 53) & (SEEN_SLOTS - 1);
}

/* The call stack of the allocation being sampled, folded: return addresses
 * of the OCaml frames, innermost first, at most OCGC_MP_DEPTH (*cut set
 * when there were more, or more than RAW_MAX before folding).  The walk is
 * the runtime's own (the frame tables), from the last return to OCaml
 * code, which the systhreads library keeps per thread.  Folding goes from
 * the outermost frame in, keeping each address once: an address seen
 * again drops the frames since its first occurrence (main c a b a b a b
 * becomes main c a b), so the depth of a recursion, direct or mutual,
 * makes no new key; the allocating frame stays innermost. */
static unsigned capture(uint64_t *frames, int *cut)
{
  unsigned n = 0, len = 0, i;
#ifdef NATIVE_CODE
  uintnat pc = Caml_state->last_return_address;
  char *sp = Caml_state->bottom_of_stack;
  struct walk *w = mp.walk;
  *cut = 0;
  for (;;) {
    frame_descr *d = caml_next_frame_descriptor(&pc, &sp);
    if (d == NULL) break;
    if (n == RAW_MAX) {
      *cut = 1;
      break;
    }
    w->raw[n++] = (uint64_t)d->retaddr;
  }
  if (++w->stamp == 0) { /* once in 2^32 samples: no stale stamp may match */
    memset(w->seen, 0, sizeof w->seen);
    w->stamp = 1;
  }
  for (i = n; i-- > 0;) {
    uint64_t a = w->raw[i];
    unsigned s = seen_slot(a);
    /* at most RAW_MAX addresses in SEEN_SLOTS slots: an empty one is met */
    while (w->seen[s].stamp == w->stamp && w->seen[s].addr != a) s = (s + 1) & (SEEN_SLOTS - 1);
    if (w->seen[s].stamp == w->stamp && w->seen[s].pos < len && w->out[w->seen[s].pos] == a) {
      len = w->seen[s].pos + 1;
    } else {
      w->seen[s].addr = a;
      w->seen[s].stamp = w->stamp;
      w->seen[s].pos = len;
      w->out[len++] = a;
    }
  }
  if (len > OCGC_MP_DEPTH) *cut = 1;
  for (i = 0; i < len && i < OCGC_MP_DEPTH; i++) frames[i] = w->out[len - 1 - i];
  n = i;
#else
  (void)frames;
  (void)len;
  (void)i;
  *cut = 0;
#endif
  return n;
}

static void add(struct ocgc_wire_mp_counts *c, uint64_t samples, uint64_t words, uint64_t blocks)
{
  c->samples += samples;
  c->words += words;
  c->blocks_x1024 += blocks;
}

/* One sampled block: [n] draws in a block of [whsize] words (for custom
 * memory, its words outside the heap), of [kind]; [idx] its place in a
 * combined allocation. */
static void record(value block, uint32_t n, uint64_t whsize, unsigned kind, unsigned idx,
                   int young)
{
  uint64_t frames[OCGC_MP_DEPTH];
  int cut;
  unsigned depth, r;
  uint64_t words = (uint64_t)n * mp.w;
  uint64_t blocks = whsize == 0 ? 0 : words * 1024 / whsize;
  uint64_t now;
  int w = 0; /* the shared table is written */

  if (caml_ocgc_file.lazy) {
    /* A forked child before its first GC event: the sample is kept, and
     * published when that event makes the file (caml_ocgc_mp_attach).
     * Made here, the file would be left behind by a child that execs.
     * Nothing is shared yet: no writer guard (the exit handler of a
     * process without a file touches nothing). */
    tables_own();
    mp.early = 1;
  } else {
    if (!caml_ocgc_writer_enter()) return;
    if (mp.shared == NULL) {
      caml_ocgc_writer_leave();
      return;
    }
    w = 1;
  }
  /* (frames past depth are never read: the key is its first depth) */
  depth = capture(frames, &cut);
  now = caml_ocgc_now();
  if (w) pub_begin();
  r = row_of(frames, depth, OCGC_MP_META(depth, cut, kind, idx & 0xffu), w, now);
  add(&mp.rows[r].alloc, n, words, blocks);
  mp.rows[r].changed_ns = now;
  mp.head.samples += n;
  mp.head.words += words;
  if (r == 0) mp.head.overflow_samples += n;
  if (cut) mp.head.cut_samples += n;
  if (mp.nfollow < FOLLOW_MAX) {
    struct followed *f = &mp.follow[mp.nfollow++];
    f->block = block;
    f->words = words;
    f->blocks = blocks;
    f->samples = n;
    f->cycle = mp.cycles;
    f->row = (uint16_t)r;
    f->flags = young ? F_YOUNG : 0;
    mp.keys[r].nfollow++;
  } else {
    mp.head.unfollowed++;
  }
  if (w) pub_row_counts(r);
  mp.head.followed = mp.nfollow;
  if (!w) return;
  pub_head();
  pub_end();
  caml_ocgc_writer_leave();
}

/* ---- memprof.c's calls --------------------------------------------------------- */

/* The sampled words of the minor heap are a Bernoulli process: the trigger
 * (the next success) stays valid until used, the heap emptied or the rate
 * changed, so only those draw anew (caml/ocgc.h), never a thread switch. */
value *caml_ocgc_mp_young_trigger(void)
{
  uint64_t g = geom();
  if ((uint64_t)(Caml_state->young_ptr - Caml_state->young_alloc_start) < g)
    return Caml_state->young_alloc_start;
  return Caml_state->young_ptr - (g - 1);
}

void caml_ocgc_mp_young(uintnat wosize, int nallocs, unsigned char *encoded_alloc_lens)
{
  intnat trigger_ofs = caml_memprof_young_trigger - Caml_state->young_ptr;
  intnat alloc_ofs = (intnat)Whsize_wosize(wosize);
  int idx;
  if (!caml_ocgc_mp_on || mp.program) return;
  /* The blocks of one allocation lie from young_ptr up, the last first;
   * the sampled words from the trigger down (as memprof.c counts them). */
  for (idx = nallocs - 1; idx >= 0; idx--) {
    uintnat wosz = encoded_alloc_lens == NULL ? wosize
                                              : Wosize_encoded_alloc_len(encoded_alloc_lens[idx]);
    uint32_t n = 0;
    alloc_ofs -= (intnat)Whsize_wosize(wosz);
    while (alloc_ofs < trigger_ofs) {
      n++;
      trigger_ofs -= (intnat)geom();
    }
    if (n > 0)
      record(Val_hp(Caml_state->young_ptr + alloc_ofs), n, Whsize_wosize(wosz), OCGC_MP_MINOR,
             (unsigned)idx, 1);
  }
}

void caml_ocgc_mp_block(value block, uintnat words, int kind)
{
  uint32_t n = binom(words);
  if (n > 0) record(block, n, words, (unsigned)kind, 0, Is_young(block));
}

void caml_ocgc_mp_interned(header_t *block, header_t *blockend)
{
  header_t *p;
  int young = Is_young(Val_hp(block));
  if ((uint64_t)(blockend - block) < mp.to_next) { /* no sample in it: the usual case */
    mp.to_next -= (uint64_t)(blockend - block);
    return;
  }
  for (p = block; p < blockend; p += Whsize_hp(p)) {
    uint32_t n = binom(Whsize_hp(p));
    if (n > 0) record(Val_hp(p), n, Whsize_hp(p), OCGC_MP_MARSHAL, 0, young);
  }
}

/* Entry [i]'s figures added to [c], a count of its row (published if [w]). */
static void count_away(unsigned i, struct ocgc_wire_mp_counts *c, int w, uint64_t now)
{
  struct followed *f = &mp.follow[i];
  add(c, f->samples, f->words, f->blocks);
  mp.rows[f->row].changed_ns = now;
  if (w) pub_row_counts(f->row);
}

/* Forget entry [i], keeping the young ones together from young_from on:
 * an old entry's place takes the last old one, whose place the last. */
static void drop(unsigned i)
{
  mp.keys[mp.follow[i].row].nfollow--;
  if (i < mp.young_from) {
    mp.follow[i] = mp.follow[--mp.young_from];
    i = mp.young_from;
  }
  mp.follow[i] = mp.follow[--mp.nfollow];
}

/* Around a pass over the followed blocks: whether their figures can be
 * published (a file to write, and the exit handler not in), and the
 * publication of what the pass counted.  A pass that cannot publish still
 * moves and forgets blocks, and counts them in the private table, which
 * a later publication writes whole (a row's words are all written each
 * time): the array and the figures must stay true.  A forked child's
 * file is made by a GC event, never here (see record). */
static int pass_begin(void)
{
  int w = !caml_ocgc_file.lazy && caml_ocgc_writer_enter();
  if (w && mp.shared == NULL) {
    caml_ocgc_writer_leave();
    w = 0;
  }
  if (w) pub_begin();
  return w;
}

static void pass_end(int w)
{
  if (!w) return;
  mp.head.followed = mp.nfollow;
  pub_head();
  pub_end();
  caml_ocgc_writer_leave();
}

void caml_ocgc_mp_minor_update(void)
{
  unsigned i;
  uint64_t now;
  int w;
  if (mp.young_from >= mp.nfollow) {
    mp.young_from = mp.nfollow;
    return;
  }
  w = pass_begin();
  now = caml_ocgc_now();
  for (i = mp.young_from; i < mp.nfollow;) {
    struct followed *f = &mp.follow[i];
    if (!(f->flags & F_YOUNG) || !Is_young(f->block)) {
      f->flags &= (uint16_t)~F_YOUNG;
      i++;
    } else if (Hd_val(f->block) == 0) { /* promoted: the first field is where to */
      f->block = Field(f->block, 0);
      f->flags &= (uint16_t)~F_YOUNG;
      count_away(i, &mp.rows[f->row].promoted, w, now);
      i++;
    } else { /* died young: never in use */
      count_away(i, &mp.rows[f->row].freed, w, now);
      drop(i);
    }
  }
  mp.young_from = mp.nfollow;
  pass_end(w);
}

/* Markings begun: caml_ocgc_cycle_start, from start_cycle, before the
 * roots are darkened. */
void caml_ocgc_mp_cycle_start(void)
{
  mp.cycles++;
}

/* The end of a marking: white blocks are dead, every other block that was
 * in the heap when it began is live (what was allocated or promoted since
 * is black without being traced, and waits for the next marking). */
void caml_ocgc_mp_clean_phase(void)
{
  unsigned i;
  uint64_t now;
  int w;
  if (mp.rows == NULL) return; /* never sampled */
  w = pass_begin();
  now = caml_ocgc_now();
  for (i = 0; i < mp.nfollow;) {
    struct followed *f = &mp.follow[i];
    struct fig *row = &mp.rows[f->row];
    if (Is_young(f->block)) {
      i++;
    } else if (Is_white_val(f->block)) {
      if (f->flags & F_LIVE) {
        row->live.samples -= f->samples;
        row->live.words -= f->words;
        row->live.blocks_x1024 -= f->blocks;
      }
      count_away(i, &row->freed, w, now);
      drop(i);
    } else {
      if (!(f->flags & F_LIVE) && f->cycle != mp.cycles) {
        f->flags |= F_LIVE;
        count_away(i, &row->live, w, now);
      }
      i++;
    }
  }
  mp.head.live_cycle = mp.cycles;
  mp.head.live_cycle_ns = now;
  pass_end(w);
}

void caml_ocgc_mp_invert(void)
{
  unsigned i;
  for (i = 0; i < mp.nfollow; i++) caml_invert_root(mp.follow[i].block, &mp.follow[i].block);
}

/* ---- the rate -------------------------------------------------------------------- */

static void say(const char *line)
{
  /* never blocks: a line that stderr cannot take now is dropped */
  struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};
  if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT))
    (void)!write(STDERR_FILENO, line, strlen(line));
}

static uint64_t state_now(void)
{
  if (!NATIVE) return OCGC_MP_UNAVAILABLE;
  if (mp.rate_bytes == 0) return OCGC_MP_OFF;
  return mp.program ? OCGC_MP_ASIDE : OCGC_MP_ON;
}

/* Put [bytes] (0: off, else within the bounds) in force from [now]. */
static void set_rate(uint64_t bytes, uint64_t now)
{
  if (bytes != 0 && !tables_ready()) {
    say("ocgc: no memory for the allocation profile's tables: sampling stays off\n");
    bytes = 0;
  }
  if (bytes != mp.rate_bytes) {
    mp.head.rate_changes++;
    mp.head.rate_since_ns = now;
  }
  mp.rate_bytes = bytes;
  mp.w = bytes / 8;
  mp.log1m_p = mp.w > 1 ? log1p(-1.0 / (double)mp.w) : -1.0;
  mp.to_next = bytes != 0 ? geom() : 0;
  mp.head.rate_bytes = bytes;
  mp.head.state = state_now();
  caml_ocgc_mp_on = bytes != 0;
  /* the minor heap's trigger, drawn anew at the new rate (none yet at
   * start): else the old one stands until crossed or the heap is emptied */
  if (Caml_state != NULL && Caml_state->young_ptr != NULL) caml_memprof_renew_minor_sample();
}

/* OCGC_MEMPROF: off (or unset, or 0), on (OCGC_MP_RATE_DEFAULT), or the
 * mean bytes between samples, with an optional k or m (KiB, MiB). */
static int parse_rate(const char *v, uint64_t *out)
{
  uint64_t n = 0, mul = 1;
  const char *p = v;
  if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0 || v[0] == '\0') return *out = 0, 0;
  if (strcmp(v, "on") == 0) return *out = OCGC_MP_RATE_DEFAULT, 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    n = n * 10 + (uint64_t)(*p - '0');
    if (n > OCGC_MP_RATE_MAX) return -1;
  }
  if (p == v) return -1;
  if (*p == 'k' || *p == 'K') mul = 1024, p++;
  else if (*p == 'm' || *p == 'M') mul = 1024 * 1024, p++;
  if (*p != '\0' || n * mul < OCGC_MP_RATE_MIN || n * mul > OCGC_MP_RATE_MAX) return -1;
  *out = n * mul;
  return 0;
}

/* OCGC_MEMPROF_RECYCLE: seconds a row must be quiet to be recycled (1 to
 * 86400; default OCGC_MP_RECYCLE_NS); anything else keeps the default. */
static uint64_t parse_recycle(const char *v)
{
  uint64_t n = 0;
  const char *p = v;
  if (v == NULL) return OCGC_MP_RECYCLE_NS;
  for (; *p >= '0' && *p <= '9' && n <= 86400; p++) n = n * 10 + (uint64_t)(*p - '0');
  if (p == v || *p != '\0' || n < 1 || n > 86400) return OCGC_MP_RECYCLE_NS;
  return n * 1000000000u;
}

void caml_ocgc_mp_init(const char *env, const char *recycle)
{
  uint64_t rate = 0;
  char line[256];
  rng_seed();
  mp.recycle_ns = parse_recycle(recycle);
  if (env == NULL) return;
  if (parse_rate(env, &rate) != 0) {
    snprintf(line, sizeof line,
             "ocgc: OCGC_MEMPROF=%.40s is not off, on, or a number of bytes from %u to %llu "
             "(k and m allowed): allocation sampling stays off\n",
             env, OCGC_MP_RATE_MIN, (unsigned long long)OCGC_MP_RATE_MAX);
    say(line);
    return;
  }
  if (rate != 0 && !NATIVE) {
    say("ocgc: OCGC_MEMPROF: bytecode programs are not sampled (only native code is)\n");
    return;
  }
  if (rate == 0) return;
  caml_ocgc_lease_set_base(rate);
  set_rate(rate, caml_ocgc_now());
  pass_end(pass_begin());
}

void caml_ocgc_mp_attach(struct ocgc_wire_mp *shared, uint64_t now)
{
  unsigned r;
  mp.shared = shared;
  /* (the early samples of a forked child fit: it had no file to limit
   * them, and its file is made like its parent's) */
  mp.rows_max = caml_ocgc_file.mp_rows;
  /* A forked child's samples from before its file are its table's first;
   * otherwise the table starts empty. */
  if (!mp.early) tables_clear();
  mp.inherited = 0;
  /* A new file's word is 0 (the parent's, in a forked child, is not ours). */
  caml_ocgc_mp_control.word = &shared->control;
  caml_ocgc_mp_control.seen = 0;
  caml_ocgc_lease_attach(shared->reserved);
  /* the rate in force is the new table's first */
  mp.head.rate_since_ns = mp.rate_bytes != 0 ? now : 0;
  mp.head.rate_changes = mp.rate_bytes != 0;
  mp.head.state = state_now();
  mp.head.features = OCGC_MP_FEATURE_LIVE;
  mp.seq = 0;
  /* a new file: the constants, then the figures */
  shared->size = OCGC_WIRE_MP_SIZE;
  shared->rows = OCGC_MP_ROWS;
  shared->row_size = sizeof(struct ocgc_wire_mp_row);
  shared->depth = OCGC_MP_DEPTH;
  __atomic_store_n(&((struct ocgc_wire_mp_row *)(shared + 1))[0].meta, OCGC_MP_META_OVERFLOW,
                   __ATOMIC_RELAXED);
  if (mp.early) {
    mp.early = 0;
    for (r = 0; r <= mp.head.stacks; r++) {
      if (r != 0) pub_row_key(r);
      pub_row_counts(r);
    }
  }
  pub_head();
  __atomic_store_n(&shared->magic, OCGC_MP_MAGIC, __ATOMIC_RELEASE);
}

unsigned caml_ocgc_mp_rows_used(void)
{
  return (unsigned)mp.head.stacks + 1;
}

void caml_ocgc_mp_forked(void)
{
  mp.shared = NULL;
  caml_ocgc_mp_control.word = NULL;
  mp.nfollow = mp.young_from = 0;
  mp.inherited = 1;
  mp.early = 0;
  rng_seed();
  /* the parent's leases are not ours: the base rate again */
  if (caml_ocgc_lease_forked() && NATIVE) set_rate(caml_ocgc_lease_rate(), caml_ocgc_now());
  if (mp.rate_bytes != 0) mp.to_next = geom();
}

void caml_ocgc_mp_program(int started)
{
  mp.program = started != 0;
  mp.head.state = state_now();
  /* Gc.Memprof.stop drew the trigger while [started] was still 1: ocgc's,
   * drawn now, from ocgc's generator.  Never at the start: that would draw
   * from statmemprof's, which the program's profiler must find as a stock
   * runtime leaves it (a trigger of ocgc's left by a start at rate 0 is
   * passed by caml_ocgc_mp_young). */
  if (!started && Caml_state != NULL && Caml_state->young_ptr != NULL)
    caml_memprof_renew_minor_sample();
  pass_end(pass_begin());
}

struct caml_ocgc_mp_control caml_ocgc_mp_control;

/* A new control word [c] (caml_ocgc_mp_poll saw it). */
void caml_ocgc_mp_act(uint64_t c, uint64_t now)
{
  uint64_t rate = c & OCGC_MP_CONTROL_RATE_MASK;
  char line[200];
  caml_ocgc_mp_control.seen = c;
  if (!NATIVE) {
    mp.head.control_result = OCGC_MP_CONTROL_BYTECODE;
  } else if (rate != 0 && (rate < OCGC_MP_RATE_MIN || rate > OCGC_MP_RATE_MAX)) {
    mp.head.control_result = OCGC_MP_CONTROL_REFUSED;
    mp.head.control_refused++;
    if (!mp.said_refused) {
      mp.said_refused = 1;
      snprintf(line, sizeof line,
               "ocgc: process %d: a control word asked for a sampling rate of %llu bytes, "
               "outside %u..%llu: refused (and any later one, silently)\n",
               (int)getpid(), (unsigned long long)rate, OCGC_MP_RATE_MIN,
               (unsigned long long)OCGC_MP_RATE_MAX);
      say(line);
    }
  } else {
    /* the word sets the base rate; a live lease finer than it stays in
     * force until it ends (ocgc_mp_lease.c) */
    caml_ocgc_lease_set_base(rate);
    set_rate(caml_ocgc_lease_rate(), now);
    /* (no memory for the tables: off, and said once on stderr) */
    mp.head.control_result = mp.rate_bytes == caml_ocgc_lease_rate() ? OCGC_MP_CONTROL_APPLIED
                                                                     : OCGC_MP_CONTROL_REFUSED;
  }
  pub_begin();
  pub_head();
  pub_end();
}

/* The lease slots at a poll (caml_ocgc_mp_poll): the rate they and the
 * base give put in force, and published when anything changed. */
void caml_ocgc_mp_lease_act(uint64_t now)
{
  if (!caml_ocgc_lease_poll(now)) return;
  if (NATIVE && caml_ocgc_lease_rate() != mp.rate_bytes) set_rate(caml_ocgc_lease_rate(), now);
  pub_begin();
  pub_head();
  pub_end();
}
