/* ocgc_writer.h - the ring file as its writers see it (the hooks,
 * ocgc_hooks.c, and the allocation profile, ocgc_memprof.c): the mapping
 * and its parts, and the way into it (private to runtime/ocgc_*.c).
 *
 * The file is made, published and withdrawn by the files above the
 * writers (ocgc_file.c, ocgc_lifecycle.c, ocgc_start.c), which fill this
 * state; a writer never calls up into them.  The one thing a writer needs
 * done from up there, a forked child's own file at its first event, it
 * asks through the pointer the fork's child handler leaves here
 * (caml_ocgc_file.reopen). */
#ifndef CAML_OCGC_WRITER_H
#define CAML_OCGC_WRITER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ocgc/wire.h"
#include "ocgc_clock.h"
#include "ocgc_entries.h"
#include "ocgc_ring.h"

struct caml_ocgc_file {
  char *map;                       /* the whole file, or NULL */
  size_t map_size;
  uint64_t commit_size;            /* bytes committed at creation */
  int is_memfd;                    /* the ring is a memfd, published by a link */
  int memfd;                       /* its descriptor, or -1 (a file, or the
                                      program took the number: forgotten) */
  struct ocgc_wire_ext *ext;       /* inside map */
  struct ocgc_wire_totals *totals; /* inside map */
  struct ocgc_wire_mp *mp;         /* inside map: the allocation profile */
  pid_t pid;                       /* the process the mapping belongs to */
  pid_t parent_pid;                /* in a forked child: the parent */
  int lazy;                        /* forked child: make a file on first use,
                                      with reopen (below) */
  dev_t file_dev;                  /* the ring's file or memfd: our mapping */
  ino_t file_ino;                  /* holds it, so no other file has these */
  unsigned long pidns;             /* whose pids our names hold (ocgc_entries.h) */
  char ident[CAML_OCGC_ENTRY_MAX];  /* a memfd ring's identity link's name, */
  char link[CAML_OCGC_ENTRY_MAX];   /* and its text (map_files) */
  int aliased;                     /* <pid>.events is our alias of it */
  unsigned mp_rows;                /* profile rows whose pages may be written:
                                      all of a memfd's (committed when written),
                                      a regular file's first FALLBACK_MP_ROWS
                                      (committed at creation) */
  int (*reopen)(uint64_t at);      /* set before lazy, by the fork's child
                                      handler (ocgc_lifecycle.c): makes the
                                      child's own file, whose first events
                                      are timed [at]; returns 0, and turns
                                      the hooks off, if that fails */
};

/* The profile rows a regular file (no memfd) commits at creation: its
 * writes must never meet a hole (a full tmpfs would turn one into SIGBUS),
 * and committing 8,192 rows (9 MiB) would be paid by every process. */
#define CAML_OCGC_FALLBACK_MP_ROWS 2048u

extern struct caml_ocgc_file caml_ocgc_file;

/* The forked child's file, made at its first event: out of line and cold,
 * so that the writers' inline way in stays small.  (Static in each file
 * that includes this one; unused where nothing enters.) */
static __attribute__((noinline, cold, unused)) int caml_ocgc_writer_reopen(uint64_t at)
{
  return caml_ocgc_file.reopen(at);
}

/* Enter a hook that writes, and take its timestamp: nonzero when there is
 * a ring to write into and the exit handler has not taken it over.  The
 * timestamp is taken first: in a forked child the first event makes the
 * child's own file, which takes 100-200 us inside whatever the event marks
 * (a collection, usually: the mutator waits), so the file's first events
 * and the hook's own are timed when the hook was entered: the work lies
 * inside the span it lengthens, never unaccounted in a pause.  (A
 * timestamp is never 0: CLOCK_MONOTONIC counts from boot.)  A nonzero
 * return must be paired with caml_ocgc_hook_leave().  Inline: the hooks
 * (ocgc_hooks.c) enter on every GC event. */
static inline uint64_t caml_ocgc_writer_begin(void)
{
  uint64_t now;
  if (!caml_ocgc_hook_enter()) return 0;
  now = caml_ocgc_now();
  if (__builtin_expect(caml_ocgc_ring.data != NULL, 1)) return now;
  if (caml_ocgc_file.lazy && caml_ocgc_writer_reopen(now)) return now;
  caml_ocgc_hook_leave();
  return 0;
}

/* The same way in, out of line, for ocgc_memprof.c: nonzero when there is
 * a file to write (in a forked child, made now) and the exit handler has
 * not taken it over; a nonzero return must be paired with
 * caml_ocgc_writer_leave(). */
int caml_ocgc_writer_enter(void);
void caml_ocgc_writer_leave(void);

#endif /* CAML_OCGC_WRITER_H */
