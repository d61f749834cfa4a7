/* trace_bounded_ring.c - writes the ring files of trace_bounded.sh: on
 * each of RINGS rings, a user span "request" that begins and never ends,
 * and inside it UNITS minor collections, each with a minor_local_roots
 * sub-phase that begins at the same timestamp (so that a trace shows
 * whether same-timestamp parents still come before their children).
 * "flat" leaves the user spans out: the same collections with nothing held
 * open around them, the baseline the test measures memory against.
 *
 * Usage: trace_bounded_ring FILE RINGS UNITS [flat]
 *
 * The rings are sized so that nothing wraps: every event written is in the
 * file, and `ocgc trace --file` reads them all.  Timestamps grow by 10 ns a
 * collection, interleaved across the rings. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/ringgen.h"

#define SLOT_REQUEST 100u /* any free user slot */
#define WORDS_PER_UNIT 8u /* 4 events of 2 words */

static int parse_u(const char *s, unsigned long max, unsigned long *out)
{
  char *end;
  errno = 0;
  *out = strtoul(s, &end, 10);
  return errno == 0 && end != s && *end == '\0' && *out >= 1 && *out <= max ? 0 : -1;
}

int main(int argc, char **argv)
{
  struct rg_file f;
  unsigned long rings, units, u;
  uint64_t words = 1024, ts = 1000;
  unsigned d;
  int flat, err;

  if (argc < 4 || argc > 5 || parse_u(argv[2], 64, &rings) != 0 ||
      parse_u(argv[3], 1ul << 24, &units) != 0 ||
      (argc == 5 && strcmp(argv[4], "flat") != 0)) {
    fprintf(stderr, "usage: trace_bounded_ring FILE RINGS(1-64) UNITS(1-16777216) [flat]\n");
    return 2;
  }
  flat = argc == 5;
  /* A power of two with room for every event (and the padding a ring may
   * need at its end), so that no event is overwritten. */
  while (words < (uint64_t)units * WORDS_PER_UNIT + 64) words *= 2;
  if ((err = rg_create(&f, argv[1], 1, (unsigned)rings, words)) != 0) {
    fprintf(stderr, "trace_bounded_ring: cannot create %s: %s\n", argv[1], strerror(-err));
    return 1;
  }
  rg_set_name(&f, SLOT_REQUEST, "request");
  for (d = 0; d < rings && !flat; d++)
    rg_write(&f, d, OCGC_EV_HEADER(2, 1, OCGC_USER_SPAN_BEGIN, SLOT_REQUEST), ts, NULL);
  for (u = 0; u < units; u++) {
    for (d = 0; d < rings; d++) {
      ts += 10;
      rg_write(&f, d, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR), ts, NULL);
      rg_write(&f, d, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR_LOCAL_ROOTS), ts, NULL);
      rg_write(&f, d, OCGC_EV_HEADER(2, 0, OCGC_RT_END, OCGC_PH_MINOR_LOCAL_ROOTS), ts + 2, NULL);
      rg_write(&f, d, OCGC_EV_HEADER(2, 0, OCGC_RT_END, OCGC_PH_MINOR), ts + 5, NULL);
    }
  }
  rg_close(&f);
  return 0;
}
