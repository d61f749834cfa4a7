/* test_flight.c - a process's history in seconds and recordings
 * (ocgc/flight.h): the history from synthetic pauses (bucketing, counts as
 * growth, the window sliding, a lying clock), a recording of a real ring
 * (tests/fixtures/ocgc4.13) written and read back equal, still a ring
 * file every reader reads as before, and flight blocks that do not hold
 * together refused (truncated, huge counts, strings without a NUL, random
 * bytes). */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "testutil.h"

#define S UINT64_C(1000000000)
#define NAMES_BYTES ((uint64_t)OCGC_WIRE_USER_EVENTS * OCGC_WIRE_USER_NAME_LEN)

/* ---- the history -------------------------------------------------------------------- */

/* A pause ending at [end] of [dur] ns, whose counts say [minors]
 * collections and [alloc] bytes allocated so far, the heap [heap]. */
static struct ocgc_agg_pause pause_at(uint64_t end, uint64_t dur, int cause, uint64_t minors,
                                      uint64_t alloc, uint64_t heap)
{
  struct ocgc_agg_pause p;
  memset(&p, 0, sizeof p);
  p.pause.end = end;
  p.pause.begin = end - dur;
  p.pause.duration_ns = dur;
  p.pause.collections = 1;
  p.kind = OCGC_KIND_MINOR;
  p.cause = cause;
  p.counts.sz = sizeof p.counts;
  p.counts.collections[OCGC_KIND_MINOR] = minors;
  p.counts.allocated_bytes = alloc;
  p.counts.promoted_bytes = alloc / 10;
  p.counts.heap_bytes = heap;
  p.counts.top_heap_bytes = heap;
  return p;
}

static struct ocgc_flight_hist *hist(unsigned window)
{
  struct ocgc_flight_hist *h = NULL;
  ck_assert_int_eq(ocgc_flight_hist_new(window, &h), 0);
  return h;
}

START_TEST(hist_size_is_fixed)
{
  struct ocgc_flight_hist *h = NULL;
  size_t one = sizeof(struct ocgc_flight_second);
  ck_assert_uint_eq(ocgc_flight_hist_size(0), ocgc_flight_hist_size(OCGC_FLIGHT_WINDOW_S));
  /* about 60 seconds of 216 bytes (a second and its key), and a header */
  ck_assert_uint_ge(ocgc_flight_hist_size(0), 60 * one);
  ck_assert_uint_le(ocgc_flight_hist_size(0), 60 * (one + 8) + 256);
  ck_assert_uint_eq(ocgc_flight_hist_size(OCGC_FLIGHT_MAX_WINDOW_S + 1), 0);
  ck_assert_int_eq(ocgc_flight_hist_new(OCGC_FLIGHT_MAX_WINDOW_S + 1, &h), -EINVAL);
  ck_assert_int_eq(ocgc_flight_hist_new(1, NULL), -EINVAL);
}
END_TEST

START_TEST(hist_buckets_by_end_with_growth)
{
  struct ocgc_flight_hist *h = hist(10);
  struct ocgc_flight_second out[16];
  struct ocgc_agg_pause p;
  unsigned n;
  /* 100.2 s and 100.9 s: one second; 101.5 s: the next */
  p = pause_at(100 * S + 200000000, 1000000, OCGC_CAUSE_MINOR_HEAP_FULL, 10, 1000, 5000);
  ocgc_flight_hist_on_pause(&p, h);
  p = pause_at(100 * S + 900000000, 3000000, OCGC_CAUSE_EXPLICIT, 12, 1500, 6000);
  ocgc_flight_hist_on_pause(&p, h);
  p = pause_at(101 * S + 500000000, 2000000, 999 /* no valid cause */, 15, 2500, 4000);
  ocgc_flight_hist_on_pause(&p, h);
  n = ocgc_flight_hist_seconds(h, out, 16);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(out[0].t, 100 * S);
  ck_assert_uint_eq(out[0].pauses, 2);
  ck_assert_uint_eq(out[0].pause_ns, 4000000);
  ck_assert_uint_eq(out[0].max_ns, 3000000);
  /* the first pause's counts grow from zero, the second's from the first's */
  ck_assert_uint_eq(out[0].coll[OCGC_KIND_MINOR], 12);
  ck_assert_uint_eq(out[0].alloc, 1500);
  ck_assert_uint_eq(out[0].promo, 150);
  ck_assert_uint_eq(out[0].heap, 6000);
  ck_assert_uint_eq(out[0].cause[OCGC_CAUSE_MINOR_HEAP_FULL], 1);
  ck_assert_uint_eq(out[0].cause[OCGC_CAUSE_EXPLICIT], 1);
  ck_assert_uint_eq(out[1].t, 101 * S);
  ck_assert_uint_eq(out[1].pauses, 1);
  ck_assert_uint_eq(out[1].coll[OCGC_KIND_MINOR], 3);
  ck_assert_uint_eq(out[1].alloc, 1000);
  ck_assert_uint_eq(out[1].heap, 4000);
  {
    uint32_t sum = 0;
    unsigned c;
    for (c = 0; c < OCGC_CAUSE_COUNT; c++) sum += out[1].cause[c];
    ck_assert_uint_eq(sum, 0);
  }
  /* max bounds what is given */
  ck_assert_uint_eq(ocgc_flight_hist_seconds(h, out, 1), 1);
  ck_assert_uint_eq(out[0].t, 100 * S);
  ocgc_flight_hist_free(h);
}
END_TEST

START_TEST(hist_loss_and_samples)
{
  struct ocgc_flight_hist *h = hist(10);
  struct ocgc_flight_second out[16];
  struct ocgc_process_figures f;
  struct ocgc_memcg m;
  memset(&f, 0, sizeof f);
  memset(&m, 0, sizeof m);
  ocgc_flight_hist_on_lost(0, 7, 1, 200 * S + 5, h);
  ocgc_flight_hist_on_lost(0, 3, 1, 200 * S + 9, h);
  f.rss_bytes = 1 << 20;
  ocgc_flight_hist_sample(h, 200 * S + 10, &f, NULL);
  f.rss_bytes = 2 << 20;
  m.known = 1;
  m.usage = 3 << 20;
  ocgc_flight_hist_sample(h, 200 * S + 20, &f, &m);
  m.known = 0;
  m.usage = 99;
  ocgc_flight_hist_sample(h, 201 * S, NULL, &m); /* nothing known: nothing */
  ck_assert_uint_eq(ocgc_flight_hist_seconds(h, out, 16), 1);
  ck_assert_uint_eq(out[0].lost, 10);
  ck_assert_uint_eq(out[0].rss, 2 << 20);
  ck_assert_uint_eq(out[0].cg_usage, 3 << 20);
  ocgc_flight_hist_free(h);
}
END_TEST

START_TEST(hist_window_slides)
{
  struct ocgc_flight_hist *h = hist(5);
  struct ocgc_flight_second out[16];
  struct ocgc_agg_pause p;
  unsigned i, n;
  for (i = 0; i < 8; i++) { /* 100 .. 107 */
    p = pause_at((100 + i) * S + 1000, 1000, OCGC_CAUSE_MINOR_HEAP_FULL, i + 1, 0, 0);
    ocgc_flight_hist_on_pause(&p, h);
  }
  n = ocgc_flight_hist_seconds(h, out, 16);
  ck_assert_uint_eq(n, 5);
  for (i = 0; i < n; i++) {
    ck_assert_uint_eq(out[i].t, (103 + i) * S);
    ck_assert_uint_eq(out[i].pauses, 1);
  }
  /* a jump past the window: only the new second stays */
  p = pause_at(150 * S, 1000, OCGC_CAUSE_MINOR_HEAP_FULL, 20, 0, 0);
  ocgc_flight_hist_on_pause(&p, h);
  n = ocgc_flight_hist_seconds(h, out, 16);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(out[0].t, 150 * S);
  ck_assert_uint_eq(out[0].coll[OCGC_KIND_MINOR], 12);
  /* out of order within the window: into its own second */
  p = pause_at(148 * S + 5, 1000, OCGC_CAUSE_MINOR_HEAP_FULL, 21, 0, 0);
  ocgc_flight_hist_on_pause(&p, h);
  n = ocgc_flight_hist_seconds(h, out, 16);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(out[0].t, 148 * S);
  ck_assert_uint_eq(out[1].t, 150 * S);
  /* older than the window: dropped */
  p = pause_at(140 * S, 1000, OCGC_CAUSE_MINOR_HEAP_FULL, 22, 0, 0);
  ocgc_flight_hist_on_pause(&p, h);
  ck_assert_uint_eq(ocgc_flight_hist_seconds(h, out, 16), 2);
  ocgc_flight_hist_free(h);
}
END_TEST

START_TEST(hist_lying_clock)
{
  struct ocgc_flight_hist *h = hist(4);
  struct ocgc_flight_second out[16];
  struct ocgc_agg_pause p;
  uint64_t x = UINT64_C(0x9e3779b97f4a7c15);
  unsigned i, n, k;
  p = pause_at(300 * S, 1000, OCGC_CAUSE_MINOR_HEAP_FULL, 1, 0, 0);
  ocgc_flight_hist_on_pause(&p, h);
  /* far in the future (no producer on this host writes there): dropped,
   * and the history it would have wiped is kept */
  p = pause_at(UINT64_MAX, 1000, OCGC_CAUSE_MINOR_HEAP_FULL, 2, 0, 0);
  ocgc_flight_hist_on_pause(&p, h);
  ocgc_flight_hist_on_lost(0, 5, 1, UINT64_MAX - 3, h);
  n = ocgc_flight_hist_seconds(h, out, 16);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(out[0].t, 300 * S);
  /* any times at all: never more than the window, always in order */
  for (i = 0; i < 20000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p = pause_at((x % 4 == 0 ? x : 300 * S + x % (10 * S)) | 1000, x % 5000, (int)(x % 40) - 5,
                 x % 1000, x, x % 7);
    ocgc_flight_hist_on_pause(&p, h);
    if (x % 3 == 0) ocgc_flight_hist_on_lost(0, x, 0, x >> (x % 64), h);
    n = ocgc_flight_hist_seconds(h, out, 16);
    TU_CHECK(n <= 4, "%u seconds in a window of 4", n);
    for (k = 1; k < n; k++) TU_CHECK(out[k - 1].t < out[k].t, "seconds out of order");
  }
  ocgc_flight_hist_free(h);
}
END_TEST

/* ---- recordings ---------------------------------------------------------------------- */

static char fixture[4096], rec[4096];

/* The 4.13 fixture unpacked into the scratch folder. */
static void unpack(void)
{
  char xz[4096], name[64];
  const char *src = tu_srcdir();
  ck_assert_msg(src != NULL, "OCGC_SRCDIR is not set");
  ck_assert_msg(tu_scratch != NULL, "no scratch folder");
  tu_path(xz, sizeof xz, src, "tests/fixtures/ocgc4.13/22607.events.xz");
  snprintf(name, sizeof name, "fix-%d.events", (int)getpid());
  tu_path(fixture, sizeof fixture, tu_scratch, name);
  ck_assert_int_eq(tu_unxz(xz, fixture), 0);
  snprintf(name, sizeof name, "rec-%d.events", (int)getpid());
  tu_path(rec, sizeof rec, tu_scratch, name);
}

static struct ocgc_source *open_src(const char *path)
{
  struct ocgc_source *s = NULL;
  int err = ocgc_source_open_path(path, NULL, &s);
  ck_assert_msg(err == 0, "open %s: %s", path, ocgc_strerror(err));
  return s;
}

static void meta_fill(struct ocgc_flight_meta *m)
{
  memset(m, 0, sizeof *m);
  m->sz = sizeof *m;
  m->reason = OCGC_FLIGHT_DEATH;
  snprintf(m->detail, sizeof m->detail, "killed by SIGKILL");
  m->exit.known = 1;
  m->exit.how = OCGC_EXIT_OOM;
  m->exit.code = -1;
  m->exit.signal = 9;
  m->exit.oom_killed = 1;
  m->exit.gone_ns = 12345;
  m->pid = 22607;
  m->start_ticks = 4242;
  snprintf(m->program, sizeof m->program, "workload");
  memset(m->exe, 'x', sizeof m->exe); /* cut: its last byte becomes the NUL */
  snprintf(m->build_id, sizeof m->build_id, "0123456789abcdef0123456789abcdef01234567");
  m->rss_bytes = 77 << 20;
  m->memcg.known = 1;
  m->memcg.v2 = 1;
  m->memcg.usage = 100 << 20;
  m->memcg.limit = 128 << 20;
  m->memcg.peak = 120 << 20;
  m->memcg.oom_kills = 1;
  snprintf(m->memcg.path, sizeof m->memcg.path, "/system.slice/x.service");
  m->recorded_ns = UINT64_C(1700000000000000000);
  m->window_s = 60;
}

/* A history of a few seconds with something in each field. */
static struct ocgc_flight_hist *some_history(void)
{
  struct ocgc_flight_hist *h = hist(60);
  struct ocgc_process_figures f;
  struct ocgc_memcg m;
  unsigned i;
  memset(&f, 0, sizeof f);
  memset(&m, 0, sizeof m);
  for (i = 0; i < 5; i++) {
    struct ocgc_agg_pause p = pause_at((500 + i) * S + 7, 1000 + i, (int)i, 3 * (i + 1),
                                       1000 * (i + 1), 4096 * (i + 1));
    ocgc_flight_hist_on_pause(&p, h);
    f.rss_bytes = (i + 1) << 20;
    m.known = 1;
    m.usage = (i + 2) << 20;
    ocgc_flight_hist_sample(h, (500 + i) * S + 9, &f, &m);
  }
  ocgc_flight_hist_on_lost(0, 11, 1, 502 * S, h);
  return h;
}

static void write_rec(const char *path, struct ocgc_source *src, struct ocgc_flight_hist *h,
                      const struct ocgc_flight_meta *m)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), err;
  ck_assert_int_ge(fd, 0);
  err = ocgc_flight_write(fd, src, h, m);
  ck_assert_msg(err == 0, "ocgc_flight_write: %s", ocgc_strerror(err));
  ck_assert_int_eq(close(fd), 0);
}

/* The counters and pauses an aggregator finds in a whole file. */
static void drain(struct ocgc_source *s, struct ocgc_counters *c, uint64_t *pauses)
{
  struct ocgc_agg *agg = NULL;
  struct ocgc_snapshot *snap = NULL;
  ck_assert_int_eq(ocgc_agg_new(s, NULL, &agg), 0);
  ck_assert_int_eq(ocgc_agg_drain(agg, NULL, NULL), 0);
  ck_assert_int_eq(ocgc_agg_finish(agg), 0);
  ck_assert_int_eq(ocgc_agg_snapshot(agg, &snap), 0);
  memset(c, 0, sizeof *c);
  c->sz = sizeof *c;
  ocgc_snapshot_counters(snap, c);
  *pauses = ocgc_hist_count(ocgc_snapshot_pauses(snap));
  ocgc_snapshot_free(snap);
  ocgc_agg_free(agg);
}

START_TEST(recording_reads_back_equal)
{
  struct ocgc_source *src, *r;
  struct ocgc_flight_hist *h;
  struct ocgc_flight_meta m, got;
  struct ocgc_flight_second want[64], back[64];
  struct ocgc_totals t1 = OCGC_OPTS_INIT(struct ocgc_totals), t2 = OCGC_OPTS_INIT(struct ocgc_totals);
  struct ocgc_counters c1, c2;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_source_info finfo = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct stat st;
  uint64_t p1, p2;
  unsigned n, i;
  unpack();
  src = open_src(fixture);
  ck_assert_int_eq(ocgc_source_info(src, &finfo), 0);
  /* a plain ring file is no recording */
  memset(&got, 0, sizeof got);
  got.sz = sizeof got;
  ck_assert_int_eq(ocgc_flight_read(src, &got), -ENOENT);
  ck_assert_uint_eq(ocgc_flight_read_seconds(src, back, 64), 0);
  h = some_history();
  meta_fill(&m);
  write_rec(rec, src, h, &m);

  r = open_src(rec); /* still a ring file */
  ck_assert_int_eq(ocgc_source_info(r, &info), 0);
  ck_assert_int_eq(info.has_ext, 1);
  ck_assert_int_eq(ocgc_flight_read(r, &got), 0);
  m.exe[sizeof m.exe - 1] = '\0'; /* cut as written */
  ck_assert_int_eq(got.reason, OCGC_FLIGHT_DEATH);
  ck_assert_str_eq(got.detail, m.detail);
  ck_assert_int_eq(got.exit.known, 1);
  ck_assert_int_eq(got.exit.how, OCGC_EXIT_OOM);
  ck_assert_int_eq(got.exit.code, -1);
  ck_assert_int_eq(got.exit.signal, 9);
  ck_assert_int_eq(got.exit.oom_killed, 1);
  ck_assert_int_eq(got.exit.core_dumped, 0);
  ck_assert_uint_eq(got.exit.gone_ns, 12345);
  ck_assert_int_eq(got.pid, 22607);
  ck_assert_uint_eq(got.start_ticks, 4242);
  ck_assert_str_eq(got.program, "workload");
  ck_assert_str_eq(got.exe, m.exe);
  ck_assert_str_eq(got.build_id, m.build_id);
  ck_assert_uint_eq(got.rss_bytes, 77 << 20);
  ck_assert_int_eq(got.memcg.known, 1);
  ck_assert_int_eq(got.memcg.v2, 1);
  ck_assert_uint_eq(got.memcg.usage, 100 << 20);
  ck_assert_uint_eq(got.memcg.limit, 128 << 20);
  ck_assert_uint_eq(got.memcg.peak, 120 << 20);
  ck_assert_uint_eq(got.memcg.oom_kills, 1);
  ck_assert_str_eq(got.memcg.path, m.memcg.path);
  ck_assert_uint_eq(got.recorded_ns, m.recorded_ns);
  ck_assert_uint_eq(got.window_s, 60);
  n = ocgc_flight_hist_seconds(h, want, 64);
  ck_assert_uint_eq(n, 5);
  ck_assert_uint_eq(ocgc_flight_read_seconds(r, back, 64), n);
  for (i = 0; i < n; i++)
    ck_assert_msg(memcmp(&want[i], &back[i], sizeof want[i]) == 0, "second %u differs", i);
  ck_assert_uint_eq(ocgc_flight_read_seconds(r, back, 2), 2);
  /* the ring reads as the original: totals and what the events say */
  ck_assert_int_eq(ocgc_source_totals(src, &t1), 0);
  ck_assert_int_eq(ocgc_source_totals(r, &t2), 0);
  ck_assert_msg(memcmp(&t1, &t2, sizeof t1) == 0, "totals differ");
  drain(src, &c1, &p1);
  drain(r, &c2, &p2);
  ck_assert_uint_gt(c1.events_seen, 0);
  ck_assert_uint_eq(c1.events_seen, c2.events_seen);
  ck_assert_uint_eq(c1.allocated_bytes, c2.allocated_bytes);
  ck_assert_uint_eq(c1.collections[OCGC_KIND_MINOR], c2.collections[OCGC_KIND_MINOR]);
  ck_assert_uint_eq(p1, p2);
  /* sparse: the fixture's holes stay holes; the block right after the names */
  ck_assert_int_eq(stat(rec, &st), 0);
  ck_assert_uint_eq((uint64_t)st.st_size, finfo.file_size + sizeof(struct ocgc_wire_flight) +
                                               n * sizeof(struct ocgc_wire_flight_second));
  ck_assert_uint_lt((uint64_t)st.st_blocks * 512, (uint64_t)st.st_size / 2);
  /* a recording of a recording: one block, the newest */
  {
    char rec2[4200];
    struct ocgc_source *r2;
    snprintf(rec2, sizeof rec2, "%s.2", rec);
    m.reason = OCGC_FLIGHT_DEMAND;
    write_rec(rec2, r, NULL, &m);
    r2 = open_src(rec2);
    ck_assert_int_eq(ocgc_flight_read(r2, &got), 0);
    ck_assert_int_eq(got.reason, OCGC_FLIGHT_DEMAND);
    ck_assert_uint_eq(ocgc_flight_read_seconds(r2, back, 64), 0);
    ck_assert_int_eq(stat(rec2, &st), 0);
    ck_assert_uint_eq((uint64_t)st.st_size, finfo.file_size + sizeof(struct ocgc_wire_flight));
    ocgc_source_close(r2);
    unlink(rec2);
  }
  ocgc_source_close(r);
  ocgc_source_close(src);
  ocgc_flight_hist_free(h);
  unlink(rec);
  unlink(fixture);
}
END_TEST

START_TEST(reason_names)
{
  ck_assert_str_eq(ocgc_flight_reason_name(OCGC_FLIGHT_DEATH), "death");
  ck_assert_str_eq(ocgc_flight_reason_name(OCGC_FLIGHT_PAUSE), "pause");
  ck_assert_str_eq(ocgc_flight_reason_name(OCGC_FLIGHT_HEAP_GROWTH), "heap_growth");
  ck_assert_str_eq(ocgc_flight_reason_name(OCGC_FLIGHT_MEMORY), "memory");
  ck_assert_str_eq(ocgc_flight_reason_name(OCGC_FLIGHT_DEMAND), "demand");
  ck_assert_str_eq(ocgc_flight_reason_name(0), "unknown");
  ck_assert_str_eq(ocgc_flight_reason_name(-7), "unknown");
}
END_TEST

/* ---- blocks that do not hold together ----------------------------------------------------- */

/* The file at [path], [n] bytes of it, into memory (free()). */
static unsigned char *slurp(const char *path, size_t *n)
{
  struct stat st;
  unsigned char *b;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(fstat(fd, &st), 0);
  b = malloc((size_t)st.st_size);
  ck_assert_ptr_nonnull(b);
  ck_assert_int_eq(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
  close(fd);
  *n = (size_t)st.st_size;
  return b;
}

static void spit(const char *path, const unsigned char *b, size_t n)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
  close(fd);
}

/* What the reader says of the recording [b] of [n] bytes: its error, and
 * with 0, the strings it gave are NUL-ended. */
static int verdict(const char *path, const unsigned char *b, size_t n)
{
  struct ocgc_source *s = NULL;
  struct ocgc_flight_meta m;
  struct ocgc_flight_second sec[8];
  int err;
  spit(path, b, n);
  err = ocgc_source_open_path(path, NULL, &s);
  ck_assert_msg(err == 0, "the ring no longer opens: %s", ocgc_strerror(err));
  memset(&m, 0, sizeof m);
  m.sz = sizeof m;
  err = ocgc_flight_read(s, &m);
  if (err == 0) {
    TU_CHECK(memchr(m.exe, 0, sizeof m.exe) && memchr(m.detail, 0, sizeof m.detail) &&
                 memchr(m.program, 0, sizeof m.program) &&
                 memchr(m.build_id, 0, sizeof m.build_id) &&
                 memchr(m.memcg.path, 0, sizeof m.memcg.path),
             "a string without its NUL");
  } else {
    TU_CHECK(ocgc_flight_read_seconds(s, sec, 8) == 0, "seconds of a refused block");
  }
  ocgc_source_close(s);
  return err;
}

START_TEST(corrupt_blocks_refused)
{
  struct ocgc_source *src;
  struct ocgc_flight_hist *h;
  struct ocgc_flight_meta m;
  struct ocgc_wire_flight w;
  unsigned char *good, *b;
  size_t n;
  uint64_t at, x = 88172645463325252u;
  char bad[4200];
  unsigned i, accepted = 0, refused = 0;
  unpack();
  src = open_src(fixture);
  h = some_history();
  meta_fill(&m);
  write_rec(rec, src, h, &m);
  ocgc_source_close(src);
  ocgc_flight_hist_free(h);
  good = slurp(rec, &n);
  b = malloc(n);
  ck_assert_ptr_nonnull(b);
  {
    struct ocgc_wire_header hd;
    memcpy(&hd, good, sizeof hd);
    at = hd.custom_events_offset + NAMES_BYTES;
  }
  memcpy(&w, good + at, sizeof w);
  ck_assert_uint_eq(w.magic, OCGC_FLIGHT_MAGIC);
  snprintf(bad, sizeof bad, "%s.bad", rec);
  ck_assert_int_eq(verdict(bad, good, n), 0);

#define MUTATE(field, value)                                         \
  do {                                                               \
    struct ocgc_wire_flight v = w;                                   \
    memcpy(b, good, n);                                              \
    v.field = (value);                                               \
    memcpy(b + at, &v, sizeof v);                                    \
    ck_assert_msg(verdict(bad, b, n) == OCGC_E_CORRUPT, #field " = " #value " accepted"); \
  } while (0)
  MUTATE(version, 0);
  MUTATE(nseconds, UINT64_C(1) << 40);
  MUTATE(nseconds, OCGC_FLIGHT_MAX_SECONDS + 1);
  MUTATE(nseconds, w.nseconds + 1); /* past the file */
  MUTATE(size, w.size + 8);
  MUTATE(size, UINT64_MAX);
  MUTATE(header_size, 8);
  MUTATE(header_size, UINT64_MAX - 7);
  MUTATE(second_size, 0);
  MUTATE(second_size, 255);
  MUTATE(second_size, UINT64_C(1) << 62);
#undef MUTATE
  /* strings without their NUL */
  {
    static const size_t offs[] = {offsetof(struct ocgc_wire_flight, detail),
                                  offsetof(struct ocgc_wire_flight, program),
                                  offsetof(struct ocgc_wire_flight, exe),
                                  offsetof(struct ocgc_wire_flight, build_id),
                                  offsetof(struct ocgc_wire_flight, memcg_path)};
    static const size_t lens[] = {128, 80, 256, 64, 256};
    for (i = 0; i < 5; i++) {
      memcpy(b, good, n);
      memset(b + at + offs[i], 'A', lens[i]);
      ck_assert_msg(verdict(bad, b, n) == OCGC_E_CORRUPT, "string %u without a NUL", i);
    }
  }
  /* truncated: inside the seconds, inside the header, the magic cut */
  ck_assert_int_eq(verdict(bad, good, n - 1), OCGC_E_CORRUPT);
  ck_assert_int_eq(verdict(bad, good, (size_t)at + sizeof w + 8), OCGC_E_CORRUPT);
  ck_assert_int_eq(verdict(bad, good, (size_t)at + 500), OCGC_E_CORRUPT);
  ck_assert_int_eq(verdict(bad, good, (size_t)at + 8), OCGC_E_CORRUPT);
  ck_assert_int_eq(verdict(bad, good, (size_t)at + 7), -ENOENT);
  ck_assert_int_eq(verdict(bad, good, (size_t)at), -ENOENT);
  /* random bytes over the header: refused or read whole, never more */
  for (i = 0; i < 400; i++) {
    unsigned k, flips = 1 + (unsigned)(x % 16);
    int err;
    memcpy(b, good, n);
    for (k = 0; k < flips; k++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b[at + 8 + x % (sizeof w - 8)] = (unsigned char)(x >> 56);
    }
    err = verdict(bad, b, n);
    TU_CHECK(err == 0 || err == OCGC_E_CORRUPT, "a flipped block: %d", err);
    if (err == 0) accepted++;
    else refused++;
  }
  ck_assert_uint_gt(refused, 0);
  ck_assert_uint_gt(accepted, 0);
  unlink(bad);
  unlink(rec);
  unlink(fixture);
  free(b);
  free(good);
}
END_TEST

START_TEST(ident_of_ourselves)
{
  struct ocgc_flight_meta m;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ck_assert_int_gt(n, 0);
  self[n] = '\0';
  memset(&m, 0, sizeof m);
  m.sz = sizeof m;
  ck_assert_int_eq(ocgc_flight_ident((int)getpid(), &m), 0);
  ck_assert_str_eq(m.exe, self);
  /* built by the toolchain with --build-id (Debian's default): 40 hex digits */
  ck_assert_msg(strlen(m.build_id) == 40, "build id '%s'", m.build_id);
  ck_assert_uint_eq(strspn(m.build_id, "0123456789abcdef"), 40);
  m.start_ticks = 1; /* not ours: the process is not that one */
  ck_assert_int_eq(ocgc_flight_ident((int)getpid(), &m), OCGC_E_STALE);
  ck_assert_int_eq(ocgc_flight_ident(0, &m), -EINVAL);
}
END_TEST

static Suite *flight_suite(void)
{
  Suite *s = suite_create("flight");
  TCase *tc = tcase_create("hist");
  tcase_add_test(tc, hist_size_is_fixed);
  tcase_add_test(tc, hist_buckets_by_end_with_growth);
  tcase_add_test(tc, hist_loss_and_samples);
  tcase_add_test(tc, hist_window_slides);
  tcase_add_test(tc, hist_lying_clock);
  tcase_add_test(tc, reason_names);
  suite_add_tcase(s, tc);
  tc = tcase_create("recording");
  tcase_add_unchecked_fixture(tc, tu_scratch_setup, tu_scratch_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, recording_reads_back_equal);
  tcase_add_test(tc, corrupt_blocks_refused);
  tcase_add_test(tc, ident_of_ourselves);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(flight_suite);
