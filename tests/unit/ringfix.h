/* ringfix.h - the fixture of the suites that read ring files written by
 * ringgen (test_cursor*, test_source, test_classify): a scratch folder per
 * test case, ring files, sources, cursors and records that are released
 * after each test, and the event pattern that lets a test check exactly
 * what a cursor delivered.
 *
 * The pattern: event i carries i as timestamp and i * 7 + k as payload
 * word k, and its type follows i (pat_header), so a reader's output can be
 * checked exactly: events in order, intact, and every index missing
 * between two seen ones counted as lost exactly once (ocgc files).
 *
 *   tc = rf_tcase(suite, "read", 0); tcase_add_test(tc, ...); and in a test:
 *     struct tf *t = rf_file(1, 1, 1024);     has_ext, rings, ring words
 *     struct rec *r;
 *     pat_write_range(&t->f, 0, 0, 100);
 *     c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
 *     ck_assert_int_eq(ocgc_cursor_poll(c, 0), 100);
 *     rec_expect(r, 0, 100, 0);
 *   and nothing to free. */
#ifndef OCGC_TEST_RINGFIX_H
#define OCGC_TEST_RINGFIX_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "ocgc/consumer.h"
#include "ringgen.h"

/* ---- the fixture ----------------------------------------------------------------- */

/* A new test case of suite s, with [timeout] seconds per test (0: the
 * default) and the fixture: a scratch folder made and removed by the
 * runner process (an unchecked fixture, so that the files of a test that
 * crashed are removed too), and a checked fixture that releases, after
 * each test, what it made with the functions below (cursors first, then
 * sources, then files). */
TCase *rf_tcase(Suite *s, const char *name, double timeout);

/* A ring file in the scratch folder; the name carries the pid, since tests
 * run in forked children. */
struct tf {
  struct rg_file f;
  char path[4096];
};

/* A new file: has_ext (ocgc file, else stock OCaml 5.2), [domains] rings
 * of [ring_words] words each. */
struct tf *rf_file(int has_ext, unsigned domains, uint64_t ring_words);

/* A source on t's file, opened with [ids]. */
struct ocgc_source *rf_open(const struct tf *t, enum ocgc_ids ids);

/* An empty record (see struct rec). */
struct rec *rf_rec(void);

/* A cursor on s from [start] that checks and records every event into r
 * (rec_event, rec_lost); batch_words 0 is the library's default.  Its polls
 * have no time budget (TU_NO_POLL_DEADLINE); rf_cursor_budget gives one
 * (0: the library's default), for a test of what the budget does. */
struct ocgc_cursor *rf_cursor(struct ocgc_source *s, struct rec *r,
                              enum ocgc_cursor_start start, size_t batch_words);
struct ocgc_cursor *rf_cursor_budget(struct ocgc_source *s, struct rec *r,
                                     enum ocgc_cursor_start start, size_t batch_words,
                                     uint64_t poll_max_ns);

/* The usual start of a test: a source on t (OCGC_IDS_AUTO), a new record
 * (*r) and a cursor recording into it. */
struct ocgc_cursor *rf_reader(struct tf *t, enum ocgc_cursor_start start, size_t batch_words,
                              struct rec **r);

/* Make the file's identity that of this very process (pid, /proc start
 * time, boot id), so that readers find its producer alive. */
void rf_identify_as_self(struct tf *t);

/* A pid that names no process. */
uint64_t rf_dead_pid(void);

/* The cursor's statistics (filled with 0xee first, so that a field the
 * library forgets shows). */
struct ocgc_cursor_stats rf_stats(const struct ocgc_cursor *c);

/* Poll c until a poll leaves it not behind; the events delivered in all.
 * For a cursor with a time budget (rf_cursor_budget) whose count a test
 * checks: one poll may be cut short on a loaded machine, and the next
 * ones go on from there.  At most 100,000 polls; an error fails the test. */
int64_t rf_poll_all(struct ocgc_cursor *c);

/* ---- the event pattern -------------------------------------------------------------- */

uint64_t pat_header(uint64_t i);
void pat_write(struct rg_file *f, unsigned d, uint64_t i);
/* Events [from, from + n) on ring d. */
void pat_write_range(struct rg_file *f, unsigned d, uint64_t from, uint64_t n);
/* Words taken by events [from, from + n) (without padding). */
uint64_t pat_words(uint64_t from, uint64_t n);

/* ---- recording what a cursor delivers ---------------------------------------------- */

struct rec {
  uint64_t *ts;
  unsigned *ring;
  const char **name;
  size_t n, cap;
  size_t stop_at;          /* rec_event returns 1 when n reaches this (0: never) */
  uint64_t lost_sum;
  unsigned lost_calls;
  int lost_inexact;        /* some on_lost call said exact == 0 */
  unsigned lost_ring_mask;
};

/* on_event: check an event against the pattern and record it (ctx: rec). */
int rec_event(const struct ocgc_event *ev, void *ctx);
/* on_lost: add up what the cursor says was lost (ctx: rec). */
void rec_lost(unsigned ring, uint64_t lost, int exact, void *ctx);

/* Recorded events [from, from + n) of one ring are exactly first..first+n-1. */
void rec_expect(const struct rec *r, size_t from, size_t n, uint64_t first);

/* Events missing from a strictly increasing record of one ring whose
 * writer wrote indices [0, written). */
uint64_t rec_missing(const struct rec *r, uint64_t written);

#endif /* OCGC_TEST_RINGFIX_H */
