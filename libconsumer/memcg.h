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
#define MEMCG_OOM_CGROUP 1
#define MEMCG_OOM_HOST 2

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
  char proc_root[256];       /* "/proc", or a unit test's tree */
  char fs_root[256];         /* "" (mount points as they are), or a unit test's tree */
};

/* Where one process's memory cgroup is, and its OOM-kill count. */
struct memcg_at {
  int mount;                 /* its index in memcg_mounts, -1: none found */
  char *rel;                 /* its path below that mount's (malloc'd) */
  int have_base;             /* oom_base was read while the process lived */
  int src;                   /* whose count: 0 none yet, MEMCG_OOM_CGROUP, MEMCG_OOM_HOST
                                (/proc/vmstat: the cgroup has none) */
  uint64_t oom_base;         /* the count last read while it lived */
  uint64_t oom_now;          /* the count last read */
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
/* Its figures read again into *pub; [alive]: the process lived as they were
 * read, so the OOM-kill count is its new base. */
void memcg_update(const struct memcg_mounts *ms, struct memcg_at *at, struct ocgc_memcg *pub,
                  int alive);
/* Whether the OOM-kill count grew since it was last read while the
 * process lived (memcg_update with alive 0 read it last). */
int memcg_oom_grew(const struct memcg_at *at);
void memcg_at_free(struct memcg_at *at);

/* Parse [text], a /proc/PID/cgroup: the path of the memory controller's
 * hierarchy (v1, *v2 = 0) or else of v2's ("0::PATH", *v2 = 1), NUL-ended
 * in [out] (n bytes).  0, or -1 when neither is there or fits. */
int memcg_parse_cgroup(const char *text, char *out, size_t n, int *v2);

#endif /* OCGC_MEMCG_H */
