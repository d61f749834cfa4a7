/* procfs.h - what /proc says about a process (private).
 *
 * Every file read here is written by the kernel, but what it says of a
 * process (its command name, the paths in its maps) is the process's
 * choice: parsed strictly, never used to open anything. */
#ifndef OCGC_PROCFS_H
#define OCGC_PROCFS_H

#include <stdint.h>
#include <sys/types.h>

/* What /proc/PID/stat says about a process. */
struct ocgc_proc_ident {
  char state;          /* field 3: R, S, D, Z, X, ... */
  uint64_t start_time; /* field 22: clock ticks after boot */
};

/* Read a whole small file into buf (NUL-terminated, cut at n - 1 bytes).
 * Returns the length, or -errno. */
ssize_t ocgc_proc_read_small(const char *path, char *buf, size_t n);

/* The pid a /proc entry's [name] is (1 to INT_MAX, decimal, no sign, no
 * leading zero), or 0 if it names no process. */
int ocgc_proc_pid_name(const char *name);

/* Returns 0, -ESRCH (no such process, or a zombie or dead one: it will
 * never write again), or another -errno. */
int ocgc_proc_ident(int pid, struct ocgc_proc_ident *out);

/* The pid of [pid] in its own (innermost) pid namespace: the last field of
 * NSpid in /proc/PID/status, [pid] itself on a kernel without that line
 * (before 4.1, where namespaces cannot be told).  Returns 0 or -errno
 * (-ESRCH: no such process). */
int ocgc_proc_ns_pid(int pid, uint64_t *out);

/* Whether the process whose /proc/PID/status is [text] lives with no
 * SIGKILL queued for it (SigPnd, ShdPnd): 1, else 0 (a zombie or dead one,
 * one whose end has begun, or a text without those lines). */
int ocgc_proc_status_unkilled(const char *text);
/* The same of [pid] now: 1, 0, or -errno (-ESRCH: no such process). */
int ocgc_proc_unkilled(int pid);

/* The owner of /proc/PID (the process's real uid), or 0 if it cannot be
 * read. */
unsigned ocgc_proc_uid(int pid);

/* The current boot id, without its newline.  Returns 0 or -errno. */
int ocgc_proc_boot_id(char *out, size_t n);

/* /proc/PID/comm without its newline (the process's own choice of bytes),
 * or "" if it cannot be read. */
void ocgc_proc_comm(int pid, char *out, size_t n);

/* Called with each line of a maps file (NUL-terminated, without its
 * newline, modifiable); a nonzero return ends the reading. */
typedef int (*ocgc_maps_fn)(char *line, void *ctx);

/* Read /proc/PID/maps once, calling fn on each line.  Returns what fn
 * returned to stop it, else 0 at the end; -ESRCH (no such process),
 * -EACCES (not allowed to read it), or another -errno. */
int ocgc_proc_maps_each(int pid, ocgc_maps_fn fn, void *ctx);

/* Whether process [pid] maps the file dev:ino shared and writable, as a
 * producer maps its ring: 1, 0, or an error as ocgc_proc_maps_each(). */
int ocgc_proc_maps_file(int pid, uint64_t dev, uint64_t ino);

/* ocgc_proc_maps_file(), and on 1 the address range of the first such
 * mapping in *start and *end (either may be NULL). */
int ocgc_proc_maps_file_at(int pid, uint64_t dev, uint64_t ino, unsigned long *start,
                           unsigned long *end);

/* Whether process [pid] still has a mapping of exactly [start, end), by
 * one lookup of /proc/PID/map_files/START-END (no maps read): 1, 0, or
 * -ESRCH, -EACCES (no ptrace read access), -ENOTSUP (no map_files). */
int ocgc_proc_maps_range(int pid, unsigned long start, unsigned long end);

#endif /* OCGC_PROCFS_H */
