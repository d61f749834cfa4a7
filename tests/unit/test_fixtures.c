/* test_fixtures.c - libocgc on real ring files written by stock OCaml 5.2.0.
 *
 * The files (tests/fixtures/ocaml5.2/, see its README.md) are unpacked once
 * per test case into a private temporary folder (they are sparse, 68 and
 * 269 MB apparent size; never unpacked into the source tree) and read from
 * the oldest event.  Every number asserted is a fact of the README table,
 * which was established independently of libocgc. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "testutil.h"

static const char *const files[] = {"full-3695", "2021", "pt-3447", "instr-3452"};
#define NFILES (sizeof files / sizeof files[0])

static char *dir;            /* unpacked files, made by unpack() */
static char unpack_error[4200];

/* Unchecked fixture: runs once, in the runner, before the tests fork. */
static void unpack(void)
{
  const char *src = tu_srcdir();
  unsigned i;
  unpack_error[0] = '\0';
  if (src == NULL) {
    snprintf(unpack_error, sizeof unpack_error, "OCGC_SRCDIR is not set (make check sets it)");
    return;
  }
  dir = tu_mkdtemp();
  if (dir == NULL) {
    snprintf(unpack_error, sizeof unpack_error, "mkdtemp: %s", strerror(errno));
    return;
  }
  for (i = 0; i < NFILES; i++) {
    char xz[4096], out[4096], name[64];
    snprintf(name, sizeof name, "tests/fixtures/ocaml5.2/%s.events.xz", files[i]);
    tu_path(xz, sizeof xz, src, name);
    snprintf(name, sizeof name, "%s.events", files[i]);
    tu_path(out, sizeof out, dir, name);
    if (tu_unxz(xz, out) != 0) {
      snprintf(unpack_error, sizeof unpack_error, "cannot unpack %s with xz -dc", xz);
      return;
    }
  }
}

static void cleanup(void)
{
  tu_rmtree(dir);
  free(dir);
  dir = NULL;
}

static double absdiff(double a, double b)
{
  return a > b ? a - b : b - a;
}

/* ---- reading a whole file ------------------------------------------------------------ */

struct facts {
  uint64_t events;
  uint64_t begins[64], ends[64];
  uint64_t counters[32], counter_sum[32];
  uint64_t lifecycle[8], lifecycle_value[8];
  uint64_t allocs, alloc_bad_len, other;
  uint64_t rings_used;            /* bit mask of rings with events (first 64) */
  uint64_t last_ts, ts_backwards;
  /* MINOR spans, paired begin -> end */
  uint64_t minor_open, minor_n, minor_sum, minor_max, minor_unpaired;
  uint64_t minor_kind_begins, slice_kind_begins;
  uint64_t causes[OCGC_CAUSE_COUNT];
  struct ocgc_source *src;
};

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct facts *f = ctx;
  int begin = -1, kind;
  f->events++;
  if (ev->ring < 64) f->rings_used |= UINT64_C(1) << ev->ring;
  if (ev->timestamp < f->last_ts) f->ts_backwards++;
  f->last_ts = ev->timestamp;
  if (ev->user) {
    f->other++;
    return 0;
  }
  switch (ev->type) {
  case OCGC_RT_BEGIN:
  case OCGC_RT_END:
    if (ev->id >= 64) {
      f->other++;
      break;
    }
    if (ev->type == OCGC_RT_BEGIN) f->begins[ev->id]++;
    else f->ends[ev->id]++;
    if (ev->id == OCGC_PH_MINOR) {
      if (ev->type == OCGC_RT_BEGIN) {
        if (f->minor_open) f->minor_unpaired++;
        f->minor_open = ev->timestamp;
      } else if (f->minor_open) {
        uint64_t d = ev->timestamp - f->minor_open;
        f->minor_n++;
        f->minor_sum += d;
        if (d > f->minor_max) f->minor_max = d;
        f->minor_open = 0;
      } else {
        f->minor_unpaired++;
      }
    }
    kind = ocgc_event_kind(f->src, ev, &begin);
    if (kind == OCGC_KIND_MINOR && begin == 1) f->minor_kind_begins++;
    if (kind == OCGC_KIND_MAJOR_SLICE && begin == 1) f->slice_kind_begins++;
    break;
  case OCGC_RT_COUNTER:
    if (ev->id < 32) {
      int c = ocgc_event_cause(f->src, ev);
      f->counters[ev->id]++;
      f->counter_sum[ev->id] += ev->value;
      if (c >= 0 && c < OCGC_CAUSE_COUNT) f->causes[c]++;
    } else {
      f->other++;
    }
    break;
  case OCGC_RT_LIFECYCLE:
    if (ev->id < 8) {
      f->lifecycle[ev->id]++;
      f->lifecycle_value[ev->id] = ev->value;
    } else {
      f->other++;
    }
    break;
  case OCGC_RT_ALLOC:
    f->allocs++;
    if (ev->payload_words != 20) f->alloc_bad_len++;
    break;
  default:
    f->other++;
    break;
  }
  return 0;
}

static void fixture_path(char *buf, size_t n, const char *name)
{
  char file[64];
  ck_assert_msg(unpack_error[0] == '\0', "%s", unpack_error);
  snprintf(file, sizeof file, "%s.events", name);
  tu_path(buf, n, dir, file);
}

/* Read every event of [name] from the oldest; fill *f and *st. */
static void read_all(const char *name, struct facts *f, struct ocgc_cursor_stats *st,
                     struct ocgc_source_info *info)
{
  char path[4096];
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c;
  int64_t n, total = 0;
  int r;

  fixture_path(path, sizeof path, name);
  memset(f, 0, sizeof *f);
  r = ocgc_source_open_path(path, NULL, &f->src);
  ck_assert_msg(r == 0, "open %s: %s", path, ocgc_strerror(r));
  ck_assert_int_eq(ocgc_source_info(f->src, info), 0);
  o.on_event = on_event;
  o.ctx = f;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_cursor_new(f->src, &o, &c), 0);
  while ((n = ocgc_cursor_poll(c, 0)) > 0) total += n;
  ck_assert_msg(n == 0, "poll %s: %s", name, ocgc_strerror((int)n));
  ck_assert_uint_eq((uint64_t)total, f->events);
  ocgc_cursor_stats(c, st);
  ocgc_cursor_free(c);
  ocgc_source_close(f->src);
  f->src = NULL;
}

/* Ring 0's (head, tail), read straight from the file. */
static void ring0_head_tail(const char *name, uint64_t *head, uint64_t *tail)
{
  char path[4096];
  uint64_t hdr[8], ht[2];
  int fd;
  fixture_path(path, sizeof path, name);
  fd = open(path, O_RDONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(pread(fd, hdr, sizeof hdr, 0), (ssize_t)sizeof hdr);
  ck_assert_int_eq(pread(fd, ht, sizeof ht, (off_t)hdr[5]), (ssize_t)sizeof ht);
  close(fd);
  *head = ht[0];
  *tail = ht[1];
}

/* What every stock 5.2 file says about itself. */
static void check_stock_info(const struct ocgc_source_info *info, uint64_t ring_words)
{
  ck_assert_int_eq(info->has_ext, 0);
  ck_assert_uint_eq(info->max_domains, 128);
  ck_assert_uint_eq(info->ring_words, ring_words);
  ck_assert_uint_eq(info->file_size, 10304 + 128 * ring_words * 8 + 8192 * 128);
  ck_assert_int_eq(info->ids, OCGC_IDS_52);
  ck_assert_uint_eq(info->pid, 0);
  ck_assert_uint_eq(info->state, 0);
}

static void check_stock_header(const char *name)
{
  char path[4096];
  uint64_t hdr[8];
  int fd;
  fixture_path(path, sizeof path, name);
  fd = open(path, O_RDONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(pread(fd, hdr, sizeof hdr, 0), (ssize_t)sizeof hdr);
  close(fd);
  ck_assert_uint_eq(hdr[0], 1);
  ck_assert_uint_eq(hdr[1], 128);
  ck_assert_uint_eq(hdr[2], 80);
  ck_assert_uint_eq(hdr[5], 64);
  ck_assert_uint_eq(hdr[6], 10304);
}

/* ---- the facts ------------------------------------------------------------------------------ */

/* gcdemo.ml 17000, ring e=18, nothing lost. */
START_TEST(full_3695)
{
  struct facts f;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  uint64_t head, tail;
  double mean_us;

  check_stock_header("full-3695");
  ring0_head_tail("full-3695", &head, &tail);
  ck_assert_uint_eq(head, 0);
  ck_assert_uint_eq(tail, 198577);
  read_all("full-3695", &f, &st, &info);
  check_stock_info(&info, 1u << 18);
  ck_assert_uint_eq(f.events, 95443);
  ck_assert_uint_eq(st.seen, 95443);
  ck_assert_uint_eq(st.lost, 0);
  ck_assert_uint_eq(st.lost_words, 0);
  ck_assert_uint_eq(st.skipped, 0);
  ck_assert_int_eq(st.lost_exact, 0);
  ck_assert_uint_eq(f.rings_used, 1);   /* one domain */
  ck_assert_uint_eq(f.ts_backwards, 0);
  ck_assert_uint_eq(f.begins[OCGC_PH_MINOR], 2963);
  ck_assert_uint_eq(f.ends[OCGC_PH_MINOR], 2963);
  ck_assert_uint_eq(f.begins[OCGC_PH_MAJOR_SLICE], 2872);
  ck_assert_uint_eq(f.begins[OCGC_PH_EXPLICIT_GC_FULL_MAJOR], 34);
  ck_assert_uint_eq(f.counter_sum[OCGC_CT_MINOR_ALLOCATED], UINT64_C(5624962264));
  ck_assert_uint_eq(f.counter_sum[OCGC_CT_MINOR_PROMOTED], UINT64_C(2362668512));
  ck_assert_uint_eq(f.lifecycle[OCGC_LC_RING_START], 1);
  ck_assert_uint_eq(f.lifecycle[OCGC_LC_RING_STOP], 1);
  ck_assert_uint_eq(f.lifecycle_value[OCGC_LC_RING_START], 3695); /* the pid */
  /* MINOR spans, paired here: mean 403.8 us, max 1191.6 us */
  ck_assert_uint_eq(f.minor_n, 2963);
  ck_assert_uint_eq(f.minor_unpaired, 0);
  mean_us = (double)f.minor_sum / (double)f.minor_n / 1000.0;
  ck_assert_msg(absdiff(mean_us, 403.8) < 0.05, "mean MINOR %.3f us", mean_us);
  ck_assert_msg(absdiff((double)f.minor_max / 1000.0, 1191.6) < 0.05, "max MINOR %.3f us",
                (double)f.minor_max / 1000.0);
  /* classification agrees with the raw ids */
  ck_assert_uint_eq(f.minor_kind_begins, 2963);
  ck_assert_uint_eq(f.slice_kind_begins, 2872);
  ck_assert_uint_eq(f.other, 0);
}
END_TEST

/* gcdemo.ml 17000, ring e=16: wrapped, only the last 65,534 words left. */
START_TEST(wrapped_2021)
{
  struct facts f;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  uint64_t head, tail;

  check_stock_header("2021");
  ring0_head_tail("2021", &head, &tail);
  ck_assert_uint_eq(head, 133046);
  ck_assert_uint_eq(tail, 198580);
  ck_assert_uint_eq(tail - head, 65534);
  read_all("2021", &f, &st, &info);
  check_stock_info(&info, 1u << 16);
  ck_assert_uint_eq(f.events, 31497);
  ck_assert_uint_eq(st.seen, 31497);
  ck_assert_uint_eq(st.lost, 0);     /* the cursor starts at head */
  ck_assert_uint_eq(st.skipped, 0);
  ck_assert_uint_eq(st.lost_words, 0);
  ck_assert_uint_eq(f.ts_backwards, 0);
  ck_assert_uint_eq(f.lifecycle[OCGC_LC_RING_START], 0); /* overwritten */
  ck_assert_uint_eq(f.lifecycle[OCGC_LC_RING_STOP], 1);
  ck_assert_uint_eq(f.other, 0);
}
END_TEST

/* pausetest.ml: Runtime_events pause/resume. */
START_TEST(pause_3447)
{
  struct facts f;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);

  check_stock_header("pt-3447");
  read_all("pt-3447", &f, &st, &info);
  check_stock_info(&info, 1u << 16);
  ck_assert_uint_eq(f.events, 193);
  ck_assert_uint_eq(f.lifecycle[OCGC_LC_RING_RESUME], 3);
  ck_assert_uint_eq(f.lifecycle[OCGC_LC_RING_PAUSE], 0); /* 5.2 never writes it */
  ck_assert_uint_eq(f.lifecycle[OCGC_LC_RING_START], 1);
  ck_assert_uint_eq(f.lifecycle_value[OCGC_LC_RING_START], 3447);
  ck_assert_uint_eq(f.lifecycle[OCGC_LC_RING_STOP], 1);
  ck_assert_uint_eq(st.lost, 0);
}
END_TEST

/* gcdemo.ml 300 with -runtime-variant i: EV_ALLOC events of 22 words. */
START_TEST(instr_3452)
{
  struct facts f;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);

  check_stock_header("instr-3452");
  read_all("instr-3452", &f, &st, &info);
  check_stock_info(&info, 1u << 16);
  ck_assert_uint_eq(f.events, 1858);
  ck_assert_uint_eq(f.allocs, 11);
  ck_assert_uint_eq(f.alloc_bad_len, 0);
  ck_assert_uint_eq(f.lifecycle_value[OCGC_LC_RING_START], 3452);
  ck_assert_uint_eq(st.lost, 0);
}
END_TEST

/* Stock files have no extension block: no totals, no written counts. */
START_TEST(stock_has_no_ext_data)
{
  char path[4096];
  struct ocgc_source *s;
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  uint64_t w;
  unsigned i;
  for (i = 0; i < NFILES; i++) {
    fixture_path(path, sizeof path, files[i]);
    ck_assert_int_eq(ocgc_source_open_path(path, NULL, &s), 0);
    ck_assert_int_eq(ocgc_source_totals(s, &t), -ENODATA);
    ck_assert_int_eq(ocgc_source_written(s, 0, &w), -ENODATA);
    ck_assert_ptr_null(ocgc_source_user_name(s, 0)); /* no user events registered */
    ocgc_source_close(s);
  }
}
END_TEST

/* A cursor made now on a finished file sees nothing, for every file. */
START_TEST(start_now_sees_nothing)
{
  char path[4096];
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c;
  unsigned i;
  o.start = OCGC_START_NOW;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  for (i = 0; i < NFILES; i++) {
    fixture_path(path, sizeof path, files[i]);
    ck_assert_int_eq(ocgc_source_open_path(path, NULL, &s), 0);
    ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
    ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
    ocgc_cursor_free(c);
    ocgc_source_close(s);
  }
}
END_TEST

/* Small batches and a limit per poll give the same count as one big read. */
START_TEST(batches_and_limits)
{
  char path[4096];
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c;
  int64_t n;
  uint64_t total = 0, polls = 0;
  fixture_path(path, sizeof path, "2021");
  ck_assert_int_eq(ocgc_source_open_path(path, NULL, &s), 0);
  o.batch_words = 2048;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  while ((n = ocgc_cursor_poll(c, 1000)) > 0) {
    ck_assert_int_le(n, 1000);
    total += (uint64_t)n;
    polls++;
  }
  ck_assert_int_eq(n, 0);
  ck_assert_uint_eq(total, 31497);
  ck_assert_uint_eq(polls, 32);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
}
END_TEST

static Suite *fixtures_suite(void)
{
  Suite *s = suite_create("fixtures");
  TCase *tc = tcase_create("ocaml5.2");
  tcase_add_unchecked_fixture(tc, unpack, cleanup);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, full_3695);
  tcase_add_test(tc, wrapped_2021);
  tcase_add_test(tc, pause_3447);
  tcase_add_test(tc, instr_3452);
  tcase_add_test(tc, stock_has_no_ext_data);
  tcase_add_test(tc, start_now_sees_nothing);
  tcase_add_test(tc, batches_and_limits);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(fixtures_suite);
