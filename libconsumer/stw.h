/* stw.h - a stop-the-world collection of a stock OCaml 5 process counted
 * once, whatever number of domains (rings) wrote a span of it (private;
 * stream.c's). */
#ifndef OCGC_STW_H
#define OCGC_STW_H

#include <stdint.h>

/* What is grouped: three collection kinds and the major cycle. */
enum stw_slot {
  STW_MINOR = 0,
  STW_MAJOR_FINISH,
  STW_COMPACTION,
  STW_CYCLE,
  STW_SLOTS
};

/* Collections remembered per slot: how far one ring may be read behind
 * another (rings are read one after the other) and still be matched. */
#define STW_HISTORY 512u
#define STW_MAX_RINGS 128u

struct stw_group {
  uint64_t begin, end;        /* earliest begin, latest (extended) end */
  uint64_t longest;           /* longest domain's span */
  uint64_t rings[STW_MAX_RINGS / 64];
  int cause;
};

struct stw_table {
  struct stw_group *g[STW_SLOTS]; /* sorted by begin; made on first use */
  unsigned n[STW_SLOTS];
  uint64_t groups[STW_SLOTS];     /* collections counted */
};

/* How a domain's span joined: member 0 when it is the first span of its
 * collection (counted), else 1, with the collection's longest span and
 * cause before it joined. */
struct stw_join {
  int member;
  uint64_t prev_ns;
  int prev_cause;
};

/* The span [begin, end] (end extended to what the domain waited for the
 * others, see stream.c) of [dur] ns and [cause] of ring [ring] joins the
 * collection of [slot] it overlaps and that has no span of that ring yet,
 * or starts one.  0, or -ENOMEM (then *out says a new one). */
int stw_join(struct stw_table *t, enum stw_slot slot, unsigned ring, uint64_t begin,
             uint64_t end, uint64_t dur, int cause, struct stw_join *out);

void stw_free(struct stw_table *t);

#endif /* OCGC_STW_H */
