/* test_producer_ring.c - the runtime's ring writer (runtime_patch/src/
 * ocgc_ring.c and ocgc_ring.h), on its own, in a mapping laid out as
 * ocgc_file.c lays out the file.  Batches of one to three events (2 and 3
 * words, as the hooks write them) go through reserve/put/commit until the
 * ring has been overwritten many times over, and after every commit:
 * - head and tail are where the writer says, head <= tail, tail - head
 *   <= size - 1, and head sits on a batch this test wrote (so on an event
 *   boundary), with exactly the events before it in head_events, in the
 *   shared ext ring record as in the writer's copy;
 * - an overwrite frees at most two blocks beyond what the batch needed;
 * - the events between head and tail decode to what was written (header,
 *   timestamp, value), padding records aside;
 * and the same while another party keeps zeroing or scribbling the ring's
 * words: the writer reads nothing back, so its accounting stays exact and
 * it never drops the whole ring. */

#define CAML_INTERNALS
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ocgc_clock.h"
#include "ocgc_ring.h"
#include "testutil.h"

/* What the test wrote: each batch's start and the events before it. */
struct batch {
  uint64_t pos, events;
};

struct harness {
  char *map;
  size_t bytes;
  uint64_t words;
  struct batch *log; /* every batch, in order */
  size_t nlog, cap;
  uint64_t rng;
};

static void make(struct harness *h, unsigned log2)
{
  struct ocgc_wire_header g = {.version = OCGC_WIRE_VERSION};
  memset(h, 0, sizeof *h);
  h->words = UINT64_C(1) << log2;
  h->bytes = (size_t)ocgc_wire_layout(&g, 1, h->words, ocgc_wire_ext_size(1));
  h->map = mmap(NULL, h->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(h->map != MAP_FAILED);
  memcpy(h->map, &g, sizeof g);
  caml_ocgc_ring_attach(h->map, &g, OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext));
  h->rng = 0x9e3779b97f4a7c15u;
}

static void unmake(struct harness *h)
{
  munmap(h->map, h->bytes);
  free(h->log);
}

static uint64_t next(struct harness *h)
{
  h->rng ^= h->rng << 13;
  h->rng ^= h->rng >> 7;
  h->rng ^= h->rng << 17;
  return h->rng;
}

/* The value of the event written at word position [pos]: checkable. */
static uint64_t value_at(uint64_t pos) { return pos * 2654435761u + 7; }

/* One batch of one to three events; returns the words it took. */
static uint64_t write_batch(struct harness *h)
{
  struct caml_ocgc_ring *r = &caml_ocgc_ring;
  unsigned n = 1 + (unsigned)(next(h) % 3), i;
  uint64_t lens[3], words = 0, *p, *start;
  for (i = 0; i < n; i++) words += lens[i] = next(h) % 2 ? 3 : 2;
  p = start = caml_ocgc_ring_reserve(words);
  if (h->nlog == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 4096;
    h->log = realloc(h->log, h->cap * sizeof *h->log);
    ck_assert(h->log != NULL);
  }
  /* The reserve may have padded to the end: the batch starts at tail. */
  h->log[h->nlog].pos = r->tail;
  h->log[h->nlog].events = r->written;
  h->nlog++;
  for (i = 0; i < n; i++) {
    uint64_t pos = r->tail + (uint64_t)(p - start);
    if (lens[i] == 2)
      p = caml_ocgc_put2(p, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, 11), pos);
    else
      p = caml_ocgc_put3(p, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, 4), pos, value_at(pos));
  }
  caml_ocgc_ring_commit(start, p, n);
  return words;
}

/* The batch of the log that starts at [pos], or NULL. */
static const struct batch *find(const struct harness *h, uint64_t pos)
{
  size_t lo = 0, hi = h->nlog;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (h->log[mid].pos < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo < h->nlog && h->log[lo].pos == pos ? &h->log[lo] : NULL;
}

/* The invariants after a commit; [need] is where room had to begin for
 * the batch just written (0: it needed none). */
static void check(const struct harness *h, uint64_t head_before, uint64_t need, int words_ok)
{
  struct caml_ocgc_ring *r = &caml_ocgc_ring;
  const struct batch *b;
  uint64_t block = UINT64_C(1) << r->block_shift;
  TU_CHECK(r->head <= r->tail && r->tail - r->head <= r->mask, "head %llu tail %llu",
           (unsigned long long)r->head, (unsigned long long)r->tail);
  TU_CHECK(__atomic_load_n(&r->rh->tail, __ATOMIC_ACQUIRE) == r->tail, "shared tail");
  TU_CHECK(__atomic_load_n(&r->rh->head, __ATOMIC_ACQUIRE) == r->head, "shared head");
  TU_CHECK(r->er->head_pos == r->head && r->er->head_events == r->head_events &&
               r->er->seq % 2 == 0,
           "ext ring record");
  if (r->head == 0) {
    TU_CHECK(r->head_events == 0, "no event dropped yet");
  } else {
    b = find(h, r->head);
    TU_CHECK(b != NULL, "head %llu is not the start of a batch", (unsigned long long)r->head);
    TU_CHECK(b->events == r->head_events, "head_events %llu, expected %llu",
             (unsigned long long)r->head_events, (unsigned long long)b->events);
  }
  if (need != 0) {
    /* Never the whole ring, and at most two blocks and a batch past need. */
    TU_CHECK(r->head >= need && r->head <= need + 2 * block + CAML_OCGC_BATCH_MAX,
             "freed to %llu for room at %llu (blocks of %llu)", (unsigned long long)r->head,
             (unsigned long long)need, (unsigned long long)block);
  } else {
    TU_CHECK(r->head == head_before, "head moved without need");
  }
  if (words_ok) {
    /* Everything between head and tail reads back as written. */
    uint64_t pos = r->head;
    while (pos < r->tail) {
      uint64_t hd = r->data[pos & r->mask], len = OCGC_EV_LENGTH(hd);
      if (((hd >> 49) & 0x1f) == 0) {
        /* padding: it fills the ring to its end */
        TU_CHECK(len >= 1 && len < CAML_OCGC_BATCH_MAX && ((pos + len) & r->mask) == 0,
                 "bad padding at %llu", (unsigned long long)pos);
        pos += len;
        continue;
      }
      TU_CHECK(len >= 2 && len <= 3 && pos + len <= r->tail, "bad header at %llu",
               (unsigned long long)pos);
      TU_CHECK(r->data[(pos + 1) & r->mask] == pos, "timestamp at %llu", (unsigned long long)pos);
      if (len == 3)
        TU_CHECK(r->data[(pos + 2) & r->mask] == value_at(pos), "value at %llu",
                 (unsigned long long)pos);
      pos += len;
    }
  }
}

/* Write [batches] batches, checking after each; every [scribble] batches
 * (0: never), zero or scribble the whole data area. */
static void run(struct harness *h, unsigned long batches, unsigned scribble)
{
  struct caml_ocgc_ring *r = &caml_ocgc_ring;
  unsigned long i;
  for (i = 0; i < batches; i++) {
    uint64_t before = r->head, tail = r->tail, need = 0;
    /* The words the batch may reserve at most: the writer makes room for
     * what it reserves, so predict with the same bound. */
    uint64_t words;
    int scribbled = scribble != 0 && i % scribble == scribble / 2;
    if (scribbled) {
      if (i / scribble % 2) memset(r->data, 0, r->size * 8);
      else memset(r->data, 0xa5, r->size * 8);
    }
    words = write_batch(h);
    {
      /* Room the reserve had to find: tail (before any padding) plus
       * padding plus the batch, less a full ring. */
      uint64_t off = tail & r->mask;
      uint64_t pad = off + words > r->size ? r->size - off : 0;
      if (tail + pad + words - before > r->mask) need = tail + pad + words - r->mask;
    }
    /* Words written before a scribble do not read back; a large ring is
     * read back now and then (a whole walk each time). */
    check(h, before, need, scribble == 0 && (r->size <= 1024 || i % 4096 == 0));
  }
  ck_assert_uint_gt(r->tail, 20 * r->size); /* it went round many times */
  ck_assert_uint_gt(r->head_events, 0);
}

/* A ring of 2^log2 words, in blocks of 2^shift, written [batches] times. */
static void overwrite_case(unsigned log2, unsigned shift, unsigned long batches, unsigned scribble)
{
  struct harness h;
  make(&h, log2);
  ck_assert_uint_eq(caml_ocgc_ring.block_shift, shift);
  run(&h, batches, scribble);
  unmake(&h);
}

/* The smallest ring: 1024 words, 16 blocks of 64. */
START_TEST(test_overwrite_exact_small) { overwrite_case(10, 6, 200000, 0); }
END_TEST

/* The default ring: 1024 blocks of 64 words. */
START_TEST(test_overwrite_exact_default) { overwrite_case(16, 6, 400000, 0); }
END_TEST

/* Larger: 1024 blocks of 128 words. */
START_TEST(test_overwrite_large_blocks) { overwrite_case(17, 7, 800000, 0); }
END_TEST

/* Zeroed or scribbled every 1000 batches. */
START_TEST(test_scribbled_ring) { overwrite_case(10, 6, 200000, 1000); }
END_TEST

START_TEST(test_new_ring_forgets_marks)
{
  struct harness h;
  make(&h, 10);
  run(&h, 50000, 0);
  unmake(&h);
  /* A forked child attaches to its own new ring: the old marks must not
   * steer it. */
  make(&h, 10);
  ck_assert_uint_eq(caml_ocgc_ring.head, 0);
  ck_assert_uint_eq(caml_ocgc_ring.tail, 0);
  run(&h, 50000, 0);
  unmake(&h);
}
END_TEST

static Suite *producer_ring_suite(void)
{
  Suite *s = suite_create("producer_ring");
  TCase *tc = tcase_create("overwrite");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_overwrite_exact_small);
  tcase_add_test(tc, test_overwrite_exact_default);
  tcase_add_test(tc, test_overwrite_large_blocks);
  tcase_add_test(tc, test_scribbled_ring);
  tcase_add_test(tc, test_new_ring_forgets_marks);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(producer_ring_suite);
