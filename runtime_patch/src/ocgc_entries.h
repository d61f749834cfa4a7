/* ocgc_entries.h - what a producer puts in its ring folder, by name, and
 * what a memfd ring's link says (private to runtime/ocgc_*.c). */
#ifndef CAML_OCGC_ENTRIES_H
#define CAML_OCGC_ENTRIES_H

#include <stddef.h>
#include <sys/types.h>

/* Room for any name or link text below, with its NUL. */
#define CAML_OCGC_ENTRY_MAX 96

/* The pid namespace this process's pids belong to: the inode number of
 * /proc/self/ns/pid, or 0 when it cannot be read (no /proc). */
unsigned long caml_ocgc_pidns(void);

/* ".ocgc-<kind>.<ns>.<pid>", a hidden name of this producer's own, which
 * says whose pid <pid> is.  Kinds: "ring", a memfd ring's identity (a
 * link to its mapping); "tmp", an entry being made; "sweep", the sweep's
 * aside name. */
void caml_ocgc_entry_name(char *out, size_t n, const char *kind, unsigned long ns, pid_t pid);

/* Whether [name] is a ".ocgc-<kind>.<ns>.<pid>" name; if so, its ns and pid. */
int caml_ocgc_entry_parse(const char *name, const char *kind, unsigned long *ns, pid_t *pid);

/* The identity link's text for the mapping [map, map + size): its entry in
 * /proc/<pid>/map_files, with the pid as our /proc mount numbers us.
 * Returns 0, or -1 if it does not fit. */
int caml_ocgc_map_link(char *out, size_t n, const void *map, size_t size);

/* What the identity link [name] in [dfd] (of the ring of [pid], in this
 * process's pid namespace) says now: CAML_OCGC_LINK_NOT (not a map_files
 * link), _LIVE (its mapping is there and is the ring's memfd), _DEAD (the
 * mapping went with an exit, exec or kill, or another file is mapped there:
 * the pid was reused) or _UNKNOWN (the process may not be looked at:
 * another user's, or not dumpable). */
enum { CAML_OCGC_LINK_NOT, CAML_OCGC_LINK_LIVE, CAML_OCGC_LINK_DEAD, CAML_OCGC_LINK_UNKNOWN };
int caml_ocgc_ring_link_state(int dfd, const char *name, pid_t pid);

#endif /* CAML_OCGC_ENTRIES_H */
