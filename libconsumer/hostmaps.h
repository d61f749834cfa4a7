/* hostmaps.h - which files the processes of this host map, read once from
 * every /proc/PID/maps (private to libconsumer/).  `ocgc ls` asks it before
 * calling a ring stale, because the pid a ring (or its link) names is the
 * pid in its producer's own pid namespace: from here it may be dead or
 * another process while the producer, in a container, still writes. */
#ifndef OCGC_HOSTMAPS_H
#define OCGC_HOSTMAPS_H

#include <sys/types.h>

struct hostmaps;

/* Bounds of one scan (0 in a field: its default).  A scan that reaches one
 * is incomplete: it no longer proves that a file is mapped by nobody. */
struct hostmaps_limits {
  unsigned long lines_per_proc; /* maps lines read of one process */
  unsigned long lines_total;    /* maps lines read in all */
  unsigned long long bytes_total; /* maps bytes read in all */
  unsigned long files_max;      /* distinct (dev, inode) pairs kept */
  unsigned long memfds_max;     /* distinct ocgc:<P>.events names kept */
};

/* Read /proc/PID/maps of every process under [proc] ("/proc" when NULL)
 * but our own; a process that vanishes or denies access is skipped.
 * [lim] may be NULL (the defaults).  Returns 0 with *out set, -ENOMEM, or
 * -errno when [proc] cannot be read (*out is then NULL). */
int hostmaps_scan(const char *proc, const struct hostmaps_limits *lim, struct hostmaps **out);

/* 1 if every maps file that could be read was read whole, 0 if a limit
 * cut the scan short. */
int hostmaps_complete(const struct hostmaps *h);

/* A pid (as [proc] numbers it) of a process that maps the file dev:ino,
 * or 0 if none was seen to. */
int hostmaps_file(const struct hostmaps *h, dev_t dev, ino_t ino);

/* Whether process [pid] maps a ring as its producer does (a shared,
 * writable mapping of a *.events file, or one whose name was too long to
 * tell): 1 or 0. */
int hostmaps_producer(const struct hostmaps *h, int pid);

/* A pid of a process that maps a memfd named "ocgc:<p>.events" (ocgc's
 * memory ring of a process that calls itself p), or 0. */
int hostmaps_memfd(const struct hostmaps *h, long p);

/* Counts, for tests and messages: distinct files, memfd names, processes
 * whose maps were read. */
void hostmaps_counts(const struct hostmaps *h, unsigned long *files, unsigned long *memfds,
                     unsigned long *procs);

/* Processes whose maps may not be read (another user's, unless root; a
 * process of ours that is not dumpable): skipped, counted. */
unsigned long hostmaps_denied(const struct hostmaps *h);

void hostmaps_free(struct hostmaps *h);

#endif /* OCGC_HOSTMAPS_H */
