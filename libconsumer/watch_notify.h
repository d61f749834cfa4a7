/* watch_notify.h - the ring folders a watch is told of by inotify
 * (private; code in watch_notify.c): the names of new entries, turned into
 * the pids they name, for watch.c to open at once. */
#ifndef OCGC_WATCH_NOTIFY_H
#define OCGC_WATCH_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

struct notify;

/* inotify watches held, at most: the folders past it are found by the
 * listing only. */
#define NOTIFY_MAX_WATCHES 256
/* Bytes of events read per call: at most 256 events (each at least 16
 * bytes, 32 with a name); the rest stay queued for the next call. */
#define NOTIFY_BUF 4096
/* Pids given per call, at most (a buffer's events name no more). */
#define NOTIFY_MAX_PIDS 256

/* Watch the ring folders: [dir] alone (the caller's OCAML_RUNTIME_EVENTS_DIR),
 * else the caller's default folders (ocgc_default_dir(); the base of each
 * one missing, for its making), and with [every_user] every user's folders
 * of the same rule and their bases (/dev/shm and /tmp: ocgc-UID;
 * /run/user: UID/ocgc), each owned by its user.  0 and *out, or -errno
 * (no inotify; no folder could be watched). */
int notify_open(const char *dir, int every_user, struct notify **out);
/* The inotify descriptor (nonblocking, close-on-exec). */
int notify_fd(const struct notify *n);
/* Read what is queued, one buffer at most: the pids the new entries of
 * the ring folders name, each once, into pids[0..NOTIFY_MAX_PIDS);
 * returns how many.  A folder made in a watched base is watched then, and
 * its entries already there given as if new.  *overflow is set when
 * something cannot be known this way (the kernel's queue overflowed, a
 * folder could not be watched): the caller then lists at once. */
size_t notify_read(struct notify *n, int *pids, int *overflow);
/* Folders and bases watched now. */
unsigned notify_watches(const struct notify *n);
void notify_free(struct notify *n);

/* The pid an entry's [name] of a ring folder names: PID.events (the
 * alias, or a regular ring), .ocgc-ring.NS.PID (the identity link; NS
 * must be [pidns], the reader's pid namespace, when that is known, not
 * 0); else 0 (temporary names, anything else). */
int notify_name_pid(const char *name, uint64_t pidns);
/* Whether [name] is a per-user folder's, ocgc-UID: 1 and *uid, else 0. */
int notify_name_uid(const char *name, unsigned *uid);

#endif /* OCGC_WATCH_NOTIFY_H */
