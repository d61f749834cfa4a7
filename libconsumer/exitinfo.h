/* exitinfo.h - how a watched process ended (private; code in
 * exitinfo.c): a pidfd held while it lives, and what the kernel says of
 * its end (the pidfd's exit information, or /proc/PID/stat's exit code
 * while it is a zombie), for struct ocgc_exit (ocgc/exit.h). */
#ifndef OCGC_EXITINFO_H
#define OCGC_EXITINFO_H

#include <stdint.h>

#include "ocgc/exit.h"

/* How long a process seen gone, whose end the kernel has not said yet
 * (not yet a zombie, not reaped), is kept and asked again. */
#define EXITINFO_ENDING_NS 1000000000u /* 1 s */
/* How often it is asked meanwhile. */
#define EXITINFO_POLL_NS 20000000u     /* 20 ms */

struct exitinfo {
  int pidfd;                 /* -1: none (no pidfd_open, a descriptor refused, or
                                the pid not proved that process's) */
  int no_get_info;           /* PIDFD_GET_INFO refused (a kernel before 6.13) */
  uint64_t ending_ns;        /* cm_mono_ns() when the watch first saw it gone; 0: not */
};

/* What /proc/PID/stat says of a process that exitinfo needs. */
struct exit_stat {
  char state;                /* field 3 */
  unsigned long flags;       /* field 9: PF_* (PF_EXITING 0x4) */
  uint64_t start_time;       /* field 22 */
  int have_exit_code;        /* field 52 is there (Linux 3.5 and later) */
  int exit_code;             /* field 52: a wait status, while a zombie */
};

/* Parse a stat line: 0, or -1. */
int exitinfo_parse_stat(const char *line, struct exit_stat *out);

/* Fill [e] from a wait status (known 1); a status that tells no end (a
 * stop) leaves known 0 and how OCGC_EXIT_UNKNOWN. */
void exitinfo_decode(int status, struct ocgc_exit *e);

/* Hold a pidfd on [pid] if it is still the process started at
 * [start_ticks] once the pidfd is open (a pid reused in between is not
 * taken); else pidfd is -1. */
void exitinfo_open(struct exitinfo *x, int pid, uint64_t start_ticks);
void exitinfo_close(struct exitinfo *x);

enum exitinfo_verdict {
  EXITINFO_ENDED,            /* it ended: *e filled (gone_ns, and known, how ... if
                                the kernel said) */
  EXITINFO_ENDING,           /* it is ending, the kernel has not said how yet: ask
                                again in EXITINFO_POLL_NS */
  EXITINFO_ALIVE             /* it lives on (an exec dropped its ring): no end */
};

/* [pid] (started at [start_ticks], of user [uid]) was seen gone at [now]
 * (its ring's [exit_mark]: the runtime wrote its exit): whether and how
 * it ended.  Never waits. */
enum exitinfo_verdict exitinfo_settle(struct exitinfo *x, int pid, uint64_t start_ticks,
                                      unsigned uid, int exit_mark, uint64_t now,
                                      struct ocgc_exit *e);

struct ocgc_watched;
/* The pidfd a watch holds on [w] (watch.c), or -1: it polls readable once
 * the process has exited, for a poll set that would wake at a death.  The
 * watch's own: valid while [w] is. */
int watch_pidfd(const struct ocgc_watched *w);

#endif /* OCGC_EXITINFO_H */
