/* watched.h - what the groupings of a watch read of one watched process
 * (private; code in watched.c): its collections and events as its series
 * count them, its program cut to a label, its runtime.  Below watch.c,
 * programs.c, exits.c and metrics.c, which all ask it the same. */
#ifndef OCGC_WATCHED_H
#define OCGC_WATCHED_H

#include "ocgc/expo.h"
#include "ocgc/watch.h"

/* A process's runtime, as ocaml_runtime_info labels it. */
struct runtime_label {
  char version[16], variant[16], ocgc_version[16];
};

/* [p]'s program cut to a label (OCGC_EXPO_LABEL_MAX + 4 bytes). */
void watched_label(const struct ocgc_watched *p, char *out);
/* [p]'s runtime: version ("5" for stock rings), variant (native,
 * bytecode, stock), ocgc_version ("" for stock). */
void watched_runtime(const struct ocgc_watched *p, struct runtime_label *out);

#endif /* OCGC_WATCHED_H */
