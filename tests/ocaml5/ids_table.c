/* ids_table.c - libocgc's table of one OCaml release's runtime ids, printed
 * for ocaml5_ids.sh to compare with that release's own header, through the
 * public API only.
 *
 *   ids_table 5.2|5.3|5.4   "phase ID NAME", "counter ID NAME" and
 *                           "lifecycle ID NAME" lines, ids from 0 up to
 *                           the first one without a name
 * Exit: 0, or 2 (usage). */

#include <stdio.h>
#include <string.h>

#include "ocgc/consumer.h"

int main(int argc, char **argv)
{
  static const struct { const char *name; enum ocgc_ids ids; } known[] = {
    {"5.2", OCGC_IDS_52}, {"5.3", OCGC_IDS_53}, {"5.4", OCGC_IDS_54},
  };
  const char *n;
  unsigned id, k;
  enum ocgc_ids ids = OCGC_IDS_AUTO;
  for (k = 0; argc == 2 && k < sizeof known / sizeof known[0]; k++)
    if (strcmp(argv[1], known[k].name) == 0) ids = known[k].ids;
  if (ids == OCGC_IDS_AUTO) {
    fprintf(stderr, "usage: ids_table 5.2|5.3|5.4\n");
    return 2;
  }
  /* Bounded: every table is far shorter than 256 ids. */
  for (id = 0; id < 256 && (n = ocgc_phase_name(ids, id)) != NULL; id++) printf("phase %u %s\n", id, n);
  for (id = 0; id < 256 && (n = ocgc_counter_name(ids, id)) != NULL; id++) printf("counter %u %s\n", id, n);
  for (id = 0; id < 256 && (n = ocgc_lifecycle_name(id)) != NULL; id++) printf("lifecycle %u %s\n", id, n);
  return 0;
}
