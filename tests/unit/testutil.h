/* testutil.h - helpers shared by the unit suites: temporary folders and
 * xz-compressed fixture files. */
#ifndef OCGC_TEST_UTIL_H
#define OCGC_TEST_UTIL_H

#include <stddef.h>

/* ck_assert*() reports every call to the runner (a pipe write in fork
 * mode), which makes assertions in tight loops slow: check cheaply and
 * call libcheck only on failure.  Needs <check.h>. */
#define TU_CHECK(cond, ...)                                                    \
  do {                                                                         \
    if (!(cond)) ck_abort_msg(__VA_ARGS__);                                    \
  } while (0)

/* A new private folder under $TMPDIR (or /tmp); free() the result.  NULL on
 * failure. */
char *tu_mkdtemp(void);

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
