/* memcg.h - a process's memory cgroup (private; code in memcg.c): where
 * it is (cgroup v1's memory hierarchy or cgroup v2), its figures (usage,
 * limit, peak, OOM kills), and the OOM-kill count a watch compares at a
 * death (its cgroup's, or the host's /proc/vmstat when the cgroup has
 * none). */
#ifndef OCGC_MEMCG_H
#define OCGC_MEMCG_H

#include <stdint.h>

#include "ocgc/exit.h"

#define MEMCG_MOUNTS 4       /* mounts of the hierarchies remembered, at most */
/* The host's count is read at most this often, for all processes. */
#define MEMCG_HOST_EVERY_NS 100000000u /* 100 ms */

/* A mount of a memory hierarchy: v1's cgroup with the memory option, or a
 * cgroup2. */
struct memcg_mount {
  int v2;
  int dirfd;                 /* O_PATH of its mount point */
  char root[512];            /* the hierarchy's path shown there (mountinfo's field 4) */
};

/* The mounts, found once (and looked for again at most once a minute
 * while none is). */
struct memcg_mounts {
  int looked;
  uint64_t looked_ns;
  unsigned n;
  struct memcg_mount m[MEMCG_MOUNTS];
  int have_host;             /* host_oom read */
  uint64_t host_oom;         /* /proc/vmstat's oom_kill, ... */
  uint64_t host_ns;          /* ... as read at this cm_mono_ns() (0: never) */
  char proc_root[256];       /* "/proc", or a unit test's tree */
  char fs_root[256];         /* "" (mount points as they are), or a unit test's tree */
};

/* Where one process's memory cgroup is, and the OOM-kill counts: its
 * cgroup's, and the host's (/proc/vmstat), which stands in when the
 * cgroup has none or is removed before its death is read (a service
 * manager removes a unit's cgroup as its last process dies). */
struct memcg_at {
  int mount;                 /* its index in memcg_mounts, -1: none found */
  char *rel;                 /* its path below that mount's (malloc'd) */
  int have_base, have_now;   /* oom_base was read while it lived; oom_now after */
  uint64_t oom_base;         /* the cgroup's count last read while it lived */
  uint64_t oom_now;          /* the cgroup's count read at its death */
  int have_host_base, have_host_now;
  uint64_t host_base, host_now; /* the host's, the same */
};

/* Look for the mounts under [proc_root] (its self/mountinfo), their mount
 * points under [fs_root] ("" for /): for a unit test's tree.  Returns the
 * number found. */
unsigned memcg_mounts_find_at(struct memcg_mounts *ms, const char *proc_root, const char *fs_root);
void memcg_mounts_free(struct memcg_mounts *ms);

/* [pid]'s memory cgroup found (its path from PROC/PID/cgroup, once), and
 * its figures read into *pub, the OOM-kill count kept as the living
 * process's; the mounts are looked for first if need be (at [now_ns]). */
void memcg_follow(struct memcg_mounts *ms, struct memcg_at *at, int pid, uint64_t now_ns,
                  struct ocgc_memcg *pub);
/* Its figures read again into *pub at [now_ns]; [alive]: the process
 * lived as they were read, so the OOM-kill counts are its new base; else
 * they are its death's (read once, as soon as it is seen gone). */
void memcg_update(struct memcg_mounts *ms, struct memcg_at *at, struct ocgc_memcg *pub,
                  int alive, uint64_t now_ns);
/* Whether an OOM-kill count grew between its last read alive and its
 * death's: its cgroup's when both were read, else the host's. */
int memcg_oom_grew(const struct memcg_at *at);
/* The base of [at] (the counts read while it lived) put back as [was]
 * had it: a read found not to be a living process's after all. */
void memcg_base_keep(struct memcg_at *at, const struct memcg_at *was);
/* Whether the read into [at] changed its base from [was]'s. */
int memcg_base_moved(const struct memcg_at *at, const struct memcg_at *was);
void memcg_at_free(struct memcg_at *at);

/* Parse [text], a /proc/PID/cgroup: the path of the memory controller's
 * hierarchy (v1, *v2 = 0) or else of v2's ("0::PATH", *v2 = 1), NUL-ended
 * in [out] (n bytes).  0, or -1 when neither is there or fits. */
int memcg_parse_cgroup(const char *text, char *out, size_t n, int *v2);

#endif /* OCGC_MEMCG_H */
