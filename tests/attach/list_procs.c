/* list_procs.c - libocgc's listing of processes and default folders, for
 * list_live.sh, through the public API only (as an agent would use it).
 *
 *   list_procs dirs        each default ring folder: "dir N PATH"
 *   list_procs pid PID     what ocgc_list() says of process PID:
 *                          "listed N", then if listed "state S",
 *                          "has_ext H", "alive A" (ocgc_source_check_alive
 *                          of the entry's source), "path PATH",
 *                          "program NAME"
 * Exit: 0, 1 usage, 2 the listing failed. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/consumer.h"

struct want {
  int pid, listed;
};

static const char *state_name(enum ocgc_list_state s)
{
  switch (s) {
  case OCGC_LIST_RUNNING: return "running";
  case OCGC_LIST_EXITED: return "exited";
  case OCGC_LIST_STALE: return "stale";
  case OCGC_LIST_UNREADABLE: return "unreadable";
  }
  return "?";
}

static int on_entry(const struct ocgc_list_entry *e, void *ctx)
{
  struct want *w = ctx;
  if (e->pid != w->pid) return 0;
  w->listed++;
  /* the test's own program and folder: no byte needs escaping */
  printf("state %s\nhas_ext %d\nalive %d\npath %s\nprogram %s\n", state_name(e->state),
         e->has_ext, e->src != NULL ? ocgc_source_check_alive(e->src) : 1, e->path,
         e->program);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc == 2 && strcmp(argv[1], "dirs") == 0) {
    char buf[4096];
    unsigned i;
    for (i = 0; ocgc_default_dir(i, buf, sizeof buf) == 0; i++) printf("dir %u %s\n", i, buf);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "pid") == 0) {
    struct want w = {atoi(argv[2]), 0};
    int n = ocgc_list(on_entry, &w, NULL);
    if (n < 0) {
      fprintf(stderr, "list_procs: %s\n", ocgc_strerror(n));
      return 2;
    }
    printf("listed %d\n", w.listed);
    return 0;
  }
  fprintf(stderr, "usage: list_procs dirs | list_procs pid PID\n");
  return 1;
}
