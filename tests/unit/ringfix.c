/* ringfix.c - the ring-file fixture of the cursor, source and
 * classification suites (ringfix.h).
 *
 * What a test makes through rf_* is held in one stack and released in
 * reverse order by the checked teardown, so a cursor is always freed
 * before its source and a source closed before its file is unmapped.  The
 * stack is emptied by the checked setup too, so that with CK_FORK=no a
 * test that failed before its teardown leaves nothing to the next. */

#include "ringfix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* ---- the fixture ----------------------------------------------------------------- */

static unsigned file_no;

enum held_kind { HELD_FILE, HELD_SOURCE, HELD_CURSOR, HELD_REC };

#define HELD_MAX 64
static struct held {
  enum held_kind kind;
  void *p;
} held[HELD_MAX];
static unsigned nheld;

static void *hold(enum held_kind kind, void *p)
{
  ck_assert_msg(nheld < HELD_MAX, "a test holds more than %d fixture objects", HELD_MAX);
  held[nheld].kind = kind;
  held[nheld].p = p;
  nheld++;
  return p;
}

static void rec_free(struct rec *r)
{
  free(r->ts);
  free(r->ring);
  free(r->name);
  free(r);
}

static void release(void)
{
  while (nheld > 0) {
    struct held *h = &held[--nheld];
    switch (h->kind) {
    case HELD_FILE:
      rg_close(&((struct tf *)h->p)->f);
      free(h->p);
      break;
    case HELD_SOURCE: ocgc_source_close(h->p); break;
    case HELD_CURSOR: ocgc_cursor_free(h->p); break;
    case HELD_REC: rec_free(h->p); break;
    }
  }
}

TCase *rf_tcase(Suite *s, const char *name, double timeout)
{
  TCase *tc = tcase_create(name);
  tcase_add_unchecked_fixture(tc, tu_scratch_setup, tu_scratch_teardown);
  tcase_add_checked_fixture(tc, release, release);
  if (timeout > 0) tcase_set_timeout(tc, timeout);
  suite_add_tcase(s, tc);
  return tc;
}

struct tf *rf_file(int has_ext, unsigned domains, uint64_t ring_words)
{
  struct tf *t = calloc(1, sizeof *t);
  char name[64];
  int r;
  ck_assert_ptr_nonnull(t);
  ck_assert_msg(tu_scratch != NULL, "no scratch folder");
  snprintf(name, sizeof name, "%ld-%u.events", (long)getpid(), ++file_no);
  tu_path(t->path, sizeof t->path, tu_scratch, name);
  r = rg_create(&t->f, t->path, has_ext, domains, ring_words);
  if (r != 0) free(t);
  ck_assert_msg(r == 0, "rg_create: %s", strerror(-r));
  return hold(HELD_FILE, t);
}

struct ocgc_source *rf_open(const struct tf *t, enum ocgc_ids ids)
{
  struct ocgc_open_opts o = OCGC_OPTS_INIT(struct ocgc_open_opts);
  struct ocgc_source *s = NULL;
  int r;
  o.ids = ids;
  r = ocgc_source_open_path(t->path, &o, &s);
  ck_assert_msg(r == 0, "open %s: %s", t->path, ocgc_strerror(r));
  return hold(HELD_SOURCE, s);
}

struct rec *rf_rec(void)
{
  struct rec *r = calloc(1, sizeof *r);
  ck_assert_ptr_nonnull(r);
  return hold(HELD_REC, r);
}

struct ocgc_cursor *rf_cursor_budget(struct ocgc_source *s, struct rec *r,
                                     enum ocgc_cursor_start start, size_t batch_words,
                                     uint64_t poll_max_ns)
{
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  int err;
  o.poll_max_ns = poll_max_ns;
  o.start = start;
  o.on_event = rec_event;
  o.on_lost = rec_lost;
  o.ctx = r;
  o.batch_words = batch_words;
  err = ocgc_cursor_new(s, &o, &c);
  ck_assert_msg(err == 0, "cursor_new: %s", ocgc_strerror(err));
  return hold(HELD_CURSOR, c);
}

struct ocgc_cursor *rf_cursor(struct ocgc_source *s, struct rec *r,
                              enum ocgc_cursor_start start, size_t batch_words)
{
  return rf_cursor_budget(s, r, start, batch_words, TU_NO_POLL_DEADLINE);
}

struct ocgc_cursor *rf_reader(struct tf *t, enum ocgc_cursor_start start, size_t batch_words,
                              struct rec **r)
{
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  *r = rf_rec();
  return rf_cursor(s, *r, start, batch_words);
}

/* The 22nd field of /proc/self/stat, after the command name's ')'. */
static uint64_t own_start_time(void)
{
  char buf[1024], *p;
  FILE *f = fopen("/proc/self/stat", "r");
  unsigned field;
  size_t n;
  ck_assert_ptr_nonnull(f);
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  p = strrchr(buf, ')');
  ck_assert_ptr_nonnull(p);
  for (field = 2; field < 22 && p != NULL; field++) p = strchr(p + 1, ' ');
  ck_assert_ptr_nonnull(p);
  return strtoull(p + 1, NULL, 10);
}

void rf_identify_as_self(struct tf *t)
{
  char buf[1024];
  FILE *f;
  size_t n;
  t->f.ext->pid = (uint64_t)getpid();
  t->f.ext->start_time = own_start_time();
  memset(t->f.ext->boot_id, 0, sizeof t->f.ext->boot_id);
  f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f != NULL) {
    if (fgets(buf, sizeof buf, f) != NULL) {
      n = strcspn(buf, "\n");
      if (n >= sizeof t->f.ext->boot_id) n = sizeof t->f.ext->boot_id - 1;
      memcpy(t->f.ext->boot_id, buf, n);
    }
    fclose(f);
  }
}

uint64_t rf_dead_pid(void)
{
  pid_t p = fork();
  ck_assert_int_ge(p, 0);
  if (p == 0) _exit(0);
  ck_assert_int_eq(waitpid(p, NULL, 0), p);
  return (uint64_t)p;
}

struct ocgc_cursor_stats rf_stats(const struct ocgc_cursor *c)
{
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  memset(&st, 0xee, sizeof st);
  ocgc_cursor_stats(c, &st);
  return st;
}

int64_t rf_poll_all(struct ocgc_cursor *c)
{
  int64_t total = 0, n;
  unsigned polls = 0;
  do {
    n = ocgc_cursor_poll(c, 0);
    ck_assert_msg(n >= 0, "poll %u: %s", polls, ocgc_strerror((int)n));
    total += n;
  } while (rf_stats(c).behind && ++polls < 100000);
  ck_assert_msg(!rf_stats(c).behind, "still behind after %u polls", polls);
  return total;
}

/* ---- the event pattern -------------------------------------------------------------- */

uint64_t pat_header(uint64_t i)
{
  switch (i % 6) {
  case 0: return OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED);
  case 1: return OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR);
  case 2: return OCGC_EV_HEADER(2, 0, OCGC_RT_END, OCGC_PH_MINOR);
  case 3: return OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 5);
  case 4: return OCGC_EV_HEADER(22, 0, OCGC_RT_ALLOC, 0);
  default: return OCGC_EV_HEADER(5, 1, OCGC_USER_CUSTOM, 6);
  }
}

void pat_write(struct rg_file *f, unsigned d, uint64_t i)
{
  uint64_t payload[20];
  unsigned k;
  for (k = 0; k < 20; k++) payload[k] = i * 7 + k;
  rg_write(f, d, pat_header(i), i, payload);
}

void pat_write_range(struct rg_file *f, unsigned d, uint64_t from, uint64_t n)
{
  uint64_t i;
  for (i = from; i < from + n; i++) pat_write(f, d, i);
}

uint64_t pat_words(uint64_t from, uint64_t n)
{
  uint64_t i, w = 0;
  for (i = from; i < from + n; i++) w += OCGC_EV_LENGTH(pat_header(i));
  return w;
}

/* ---- recording what a cursor delivers ---------------------------------------------- */

int rec_event(const struct ocgc_event *ev, void *ctx)
{
  struct rec *r = ctx;
  uint64_t i = ev->timestamp, h = pat_header(i);
  unsigned k;
  TU_CHECK(ev->user == OCGC_EV_IS_USER(h) && ev->type == OCGC_EV_TYPE(h) &&
               ev->id == OCGC_EV_ID(h) && ev->payload_words == OCGC_EV_LENGTH(h) - 2 &&
               ev->value == (ev->payload_words ? i * 7 : 0),
           "event %llu: user %u type %u id %u payload %u value %llu do not match its index",
           (unsigned long long)i, ev->user, ev->type, ev->id, ev->payload_words,
           (unsigned long long)ev->value);
  for (k = 0; k < ev->payload_words; k++)
    TU_CHECK(ev->payload[k] == i * 7 + k, "event %llu: payload word %u is %llu",
             (unsigned long long)i, k, (unsigned long long)ev->payload[k]);
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->ts = realloc(r->ts, r->cap * sizeof *r->ts);
    r->ring = realloc(r->ring, r->cap * sizeof *r->ring);
    r->name = realloc(r->name, r->cap * sizeof *r->name);
    ck_assert(r->ts && r->ring && r->name);
  }
  r->ts[r->n] = i;
  r->ring[r->n] = ev->ring;
  r->name[r->n] = ev->name;
  r->n++;
  return r->stop_at && r->n == r->stop_at;
}

void rec_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct rec *r = ctx;
  ck_assert_uint_gt(lost, 0);
  r->lost_sum += lost;
  r->lost_calls++;
  if (!exact) r->lost_inexact = 1;
  r->lost_ring_mask |= 1u << ring;
}

void rec_expect(const struct rec *r, size_t from, size_t n, uint64_t first)
{
  size_t k;
  ck_assert_uint_ge(r->n, from + n);
  for (k = 0; k < n; k++)
    TU_CHECK(r->ts[from + k] == first + k, "event %zu is %llu, want %llu", from + k,
             (unsigned long long)r->ts[from + k], (unsigned long long)(first + k));
}

uint64_t rec_missing(const struct rec *r, uint64_t written)
{
  uint64_t m = 0, next = 0;
  size_t k;
  for (k = 0; k < r->n; k++) {
    TU_CHECK(r->ts[k] >= next, "event %llu after %llu: out of order or twice",
             (unsigned long long)r->ts[k], (unsigned long long)next);
    m += r->ts[k] - next;
    next = r->ts[k] + 1;
  }
  return m + (written - next);
}
