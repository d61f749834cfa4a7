/* escape.h - the one escape of a target's bytes in what libocgc writes
 * (private; escape.c): profiles' function and file names, mapping paths
 * and build ids, in pprof, folded stacks and the function tables. */
#ifndef OCGC_ESCAPE_H
#define OCGC_ESCAPE_H

#include <stddef.h>

/* Room for the escape of [n] bytes and its NUL. */
#define ESC_SIZE(n) (4 * (size_t)(n) + 1)

/* [s] as printable ASCII: a byte below 0x20 or above 0x7e, a backslash
 * and a byte of [also] (NULL: none) are written "\xNN" (two lower-case
 * hex digits), every other byte as it is.  Writes NUL-terminated into
 * out[0..n) (n >= 1), never cutting an escape, and returns the length. */
size_t esc_bytes(const char *s, const char *also, char *out, size_t n);

/* Whether esc_bytes would change [s]. */
int esc_needed(const char *s, const char *also);

#endif /* OCGC_ESCAPE_H */
