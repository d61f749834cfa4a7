/* hostile_producer.c - a live process with an ocgc ring that lies, for
 * tests/hostile/hostile_live.sh.
 *
 *   hostile_producer DIR MODE [SECONDS [RING_LOG2]]
 *
 * It creates DIR/<its pid>.events as a regular file laid out by the test
 * ring writer (tests/unit/ringgen.[ch]) with its own real identity (pid,
 * /proc start time, boot id, state running), so that attach by pid, with
 * --dir or through /proc/PID/maps, accepts it as a live producer.  The
 * file is made under a private name and renamed into place once the
 * identity is whole, as the runtime publishes its own: a runtime starting
 * meanwhile in the same folder sweeps a PID.events whose identity does not
 * match a live process (ocgc_stale.c), and took a half-made one for a
 * dead process's (1,000 programs starting beside 100 of these lost a few
 * dozen of them).  It
 * keeps the file mapped shared read-write, prints "ready PID" on stdout
 * once the ring holds events, then writes in MODE until killed:
 *
 *   flood     valid GC events as fast as it can (minor collections with
 *             their cause and counters, major slices, cycle ends): the ring
 *             wraps constantly; head, the (head_pos, head_events) seqlock,
 *             written_events and the totals stay honest.
 *   scribble  flood, interleaved with lies: head and tail set to wild
 *             values, tail rewound, event lengths 0 or huge, garbage words,
 *             impossible totals (by-cause sums above the collections,
 *             counters going backwards), head_events above written, spans
 *             that end before they begin, seqlocks left odd for a while.
 *   truncate  flood, with the file cut shorter (to 0, into the header, the
 *             extension block, the ring, the name table) and grown back to
 *             full size (or beyond) in a loop.
 *   all       the three in turn, ROTATE_MS each.
 *   frozen    an honest collection every 20 ms until SIGUSR1, then a
 *             writer stopped in the middle of a publication, alive: both
 *             seqlocks (the ring's head and the totals) left odd for good;
 *             it prints "frozen 1" then.
 *   stall     two rings: the second's seqlock left odd for good (a writer
 *             stopped mid-publication, alive), the first an honest
 *             collection every 2 ms: every poll of a reader waits its
 *             whole budget on the second ring, and the first gives it a
 *             little progress each time, so it is always behind.
 *   wide:N    a flood over N rings (2..4096, as a runtime with that many
 *             domains): each collection on the next ring in turn.
 *   crowd:N   N processes (forked children, each with a ring of its own,
 *             honest, one collection a second), each named with 63 bytes
 *             of what a label must not carry as it is: controls, C1
 *             bytes, bytes that are not UTF-8, quotes, backslashes, line
 *             ends, braces, after $HOSTILE_NAME_PREFIX and its pid.  Each
 *             child prints "child PID", then the parent "ready N" once
 *             all hold events; SIGTERM to the parent ends them all.
 *
 * "scribble:N" tells only lie N (0..NLIES-1, see scribble_once()), to find
 * which lie a reader trips on.
 *
 * Invariants:
 * - it never becomes the reason a test hangs: alarm(SECONDS) (default 60)
 *   ends it, SIGTERM/SIGINT end it at the next loop turn (removing its
 *   file), and no loop waits on anything but the clock;
 * - it never faults on its own mapping: while the file is shorter than the
 *   mapping it touches none of it, and before writing again it sets the
 *   size back and copies back the image it saved, so honest phases are
 *   honest again;
 * - after a lie it restores what the writer knows (ringgen's rg_ring state
 *   and its own copy of the totals), so every lie is temporary and the
 *   ring stays readable between them. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ringgen.h"

#define ROTATE_MS 300u
#define SLICE_EVERY 4u   /* a major slice after every 4th minor collection */
#define CYCLE_EVERY 256u /* a major cycle ends every 256 minor collections */

enum mode { M_FLOOD, M_SCRIBBLE, M_TRUNCATE, M_ALL, M_FROZEN, M_CROWD, M_IDLE, M_WIDE, M_STALL };

#define NLIES 12

static volatile sig_atomic_t stop_sig;
static int only_lie = -1; /* scribble:N */
static unsigned crowd_n;   /* crowd:N */
static unsigned wide_n = 1; /* wide:N: rings */
static void on_stop(int sig) { stop_sig = sig; }
static volatile sig_atomic_t freeze_sig; /* frozen mode: SIGUSR1 came */
static void on_freeze(int sig) { freeze_sig = sig; }

/* The writer's own copy of the totals: what it republishes after a lie. */
static struct ocgc_wire_totals honest;

static struct rg_file F;
static struct rg_ring *R;
static unsigned slot_slice_due, slot_cycle_end;
static uint64_t rng_state, last_ts, collections;

static uint64_t rnd(void)
{
  /* xorshift64*: any sequence will do, it only has to differ per run */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * UINT64_C(2685821657736338717);
}

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* Timestamps of one ring never decrease, even when writes outrun the
 * clock's resolution. */
static uint64_t stamp(void)
{
  uint64_t t = now_ns();
  if (t <= last_ts) t = last_ts + 1;
  last_ts = t;
  return t;
}

static void sleep_ms(unsigned ms)
{
  struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- identity --------------------------------------------------------------------- */

/* crowd: the longest name a ring holds, of bytes an exposition must
 * escape or replace, different in each child (its pid first). */
static void hostile_name(char *name, size_t n)
{
  static const char filler[] = "\x01\x1b[31m\x85\x9b\xff\xc0\"}\\\n{a=\"b\"}\xe2\x80\xa6\x7f\x90\xc3\xa9";
  /* HOSTILE_NAME_PREFIX (at most 16 bytes): a test's own mark, so that it
   * can select its crowd among others' (a second test run at once). */
  const char *prefix = getenv("HOSTILE_NAME_PREFIX");
  size_t i = (size_t)snprintf(name, n, "%.16s%d", prefix != NULL ? prefix : "", (int)getpid()), k = 0;
  while (i < n - 1) name[i++] = filler[k++ % (sizeof filler - 1)];
  name[n - 1] = '\0';
}

/* Field 22 of /proc/self/stat, parsed after the last ')' as attach.c does
 * (the command name may hold anything). */
static uint64_t own_start_time(void)
{
  char buf[2048];
  const char *p;
  ssize_t n;
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field;
  if (fd < 0) return 0;
  n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  p = strrchr(buf, ')');
  if (p == NULL) return 0;
  p += 2; /* field 3 */
  for (field = 3; field < 22 && p != NULL; field++) {
    p = strchr(p, ' ');
    if (p != NULL) p++;
  }
  return p != NULL ? strtoull(p, NULL, 10) : 0;
}

static void own_identity(struct ocgc_wire_ext *x)
{
  struct timespec rt, mono;
  ssize_t n;
  int fd;

  x->pid = (uint64_t)getpid();
  x->start_time = own_start_time();
  memset(x->boot_id, 0, sizeof x->boot_id);
  fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    n = read(fd, x->boot_id, sizeof x->boot_id - 1);
    close(fd);
    if (n > 0) x->boot_id[strcspn(x->boot_id, "\n")] = '\0';
    else x->boot_id[0] = '\0';
  }
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  x->realtime_offset_ns = ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * INT64_C(1000000000) +
                          ((int64_t)rt.tv_nsec - (int64_t)mono.tv_nsec);
  x->created_ns = now_ns();
  memset(x->program, 0, sizeof x->program);
  memcpy(x->program, "hostile_producer", sizeof "hostile_producer");
  if (crowd_n != 0) hostile_name(x->program, sizeof x->program);
  __atomic_store_n(&x->state, (uint64_t)OCGC_STATE_RUNNING, __ATOMIC_RELEASE);
}

/* ---- honest writing ------------------------------------------------------------------ */

/* Publish the writer's totals under their seqlock (the producer's
 * protocol): the scalar fields, the by-cause cells the flood moves, and
 * after a lie ([all]) the whole table. */
static void publish_totals(int all)
{
  struct ocgc_wire_totals *t = F.totals;
  uint64_t seq = honest.seq;
  const uint64_t *src = &honest.minor_collections;
  uint64_t *dst = &t->minor_collections;
  size_t i, n = (size_t)(&honest.updated_ns - src) + 1;

  if (all) n = (sizeof *t - sizeof t->seq) / sizeof(uint64_t);
  __atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  for (i = 0; i < n; i++) __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
  if (!all) {
    __atomic_store_n(&t->by_cause[OCGC_KIND_MINOR][OCGC_CAUSE_MINOR_HEAP_FULL],
                     honest.by_cause[OCGC_KIND_MINOR][OCGC_CAUSE_MINOR_HEAP_FULL],
                     __ATOMIC_RELAXED);
    __atomic_store_n(&t->by_cause[OCGC_KIND_MAJOR_SLICE][OCGC_CAUSE_MAJOR_SLICE_DUE],
                     honest.by_cause[OCGC_KIND_MAJOR_SLICE][OCGC_CAUSE_MAJOR_SLICE_DUE],
                     __ATOMIC_RELAXED);
  }
  honest.seq = seq + 2;
  __atomic_store_n(&t->seq, honest.seq, __ATOMIC_RELEASE);
}

/* Put back what the writer knows about its ring: head, tail, the seqlocked
 * pair and the count written. */
static void restore_ring(void)
{
  struct ocgc_wire_ext_ring *er = R->er;
  __atomic_store_n(&er->seq, R->seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&er->head_pos, R->head, __ATOMIC_RELAXED);
  __atomic_store_n(&er->head_events, R->head_events, __ATOMIC_RELAXED);
  __atomic_store_n(&er->written_events, R->written, __ATOMIC_RELAXED);
  __atomic_store_n(&R->rh->head, R->head, __ATOMIC_RELEASE);
  __atomic_store_n(&R->rh->tail, R->tail, __ATOMIC_RELEASE);
  R->seq += 2;
  __atomic_store_n(&er->seq, R->seq, __ATOMIC_RELEASE);
}

static void ev(unsigned type, unsigned id, uint64_t ts)
{
  rg_write(&F, 0, OCGC_EV_HEADER(2, 0, type, id), ts, NULL);
}

static void counter(unsigned id, uint64_t ts, uint64_t v)
{
  rg_write1(&F, 0, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, id), ts, v);
}

static void user_int(unsigned slot, uint64_t ts, uint64_t v)
{
  rg_write1(&F, 0, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, slot), ts, v);
}

/* One minor collection, and after some of them a major slice or the end
 * of a cycle, as the patched runtime writes them, totals included. */
static void one_collection(void)
{
  uint64_t t0 = stamp(), t1;

  counter(OCGC_CT_FORCE_MINOR_ALLOC_SMALL, t0, 1);
  ev(OCGC_RT_BEGIN, OCGC_PH_MINOR, t0);
  counter(OCGC_CT_MINOR_ALLOCATED, t0, 256 * 1024 * 8);
  counter(OCGC_CT_MINOR_PROMOTED, t0, 1024 * 8);
  t1 = stamp();
  ev(OCGC_RT_END, OCGC_PH_MINOR, t1);
  honest.minor_collections++;
  honest.minor_words += 256 * 1024;
  honest.promoted_words += 1024;
  honest.major_words += 1024;
  honest.by_cause[OCGC_KIND_MINOR][OCGC_CAUSE_MINOR_HEAP_FULL]++;
  honest.kind_time_ns[OCGC_KIND_MINOR] += t1 - t0;
  honest.gc_time_ns += t1 - t0;
  collections++;
  if (collections % SLICE_EVERY == 0) {
    t0 = stamp();
    user_int(slot_slice_due, t0, 1);
    ev(OCGC_RT_BEGIN, OCGC_PH_MAJOR_SLICE, t0);
    t1 = stamp();
    ev(OCGC_RT_END, OCGC_PH_MAJOR_SLICE, t1);
    honest.major_slices++;
    honest.by_cause[OCGC_KIND_MAJOR_SLICE][OCGC_CAUSE_MAJOR_SLICE_DUE]++;
    honest.kind_time_ns[OCGC_KIND_MAJOR_SLICE] += t1 - t0;
    honest.gc_time_ns += t1 - t0;
  }
  if (collections % CYCLE_EVERY == 0) {
    honest.major_collections++;
    user_int(slot_cycle_end, stamp(), honest.major_collections);
  }
  honest.updated_ns = last_ts;
  publish_totals(0);
}

static void flood_for(uint64_t ns)
{
  uint64_t end = now_ns() + ns;
  unsigned i;
  while (!stop_sig && now_ns() < end)
    for (i = 0; i < 64; i++) {
      one_collection();
      if (wide_n > 1) R = &F.rings[(unsigned)(R - F.rings + 1) % wide_n];
    }
}

/* ---- lies ---------------------------------------------------------------------------- */

/* Rewrite the header of the event just written (whose true length is the
 * number of words it occupies) to claim [len] words. */
static void relabel_last(uint64_t true_len, uint64_t len, unsigned type, unsigned id)
{
  uint64_t pos = (R->tail - true_len) & R->mask;
  __atomic_store_n(&R->data[pos], OCGC_EV_HEADER(len, 0, type, id), __ATOMIC_RELAXED);
}

/* One lie, held for a while, then taken back. */
static void scribble_once(void)
{
  struct ocgc_wire_totals *t = F.totals;
  struct ocgc_wire_ext_ring *er = R->er;
  uint64_t ts, i, n;
  unsigned hold = (unsigned)(rnd() % 20); /* ms */

  switch (only_lie >= 0 ? (uint64_t)only_lie : rnd() % NLIES) {
  case 0: /* head far away (ahead of tail, or wrapped) */
    __atomic_store_n(&R->rh->head, rnd() % 2 ? UINT64_MAX - rnd() % 64 : R->tail + (rnd() >> 20),
                     __ATOMIC_RELEASE);
    sleep_ms(hold);
    break;
  case 1: /* tail far ahead: more words "written" than the ring holds */
    __atomic_store_n(&R->rh->tail,
                     rnd() % 2 ? UINT64_MAX - rnd() % 64 : R->tail + R->size * (2 + rnd() % 1000),
                     __ATOMIC_RELEASE);
    sleep_ms(hold);
    break;
  case 2: /* tail rewound behind where readers already are */
    __atomic_store_n(&R->rh->tail, R->tail - 1 - rnd() % (R->size * 4), __ATOMIC_RELEASE);
    sleep_ms(hold);
    break;
  case 3: /* head after tail */
    __atomic_store_n(&R->rh->head, R->tail + 1 + rnd() % 1000, __ATOMIC_RELEASE);
    sleep_ms(hold);
    break;
  case 4: /* an event claiming 0 words */
    ev(OCGC_RT_BEGIN, OCGC_PH_MINOR, stamp());
    relabel_last(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR);
    break;
  case 5: /* an event claiming the longest length, or past the ring's end */
    n = rnd() % 2 ? OCGC_WIRE_MAX_EVENT_WORDS - 1 : 4 + rnd() % 1000;
    counter(OCGC_CT_MINOR_ALLOCATED, stamp(), 0);
    relabel_last(3, n, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED);
    break;
  case 6: /* garbage words among the events: unknown types, ids, reserved bits */
    n = 1 + rnd() % 32;
    for (i = 0; i < n; i++) counter(OCGC_CT_MINOR_PROMOTED, stamp(), 0);
    for (i = 0; i < n * 3; i++)
      __atomic_store_n(&R->data[(R->tail - 1 - i) & R->mask], rnd(), __ATOMIC_RELAXED);
    break;
  case 7: /* impossible totals: causes above collections, counts going back */
    __atomic_store_n(&t->seq, honest.seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&t->by_cause[OCGC_KIND_MINOR][OCGC_CAUSE_EXPLICIT],
                     honest.minor_collections + 1000 + rnd() % 1000000, __ATOMIC_RELAXED);
    __atomic_store_n(&t->minor_collections, honest.minor_collections / 2, __ATOMIC_RELAXED);
    __atomic_store_n(&t->major_slices, UINT64_MAX - rnd() % 16, __ATOMIC_RELAXED);
    __atomic_store_n(&t->gc_time_ns, UINT64_MAX / (1 + rnd() % 4), __ATOMIC_RELAXED);
    __atomic_store_n(&t->seq, honest.seq + 2, __ATOMIC_RELEASE);
    honest.seq += 2;
    sleep_ms(hold + 20);
    break;
  case 8: /* lost count above what was written; written going back */
    __atomic_store_n(&er->seq, R->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&er->head_events, R->written + 1 + (rnd() >> 8), __ATOMIC_RELAXED);
    __atomic_store_n(&er->head_pos, R->tail + (rnd() >> 30), __ATOMIC_RELAXED);
    __atomic_store_n(&er->written_events, R->written / 3, __ATOMIC_RELAXED);
    R->seq += 2;
    __atomic_store_n(&er->seq, R->seq, __ATOMIC_RELEASE);
    sleep_ms(hold);
    break;
  case 9: /* spans that end before they begin, ends without beginnings, and
           * timestamps that go back by an hour */
    ts = stamp();
    for (i = 0; i < 16; i++) {
      ev(OCGC_RT_BEGIN, OCGC_PH_MINOR, ts);
      ev(OCGC_RT_END, OCGC_PH_MINOR, ts - UINT64_C(3600000000000) - rnd() % 1000000);
      ev(OCGC_RT_END, OCGC_PH_MAJOR_SLICE, ts - rnd() % 1000000);
      ev(OCGC_RT_BEGIN, OCGC_PH_COMPACT, rnd());
    }
    break;
  case 10: /* seqlocks left odd (a writer that stopped mid-update, alive) */
    __atomic_store_n(&er->seq, R->seq + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&t->seq, honest.seq + 1, __ATOMIC_RELEASE);
    sleep_ms(50 + (unsigned)(rnd() % 250));
    break;
  case 11: /* the totals' seqlock moving all the time, as fast as we can */
    n = 100000 + rnd() % 100000;
    for (i = 0; i < n && !stop_sig; i++) {
      __atomic_store_n(&t->seq, honest.seq + 1, __ATOMIC_RELEASE);
      __atomic_store_n(&t->seq, honest.seq + 2, __ATOMIC_RELEASE);
      honest.seq += 2;
    }
    break;
  }
  /* Take the lie back: the writer's state and totals are the truth (a
   * length lie stays in the ring until the writer overwrites it). */
  restore_ring();
  publish_totals(1);
}

/* Cut the file, wait, and put it back as it was (image restored), or
 * grown past the mapping first. */
static void truncate_once(void)
{
  const struct ocgc_wire_header *h = F.hdr;
  static char *image;
  uint64_t cuts[9], len;
  unsigned hold = 1 + (unsigned)(rnd() % 10);

  if (image == NULL && (image = malloc(F.size)) == NULL) return;
  cuts[0] = 0;
  cuts[1] = 32;
  cuts[2] = OCGC_WIRE_HEADER_SIZE;
  cuts[3] = h->headers_offset - 8;  /* inside the extension block */
  cuts[4] = h->data_offset + 8;     /* just into the ring */
  cuts[5] = h->data_offset + h->ring_size_bytes / 2;
  cuts[6] = h->custom_events_offset; /* the name table gone */
  cuts[7] = F.size - 4096;
  cuts[8] = F.size + 4096 * (1 + rnd() % 64); /* grown past the mapping */
  len = cuts[rnd() % 9];
  memcpy(image, F.map, F.size);
  if (ftruncate(F.fd, (off_t)len) != 0) return;
  /* Not a store into the mapping until it is whole again. */
  sleep_ms(hold);
  if (ftruncate(F.fd, (off_t)F.size) != 0) {
    fprintf(stderr, "hostile_producer: cannot restore the size: %s\n", strerror(errno));
    exit(1);
  }
  memcpy(F.map, image, F.size);
}

/* ---- main ----------------------------------------------------------------------------- */

static int parse_mode(const char *s, enum mode *m)
{
  if (strcmp(s, "flood") == 0) *m = M_FLOOD;
  else if (strcmp(s, "scribble") == 0) *m = M_SCRIBBLE;
  else if (strncmp(s, "scribble:", 9) == 0 && s[9] >= '0' && s[9] <= '9') {
    only_lie = atoi(s + 9);
    if (only_lie >= NLIES) return -1;
    *m = M_SCRIBBLE;
  }
  else if (strcmp(s, "truncate") == 0) *m = M_TRUNCATE;
  else if (strcmp(s, "all") == 0) *m = M_ALL;
  else if (strcmp(s, "frozen") == 0) *m = M_FROZEN;
  else if (strcmp(s, "stall") == 0) {
    wide_n = 2;
    *m = M_STALL;
  }
  else if (strncmp(s, "wide:", 5) == 0 && s[5] >= '1' && s[5] <= '9') {
    wide_n = (unsigned)strtoul(s + 5, NULL, 10);
    if (wide_n < 2 || wide_n > 4096) return -1;
    *m = M_WIDE;
  }
  else if (strncmp(s, "crowd:", 6) == 0 && s[6] >= '1' && s[6] <= '9') {
    crowd_n = (unsigned)strtoul(s + 6, NULL, 10);
    if (crowd_n > 20000) return -1;
    *m = M_CROWD;
  }
  else return -1;
  return 0;
}

/* One producer in [mode] until asked to stop: its ring in [dir], then
 * "ready PID" on stdout, or with [ready_fd] (a crowd's child) "child PID"
 * and a byte to the parent. */
static int producer(const char *dir, enum mode mode, unsigned log2, int ready_fd)
{
  char path[4096], making[4096];
  enum mode cur;
  int frozen = 0;
  uint64_t phase_end;
  int err;

  if (snprintf(path, sizeof path, "%s/%d.events", dir, (int)getpid()) >= (int)sizeof path ||
      snprintf(making, sizeof making, "%s/.hostile-making.%d", dir, (int)getpid()) >=
        (int)sizeof making) {
    fprintf(stderr, "hostile_producer: folder name too long\n");
    return 2;
  }
  err = rg_create(&F, making, 1, wide_n, UINT64_C(1) << log2);
  if (err != 0) {
    fprintf(stderr, "hostile_producer: cannot create %s: %s\n", making, strerror(-err));
    return 1;
  }
  R = &F.rings[0];
  own_identity(F.ext);
  if (rename(making, path) != 0) {
    fprintf(stderr, "hostile_producer: cannot rename %s to %s: %s\n", making, path,
            strerror(errno));
    unlink(making);
    rg_close(&F);
    return 1;
  }
  slot_slice_due = 0;
  slot_cycle_end = 1;
  rg_set_name(&F, slot_slice_due, OCGC_UEV_CAUSE_PREFIX "major_slice_due");
  rg_set_name(&F, slot_cycle_end, OCGC_UEV_CYCLE_END);
  rng_state = now_ns() ^ ((uint64_t)getpid() << 32) ^ UINT64_C(0x9e3779b97f4a7c15);
  honest.heap_words = honest.top_heap_words = 1u << 20;
  honest.heap_chunks = 1;
  rg_write1(&F, 0, OCGC_EV_HEADER(3, 0, OCGC_RT_LIFECYCLE, OCGC_LC_RING_START), stamp(),
            (uint64_t)getpid());
  one_collection();
  if (ready_fd < 0) {
    printf("ready %d\n", (int)getpid()); /* "key value", as the tests read it */
    fflush(stdout);
  } else {
    char line[32];
    int n = snprintf(line, sizeof line, "child %d\n", (int)getpid());
    /* One write a line: the children share stdout. */
    if (write(STDOUT_FILENO, line, (size_t)n) != n || write(ready_fd, "r", 1) != 1) return 1;
    close(ready_fd);
  }
  cur = mode == M_ALL ? M_FLOOD : mode;
  phase_end = now_ns() + ROTATE_MS * UINT64_C(1000000);
  while (!stop_sig) {
    switch (cur) {
    case M_FLOOD: case M_WIDE: flood_for(UINT64_C(5000000)); break;
    case M_SCRIBBLE:
      flood_for(UINT64_C(500000) + rnd() % UINT64_C(5000000));
      if (!stop_sig) scribble_once();
      break;
    case M_TRUNCATE:
      flood_for(UINT64_C(1000000) + rnd() % UINT64_C(10000000));
      if (!stop_sig) truncate_once();
      break;
    case M_ALL: case M_CROWD: break;
    case M_STALL:
      if (!frozen) {
        R = &F.rings[1];
        one_collection();
        __atomic_store_n(&R->er->seq, R->seq + 1, __ATOMIC_RELEASE);
        R = &F.rings[0];
        frozen = 1;
      }
      one_collection();
      sleep_ms(2);
      break;
    case M_IDLE: {
      unsigned t;
      one_collection();
      for (t = 0; t < 10 && !stop_sig; t++) sleep_ms(100);
      break;
    }
    case M_FROZEN:
      if (!freeze_sig) {
        one_collection();
        sleep_ms(20);
        break;
      }
      if (!frozen) {
        struct ocgc_wire_ext_ring *er = R->er;
        struct ocgc_wire_totals *t = F.totals;
        __atomic_store_n(&er->seq, R->seq + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&t->seq, honest.seq + 1, __ATOMIC_RELEASE);
        frozen = 1;
        printf("frozen 1\n");
        fflush(stdout);
      }
      sleep_ms(50);
      break;
    }
    if (mode == M_ALL && now_ns() >= phase_end) {
      cur = cur == M_FLOOD ? M_SCRIBBLE : cur == M_SCRIBBLE ? M_TRUNCATE : M_FLOOD;
      phase_end = now_ns() + ROTATE_MS * UINT64_C(1000000);
    }
  }
  /* Asked to stop: leave nothing behind. */
  unlink(path);
  rg_close(&F);
  return 0;
}

/* crowd:N: N idle producers, forked; "ready N" once each holds events,
 * then until asked to stop (alarm, SIGTERM), then each is stopped and
 * waited for. */
static int crowd(const char *dir, unsigned seconds, unsigned log2)
{
  pid_t *kids = calloc(crowd_n, sizeof *kids);
  unsigned i, made = 0, ready = 0;
  int fds[2], rc = 0;
  if (kids == NULL || pipe(fds) != 0) { perror("hostile_producer"); return 1; }
  fflush(stdout);
  for (i = 0; i < crowd_n && !stop_sig; i++) {
    pid_t k = fork();
    if (k < 0) { perror("hostile_producer: fork"); rc = 1; break; }
    if (k == 0) {
      close(fds[0]);
      /* Ends with its parent, however that one ends (kill -9 too). */
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() == 1) _exit(0);
      alarm(seconds);
      _exit(producer(dir, M_IDLE, log2, fds[1]));
    }
    kids[made++] = k;
  }
  close(fds[1]);
  while (rc == 0 && ready < made && !stop_sig) {
    char b[256];
    ssize_t n = read(fds[0], b, sizeof b);
    if (n > 0) ready += (unsigned)n;
    else if (n == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  if (rc == 0 && ready == made) {
    printf("ready %u\n", ready);
    fflush(stdout);
    while (!stop_sig) sleep_ms(100);
  }
  for (i = 0; i < made; i++) kill(kids[i], SIGTERM);
  for (i = 0; i < made; i++) waitpid(kids[i], NULL, 0);
  free(kids);
  return rc != 0 || ready != made;
}

int main(int argc, char **argv)
{
  struct sigaction sa;
  enum mode mode;
  unsigned seconds = 60, log2 = 16;

  if (argc < 3 || argc > 5 || parse_mode(argv[2], &mode) != 0) {
    fprintf(stderr, "usage: hostile_producer DIR flood|scribble[:N]|truncate|all|frozen|stall|wide:N|crowd:N "
            "[SECONDS [RING_LOG2]]\n");
    return 2;
  }
  if (argc > 3) seconds = (unsigned)strtoul(argv[3], NULL, 10);
  if (argc > 4) log2 = (unsigned)strtoul(argv[4], NULL, 10);
  if (seconds == 0 || seconds > 3600 || log2 < 10 || log2 > 24) {
    fprintf(stderr, "hostile_producer: SECONDS is 1..3600, RING_LOG2 10..24\n");
    return 2;
  }
  /* The default action of SIGALRM ends us whatever we are doing. */
  alarm(seconds);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_freeze;
  sigaction(SIGUSR1, &sa, NULL);
  if (mode == M_CROWD) return crowd(argv[1], seconds, log2);
  return producer(argv[1], mode, log2, -1);
}
