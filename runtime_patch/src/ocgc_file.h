/* ocgc_file.h - the producer's ring file, as the hooks see it: the mapping
 * and its extension block, and the forked child's lazy reopening; plus the
 * helpers ocgc_stale.c shares (private to runtime/ocgc_*.c). */
#ifndef CAML_OCGC_FILE_H
#define CAML_OCGC_FILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ocgc/wire.h"
#include "ocgc_entries.h"
#include "ocgc_version.h" /* OCGC_PRODUCER_VERSION, written by the build */

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
  int lazy;                        /* forked child: make a file on first use */
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
};

/* The profile rows a regular file (no memfd) commits at creation: its
 * writes must never meet a hole (a full tmpfs would turn one into SIGBUS),
 * and committing 8,192 rows (9 MiB) would be paid by every process. */
#define CAML_OCGC_FALLBACK_MP_ROWS 2048u

extern struct caml_ocgc_file caml_ocgc_file;

/* In a forked child, make the child's own file, whose first events are
 * timed [at] (when the event that needs the file happened); returns 0 and
 * turns the hooks off if that fails. */
int caml_ocgc_file_reopen(uint64_t at);

/* Field 22 of /proc/PID/stat (0 if gone), and the boot id without its
 * newline: with the pid, they name one process. */
uint64_t caml_ocgc_start_time(pid_t pid);
void caml_ocgc_boot_id(char *out, size_t n);

/* ocgc_stale.c: remove from the ring folder [dfd] what dead processes of
 * this user left behind (never a live process's ring; never our own pid's
 * name, which the caller replaces); [pidns] is ours (caml_ocgc_pidns). */
void caml_ocgc_sweep_stale(int dfd, pid_t self, unsigned long pidns);

#endif /* CAML_OCGC_FILE_H */
