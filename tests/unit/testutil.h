/* testutil.h - helpers shared by the unit suites: the one main() that runs
 * a suite, temporary folders and xz-compressed fixture files. */
#ifndef OCGC_TEST_UTIL_H
#define OCGC_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

struct Suite; /* <check.h> */

/* The runner: testutil.c holds main(), which runs the suite that the
 * program defines with TU_SUITE(make) and returns EXIT_FAILURE if a test
 * failed.  As libcheck's own runners do, it forks each test unless
 * CK_FORK=no, and CK_VERBOSITY, CK_RUN_SUITE and CK_RUN_CASE select what
 * is printed and run.  A suite whose program also has a command of its own
 * defines it with TU_SUITE_ARGS(make, args): args(argc, argv) runs before
 * the suite is made, and returns an exit status, or -1 to run the suite. */
struct tu_suite {
  struct Suite *(*make)(void);
  int (*args)(int argc, char **argv);
};
extern const struct tu_suite tu_suite;
#define TU_SUITE(make) const struct tu_suite tu_suite = {(make), NULL}
#define TU_SUITE_ARGS(make, args) const struct tu_suite tu_suite = {(make), (args)}

/* The time budget per poll of the unit tests' cursors and aggregators
 * (poll_max_ns): none.  A test checks what a poll delivers, and a loaded
 * machine (the suite at nice 19 beside busy loops, or under ASan) can take
 * longer than the library's default of 10 ms for a thousand events, which
 * would cut the poll short and fail the count for the machine's sake.  The
 * budget itself is tested where it is the subject (test_cursor budget_time,
 * test_cursor_live ext_seq_stuck_odd and odd_seq_of_a_dead_producer), with
 * the library's default or a budget of its own. */
#define TU_NO_POLL_DEADLINE UINT64_MAX

/* ck_assert*() reports every call to the runner (a pipe write in fork
 * mode), which makes assertions in tight loops slow: check cheaply and
 * call libcheck only on failure.  Needs <check.h>. */
#define TU_CHECK(cond, ...)                                                    \
  do {                                                                         \
    if (!(cond)) ck_abort_msg(__VA_ARGS__);                                    \
  } while (0)

/* A sink for the text writers under test (json_put_fn, expo_put_fn): what
 * is written, in memory, NUL-terminated (cut at TU_BUF_SIZE - 1 bytes).
 * Zero it before use. */
#define TU_BUF_SIZE 16384
struct tu_buf {
  char s[TU_BUF_SIZE];
  size_t n;
};
void tu_buf_put(void *ctx, const char *s, size_t n);

/* A new private folder under $TMPDIR (or /tmp); free() the result.  NULL on
 * failure. */
char *tu_mkdtemp(void);

/* The scratch folder of a test case (NULL if it could not be made), made
 * and removed by the runner process, so that the files of a test that
 * crashed are removed too: tcase_add_unchecked_fixture(tc,
 * tu_scratch_setup, tu_scratch_teardown).  Tests run in forked children:
 * names made in it should carry the pid. */
extern char *tu_scratch;
void tu_scratch_setup(void);
void tu_scratch_teardown(void);

/* Remove the files of [dir] (one level) and [dir] itself. */
void tu_rmtree(const char *dir);

/* Unpack the xz file [src] into the new file [dst] with `xz -dc` (which
 * keeps the holes of sparse files).  Returns 0, or -1. */
int tu_unxz(const char *src, const char *dst);

/* The source tree: $OCGC_SRCDIR (set by `make check`), else the folder
 * configure was run for (OCGC_TOP_SRCDIR), else NULL. */
const char *tu_srcdir(void);

/* Join with '/' into buf; returns buf. */
char *tu_path(char *buf, size_t n, const char *a, const char *b);

#endif /* OCGC_TEST_UTIL_H */
