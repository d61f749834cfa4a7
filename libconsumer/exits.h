/* exits.h - a watch's processes that ended, counted by program and how
 * (private; code in exits.c): what ocaml_process_exits_total shows, by
 * pid and by program alike. */
#ifndef OCGC_EXITS_H
#define OCGC_EXITS_H

#include <stdint.h>

#include "ocgc/exit.h"
#include "ocgc/expo.h"
#include "ocgc/watch.h"

#define EXITS_HOW 4           /* enum ocgc_exit_how: unknown, exited, killed, oom */

/* One program's ends. */
struct exit_prog {
  struct exit_prog *next;
  char label[OCGC_EXPO_LABEL_MAX + 4];
  int other;                  /* PROGRAMS_OTHER: the programs past the bound */
  unsigned living;            /* its processes in the set */
  uint64_t left_ns;           /* cm_mono_ns() when its last process left */
  uint64_t n[EXITS_HOW];      /* ends by how: only grow */
};

struct exits {
  struct exit_prog *list;
  unsigned n;
};

/* [p] joins the set: its program's entry (made if need be, within the
 * bound), to give exits_left; NULL out of memory. */
struct exit_prog *exits_joined(struct exits *t, const struct ocgc_watched *p);
/* A process of [g] leaves the set; if it ended (e->gone_ns), counted. */
void exits_left(struct exit_prog *g, const struct ocgc_exit *e);
void exits_free(struct exits *t);

/* The table of [w] (watch.c). */
const struct exits *watch_exits(const struct ocgc_watch *w);

#endif /* OCGC_EXITS_H */
