/* children.h - producer children for the suites that attach to real
 * processes (test_attach.c, test_watch.c): forked children that do what
 * the patched runtime does (runtime_patch/src/ocgc_file.c) with a ring
 * written by ringgen, in the variants the suites need; they die with the
 * test (PR_SET_PDEATHSIG, and an alarm as a backstop).  Needs <check.h>:
 * the helpers that wait on a child assert. */
#ifndef OCGC_TEST_CHILDREN_H
#define OCGC_TEST_CHILDREN_H

#include <stdint.h>
#include <sys/types.h>

#include "ringgen.h"

enum pmode {
  P_OK,        /* a correct ocgc ring named <pid>.events */
  P_BAD_PID,   /* ext pid is not the child's (it is init's) */
  P_BAD_START, /* ext start time is not the child's */
  P_BAD_BOOT,  /* ext boot id is another boot's */
  P_EXITED,    /* state says exited */
  P_STOCK,     /* a stock OCaml 5 file: no extension block */
  P_NONE,      /* no ring at all */
  P_READONLY,  /* a ring mapped read-only, as a reader maps one */
  P_DELETED,   /* its ring file was unlinked (and closed) */
  P_MEMFD,     /* as ocgc's producer: the ring in a memfd named
                  "ocgc:<pid>.events", published as <pid>.events, a link
                  to /proc/<pid>/fd/<n> */
  P_ESCAPED,   /* a ring file literally named "a\\012b.events" (maps
                  shows the backslash as is), and "a\nb.events" a link to
                  /dev/null: the parser's unescaping must not open the link */
  P_OTHER,     /* a correct ring under another name: ring.events */
  P_TWO,       /* aaa.events, its own <pid>.events, zzz.events: whichever
                  way mmap places them, another comes first in the maps */
  P_ODD_COMM,  /* a correct ring, and a command name with ") (" in it */
  P_STOCK_LATE,/* as OCaml 5 makes its file: in place, sized (zeros), and
                  the header written [delay] ms later */
  P_FORGED_LINK,/* maps no ring, but plants <pid>.events, a link to a
                  correct ring of its own identity (forged.events) that it
                  unmapped: a reader that follows the link would attach */
  P_LINK_ZERO, /* maps no ring; <pid>.events is a link to /dev/zero */
};

#define N_EVENTS 5

struct child {
  pid_t pid;
  int ready;       /* read end: one byte when the ring is in place */
  char path[4096]; /* where the ring is (or would be) */
};

/* What the producer reads about itself: field 22 of /proc/PID/stat (0
 * if unreadable), and the boot id without its newline. */
uint64_t proc_start_time(pid_t pid);
void self_boot_id(char *out, size_t n);

void ms_sleep(unsigned ms);

/* In a child: make DIR/NAME through a temporary name, as the producer
 * does, fill its identity for [mode], leave it mapped.  0 or -1. */
int make_ring(const char *dir, const char *name, enum pmode mode);

/* Fork a producer in [dir] that makes its ring after [delay_ms]; wait for
 * it to say its ring is in place; both at once (start). */
void spawn(struct child *c, const char *dir, enum pmode mode, unsigned delay_ms);
void wait_ready(struct child *c);
struct child start(const char *dir, enum pmode mode);

/* A producer whose ring the test writes: the parent makes DIR/<pid>.events
 * with ringgen ([ring_words] words, one domain, the child's identity,
 * program "ringgen"), keeps it open in *f to write events and totals as it
 * pleases, and the child maps it read-write, as the producer does, and
 * sleeps until killed. */
struct child start_held(const char *dir, struct rg_file *f, uint64_t ring_words);

/* Kill and reap the child (nothing if it is gone already). */
void stop(struct child *c);

/* A pid that names no process: a child that has exited and been reaped. */
pid_t dead_pid(void);

#endif /* OCGC_TEST_CHILDREN_H */
