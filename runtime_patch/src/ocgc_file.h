/* ocgc_file.h - shared between the producer's file and hook modules
 * (private to runtime/ocgc_*.c). */
#ifndef CAML_OCGC_FILE_H
#define CAML_OCGC_FILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ocgc/wire.h"
#include "ocgc_version.h" /* OCGC_PRODUCER_VERSION, written by the build */

struct caml_ocgc_file {
  char *map;                       /* the whole file, or NULL */
  size_t map_size;
  struct ocgc_wire_ext *ext;       /* inside map */
  struct ocgc_wire_totals *totals; /* inside map */
  pid_t pid;                       /* the process the mapping belongs to */
  pid_t parent_pid;                /* in a forked child: the parent */
  int lazy;                        /* forked child: make a file on first use */
  char path[PATH_MAX + 64];        /* <dir>/<pid>.events, for removal at exit */
};

extern struct caml_ocgc_file caml_ocgc_file;

/* User event name table, slot i = name of user event id i (ocgc_hooks.c). */
extern const char *const caml_ocgc_user_event_names[];
extern const unsigned caml_ocgc_user_event_count;

/* In a forked child, make the child's own file; returns 0 and turns the
 * hooks off if that fails. */
int caml_ocgc_file_reopen(void);

/* ocgc_hooks.c: first events of a new ring (RING_START, and FORK_CHILD with
 * the parent's pid when parent_pid != 0), and the last (RING_STOP, final
 * totals, state EXITED). */
void caml_ocgc_started(uint64_t parent_pid);
void caml_ocgc_stop(void);

#endif /* CAML_OCGC_FILE_H */
