/* ocgc_file.h - the producer's ring file, as the start (ocgc_start.c) and
 * the fork and exit handlers (ocgc_lifecycle.c) use it: its settings, its
 * making, publication and withdrawal (private to runtime/ocgc_*.c).  What
 * the writers see of the file is ocgc_writer.h's. */
#ifndef CAML_OCGC_FILE_H
#define CAML_OCGC_FILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ocgc/wire.h"
#include "ocgc_version.h" /* OCGC_PRODUCER_VERSION, written by the build */
#include "ocgc_writer.h"

/* What the environment chose, set once at start (ocgc_start.c) before the
 * first file is made, and read by every later making and withdrawal (a
 * forked child's file, the exit's). */
struct caml_ocgc_file_cfg {
  char dir[PATH_MAX];  /* the ring folder: absolute, no trailing slash */
  unsigned ring_log2;  /* the ring's size in words, log 2 (OCAMLRUNPARAM e=) */
  int preserve;        /* OCAML_RUNTIME_EVENTS_PRESERVE: keep the ring at exit */
  int phases_level;    /* OCGC_PHASES (1 by default), for the file's flags */
};
extern struct caml_ocgc_file_cfg caml_ocgc_file_cfg;

/* The one line a failure prints: "ocgc: [what] [dir]: why; GC events are
 * off for this process", in one write(2); with [must_not_block], only if
 * stderr takes it at once ([err] 0: an invalid setting). */
void caml_ocgc_complain(const char *what, const char *dir, int err, int must_not_block);

/* Open the ring folder [dir] without following a link, and check that it
 * is the effective user's: the descriptor, or -1 with errno. */
int caml_ocgc_open_dir(const char *dir);

/* Create, fill and publish the ring in the folder [dfd], for a process of
 * the pid namespace [pidns], and point caml_ocgc_file, the ring writer and
 * the allocation profile at it.  Returns 0 or an errno (then nothing is
 * left in the folder, nor mapped). */
int caml_ocgc_file_create(int dfd, unsigned long pidns);

/* Whether descriptor [fd] is still our ring's memfd.  The program owns its
 * descriptor table: it may close ours (a daemon closing 3..1023,
 * close_range, dup2 over it) and open a file of its own under the number,
 * which we must never close.  Our mapping holds the memfd's inode, so no
 * other file has its device and inode while we live. */
int caml_ocgc_fd_is_ring(int fd);

/* At exit, once the ring's end is written (or it is left running):
 * remove the alias (or file) and the identity link, each only if it is
 * still ours, or with OCAML_RUNTIME_EVENTS_PRESERVE leave a regular file
 * holding the ring in the alias's place. */
void caml_ocgc_file_withdraw(void);

#endif /* CAML_OCGC_FILE_H */
