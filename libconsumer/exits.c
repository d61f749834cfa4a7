/* exits.c - a watch's processes that ended, counted by program and how
 * (exits.h), for ocaml_process_exits_total: a counter per program that
 * never goes back and is kept when its processes go, by pid as by
 * program (a gone process has no series of its own).
 *
 * Invariants: a process is counted once, when it leaves the set having
 * ended (watch.c fills its ocgc_exit: gone_ns set); one that exec'd or
 * was let go alive is not; a program has its entry from its first
 * process's joining, so its counters are there at 0 before its first end
 * (a rate sees that end); at most PROGRAMS_MAX programs have entries of
 * their own, and past that a new one takes the place of the one whose
 * processes all left the longest ago (its series leave), else it counts
 * in the one labelled PROGRAMS_OTHER: programs.c's bound, so that a
 * host's names cannot grow the series or the memory without bound. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "exits.h"
#include "programs.h"
#include "watched.h"

/* Of the entries, the one whose processes all left the longest ago (not
 * the shared one), or NULL. */
static struct exit_prog *longest_left(const struct exits *t)
{
  struct exit_prog *g, *best = NULL;
  for (g = t->list; g != NULL; g = g->next)
    if (!g->other && g->living == 0 && (best == NULL || g->left_ns < best->left_ns)) best = g;
  return best;
}

struct exit_prog *exits_joined(struct exits *t, const struct ocgc_watched *p)
{
  struct exit_prog *g;
  char label[OCGC_EXPO_LABEL_MAX + 4];
  watched_label(p, label);
  for (g = t->list; g != NULL; g = g->next)
    if (strcmp(g->label, label) == 0) break;
  if (g == NULL && t->n >= PROGRAMS_MAX) {
    if ((g = longest_left(t)) != NULL) {
      struct exit_prog *next = g->next;
      memset(g, 0, sizeof *g);
      g->next = next;
      snprintf(g->label, sizeof g->label, "%s", label);
    } else {
      for (g = t->list; g != NULL; g = g->next)
        if (g->other) break;
    }
  }
  if (g == NULL) {
    if ((g = calloc(1, sizeof *g)) == NULL) return NULL;
    g->other = t->n >= PROGRAMS_MAX;
    snprintf(g->label, sizeof g->label, "%s", g->other ? PROGRAMS_OTHER : label);
    g->next = t->list;
    t->list = g;
    t->n++;
  }
  g->living++;
  return g;
}

void exits_left(struct exit_prog *g, const struct ocgc_exit *e)
{
  if (g == NULL) return;
  if (g->living > 0) g->living--;
  if (g->living == 0) g->left_ns = cm_mono_ns();
  if (e->gone_ns != 0) g->n[e->how >= 0 && e->how < EXITS_HOW ? e->how : OCGC_EXIT_UNKNOWN]++;
}

void exits_free(struct exits *t)
{
  while (t->list != NULL) {
    struct exit_prog *g = t->list;
    t->list = g->next;
    free(g);
  }
  t->n = 0;
}
