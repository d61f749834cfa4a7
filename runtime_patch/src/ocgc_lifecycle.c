/* ocgc_lifecycle.c - what happens to the producer's ring at fork and
 * exit: the handlers the C library runs (pthread_atfork, atexit), and a
 * forked child's own file, made at its first GC event.  On top of the
 * producer but for the start (ocgc_start.c, which installs the handlers):
 * it calls down into the file (ocgc_file.c), the hooks and the allocation
 * profile, and is called back by the writers only through the pointer it
 * leaves in ocgc_writer.h's state (caml_ocgc_file.reopen).
 *
 * Invariants:
 * - A forked child never writes into its parent's mapping: the child
 *   handler unmaps it (and closes the parent's memfd, once fstat proves
 *   the number is still the ring's: caml_ocgc_fd_is_ring), and the child's
 *   own ring is made on its first GC event (an allocation sample never
 *   makes it: ocgc_memprof.c keeps it until then), so a fork followed by
 *   exec leaves nothing behind.
 * - The memfd's number is the program's to take: before a fork, a number
 *   that no longer holds the ring is said once and forgotten, by one of
 *   the threads that fork at once (before_fork); the child proves it again.
 * - At exit, from whichever thread calls exit(): the handler first takes
 *   the ring over from the hooks (caml_ocgc_guard_close); only then does it
 *   write RING_STOP, the final totals and state EXITED.  If it cannot be
 *   sure it is the only writer, it writes nothing and the file keeps state
 *   RUNNING (readers see a dead pid), and it says so in one line.  Then
 *   the file is withdrawn (caml_ocgc_file_withdraw).
 * - The handlers are installed once per process image, after its first
 *   file was made; a process whose ring never was on has nothing to do in
 *   them.
 * The child's file is made on the mutator thread with the runtime lock
 * held; the handlers run where the C library runs them. */

#define CAML_INTERNALS
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "caml/ocgc.h"
#include "ocgc_clock.h"
#include "ocgc_entries.h"
#include "ocgc_file.h"
#include "ocgc_hooks.h"
#include "ocgc_lifecycle.h"
#include "ocgc_memprof.h"
#include "ocgc_place.h"
#include "ocgc_ring.h"
#include "ocgc_writer.h"

/* The exit could not take the ring over (a hook on another thread did not
 * finish within the guard's bound, or no barrier was to be had): one line,
 * only if stderr takes it at once, so that an exit is never held by it. */
static void say_left_running(pid_t pid)
{
  char line[160];
  struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};
  int len = snprintf(line, sizeof line,
                     "ocgc: process %d: the ring is left as running: a GC hook on another "
                     "thread did not finish in time\n", (int)pid);
  if (len <= 0 || (size_t)len >= sizeof line) return;
  if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT)) (void)!write(STDERR_FILENO, line, (size_t)len);
}

/* Any thread may call exit(): a C thread, or a C main returning while OCaml
 * runs on another.  The ring is written only once it is ours alone. */
static void at_exit(void)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  if (f->map == NULL || f->pid != getpid()) return;
  if (caml_ocgc_guard_close()) caml_ocgc_stop();
  else say_left_running(f->pid);
  __atomic_store_n(&caml_ocgc_enabled, 0, __ATOMIC_RELAXED);
  caml_ocgc_file_withdraw();
}

/* Before a fork, in the forking thread: if the program has taken the
 * memfd's number, say so once and forget the number, so that no child
 * ever looks at it.  (The ring goes on: its name leads to the mapping,
 * not to the descriptor; only readers that reach rings through a
 * descriptor, unprivileged libocgc, lose it.)  The child checks again:
 * another thread may close the number between here and the fork. */
static void before_fork(void)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  char line[200];
  struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};
  /* Threads may fork at once: the number is forgotten, and said, by one.
   * Relaxed: the number is all that is shared (pairs with no other store). */
  int fd = __atomic_load_n(&f->memfd, __ATOMIC_RELAXED), len;
  if (f->map == NULL || fd < 0 || f->pid != getpid() || caml_ocgc_fd_is_ring(fd)) return;
  if (!__atomic_compare_exchange_n(&f->memfd, &fd, -1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    return;
  len = snprintf(line, sizeof line,
                 "ocgc: process %d: descriptor %d is no longer the ring's (the program "
                 "closed or reused it): it is left alone, and the ring is reached by "
                 "root only\n", (int)f->pid, fd);
  if (len > 0 && (size_t)len < sizeof line && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT))
    (void)!write(STDERR_FILENO, line, (size_t)len);
}

/* The forked child's own file, at its first GC event, timed [at]
 * (caml_ocgc_file.reopen: ocgc_writer.h). */
static int reopen(uint64_t at)
{
  int err, dfd;
  caml_ocgc_file.lazy = 0;
  dfd = caml_ocgc_open_dir(caml_ocgc_file_cfg.dir);
  if (dfd < 0) {
    err = errno;
  } else {
    err = caml_ocgc_file_create(dfd, caml_ocgc_pidns());
    close(dfd);
  }
  if (err != 0) {
    caml_ocgc_complain("cannot create the forked child's ring in", caml_ocgc_file_cfg.dir,
                       err, 1);
    __atomic_store_n(&caml_ocgc_enabled, 0, __ATOMIC_RELAXED);
    return 0;
  }
  caml_ocgc_started((uint64_t)caml_ocgc_file.parent_pid, at);
  return 1;
}

static void in_child(void)
{
  struct caml_ocgc_file *f = &caml_ocgc_file;
  int ours;
  if (f->map == NULL && !f->lazy) return; /* the ring was never on */
  /* Proved while the parent's mapping still holds the inode, and with no
   * other thread left to change the table. */
  ours = caml_ocgc_fd_is_ring(f->memfd);
  if (f->map != NULL) {
    /* Only our address space loses the parent's pages. */
    munmap(f->map, f->map_size);
    f->map = NULL;
    f->ext = NULL;
    f->totals = NULL;
    f->mp = NULL;
    caml_ocgc_place_forked();
  }
  caml_ocgc_mp_forked();
  caml_ocgc_clock.flags = NULL;
  caml_ocgc_ring_detach();
  if (ours) close(f->memfd); /* the parent's ring: it is not ours to keep open */
  f->memfd = -1;
  f->is_memfd = 0;
  f->aliased = 0;
  /* Our parent, even if it never made its own file (a double fork). */
  f->parent_pid = getppid();
  f->reopen = reopen;
  f->lazy = 1;
}

void caml_ocgc_lifecycle_install(void)
{
  static int installed;
  if (installed) return;
  installed = 1;
  pthread_atfork(before_fork, NULL, in_child);
  atexit(at_exit);
}
