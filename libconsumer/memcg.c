/* memcg.c - a watched process's memory cgroup (memcg.h): its path read
 * once from /proc/PID/cgroup (v1: the hierarchy whose controllers include
 * memory; else v2's "0::PATH"), the hierarchy's mount found in
 * /proc/self/mountinfo (a cgroup mount with the memory option, or a
 * cgroup2), and its figures read from there at each refresh: usage,
 * limit, peak and OOM kills (v1: memory.usage_in_bytes, .limit_in_bytes,
 * .max_usage_in_bytes, memory.oom_control's oom_kill; v2: memory.current,
 * .max, .peak, memory.events' oom_kill).
 *
 * Invariants: a cgroup's path is the hierarchy's bytes (its names are
 * whoever made the cgroup's, a delegated user's too): it is bounded
 * (CG_PATH_MAX, CG_DEPTH_MAX components, none empty, "." or ".."), and
 * walked one component at a time from the mount's directory with
 * O_NOFOLLOW, so no link is followed and nothing outside the mount is
 * opened; every file is read through a fixed buffer; the roots of /proc
 * and of the mount points may be a unit test's tree (memcg_mounts_find_at);
 * when the cgroup has no OOM-kill count (v2's root, a v1 kernel before
 * 4.13), or is removed before the death is read, the host's (/proc/vmstat
 * oom_kill, which counts every OOM kill, read at most every 100 ms for
 * all processes) is the one compared. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memcg.h"

#define CG_PATH_MAX 4096
#define CG_DEPTH_MAX 64
#define CGROUP_FILE_MAX 16384       /* /proc/PID/cgroup read, at most */
#define MOUNTINFO_LINES_MAX 100000
#define LOOK_AGAIN_NS 60000000000u  /* mounts looked for again, while none */
/* v1 says "no limit" as the page counter's largest value (LONG_MAX rounded
 * to pages): anything this big is none. */
#define V1_UNLIMITED (1ull << 62)

/* A whole small file at [dfd]/[name] (no link followed) into buf: its
 * length, or -errno. */
static ssize_t read_at(int dfd, const char *name, char *buf, size_t n)
{
  size_t len = 0;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -errno;
  while (len + 1 < n) {
    ssize_t got = read(fd, buf + len, n - 1 - len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    len += (size_t)got;
  }
  close(fd);
  buf[len] = '\0';
  return (ssize_t)len;
}

static int parse_u64(const char *s, uint64_t *out)
{
  char *end;
  unsigned long long v;
  if (strncmp(s, "max", 3) == 0 && (s[3] == '\n' || s[3] == '\0')) {
    *out = UINT64_MAX;
    return 0;
  }
  if (*s < '0' || *s > '9') return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0 || (*end != '\n' && *end != '\0' && *end != ' ')) return -1;
  *out = v;
  return 0;
}

/* The value of the line "KEY N" of [text]: 0, or -1. */
static int keyed(const char *text, const char *key, uint64_t *out)
{
  size_t k = strlen(key);
  const char *p = text;
  while (p != NULL && *p != '\0') {
    if (strncmp(p, key, k) == 0 && p[k] == ' ') return parse_u64(p + k + 1, out);
    p = strchr(p, '\n');
    if (p != NULL) p++;
  }
  return -1;
}

static int file_u64(int dfd, const char *name, uint64_t *out)
{
  char buf[64];
  if (read_at(dfd, name, buf, sizeof buf) <= 0) return -1;
  return parse_u64(buf, out);
}

static int file_keyed(int dfd, const char *name, const char *key, uint64_t *out)
{
  char buf[4096];
  if (read_at(dfd, name, buf, sizeof buf) <= 0) return -1;
  return keyed(buf, key, out);
}

/* mountinfo's octal escapes (\040 and so on) undone in place. */
static void unescape(char *s)
{
  char *o = s;
  while (*s != '\0') {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
        s[3] >= '0' && s[3] <= '7') {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 4;
    } else {
      *o++ = *s++;
    }
  }
  *o = '\0';
}

/* Whether the comma-separated [list] holds [word]. */
static int has_word(const char *list, const char *word)
{
  size_t k = strlen(word);
  const char *p = list;
  while (p != NULL) {
    if (strncmp(p, word, k) == 0 && (p[k] == ',' || p[k] == '\0' || p[k] == '\n')) return 1;
    p = strchr(p, ',');
    if (p != NULL) p++;
  }
  return 0;
}

/* One mountinfo line: a memory hierarchy's mount kept in ms. */
static void mount_line(struct memcg_mounts *ms, char *line)
{
  char *f[6], *sep, *fstype, *super, *save = NULL, path[4096 + 256];
  unsigned i;
  int v2, fd;
  for (i = 0; i < 6; i++)
    if ((f[i] = strtok_r(i == 0 ? line : NULL, " ", &save)) == NULL) return;
  /* Optional fields, up to the lone "-". */
  while ((sep = strtok_r(NULL, " ", &save)) != NULL && strcmp(sep, "-") != 0) {}
  if (sep == NULL || (fstype = strtok_r(NULL, " ", &save)) == NULL ||
      strtok_r(NULL, " ", &save) == NULL || (super = strtok_r(NULL, " \n", &save)) == NULL)
    return;
  if (strcmp(fstype, "cgroup2") == 0) v2 = 1;
  else if (strcmp(fstype, "cgroup") == 0 && has_word(super, "memory")) v2 = 0;
  else return;
  unescape(f[3]);
  unescape(f[4]);
  if (ms->n >= MEMCG_MOUNTS || strlen(f[3]) >= sizeof ms->m[0].root) return;
  for (i = 0; i < ms->n; i++)
    if (ms->m[i].v2 == v2 && strcmp(ms->m[i].root, f[3]) == 0) return; /* the same, again */
  if (snprintf(path, sizeof path, "%s%s", ms->fs_root, f[4]) >= (int)sizeof path) return;
  if ((fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) return;
  ms->m[ms->n].v2 = v2;
  ms->m[ms->n].dirfd = fd;
  snprintf(ms->m[ms->n].root, sizeof ms->m[0].root, "%s", f[3]);
  ms->n++;
}

unsigned memcg_mounts_find_at(struct memcg_mounts *ms, const char *proc_root, const char *fs_root)
{
  char path[512], line[8192];
  unsigned lines = 0;
  FILE *f;
  memcg_mounts_free(ms);
  snprintf(ms->proc_root, sizeof ms->proc_root, "%s", proc_root);
  snprintf(ms->fs_root, sizeof ms->fs_root, "%s", fs_root);
  ms->looked = 1;
  snprintf(path, sizeof path, "%s/self/mountinfo", proc_root);
  if ((f = fopen(path, "re")) == NULL) return 0;
  while (lines++ < MOUNTINFO_LINES_MAX && fgets(line, sizeof line, f) != NULL) {
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] != '\n' && !feof(f)) {
      /* longer than the buffer: not a cgroup mount we can use; skipped */
      int c;
      while ((c = getc(f)) != EOF && c != '\n') {}
      continue;
    }
    mount_line(ms, line);
  }
  fclose(f);
  return ms->n;
}

void memcg_mounts_free(struct memcg_mounts *ms)
{
  unsigned i;
  for (i = 0; i < ms->n; i++) close(ms->m[i].dirfd);
  ms->n = 0;
}

int memcg_parse_cgroup(const char *text, char *out, size_t n, int *v2)
{
  const char *p = text, *v2path = NULL;
  size_t v2len = 0;
  while (p != NULL && *p != '\0') {
    const char *eol = strchr(p, '\n'), *c1 = strchr(p, ':'), *c2;
    size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);
    if (c1 != NULL && c1 < p + len && (c2 = memchr(c1 + 1, ':', (size_t)(p + len - c1 - 1))) != NULL) {
      const char *path = c2 + 1;
      size_t plen = (size_t)(p + len - path);
      char ctl[256];
      size_t clen = (size_t)(c2 - c1 - 1);
      if (strncmp(p, "0:", 2) == 0 && clen == 0) {
        v2path = path;
        v2len = plen;
      } else if (clen > 0 && clen < sizeof ctl) {
        memcpy(ctl, c1 + 1, clen);
        ctl[clen] = '\0';
        if (has_word(ctl, "memory")) {
          if (plen >= n) return -1;
          memcpy(out, path, plen);
          out[plen] = '\0';
          *v2 = 0;
          return 0;
        }
      }
    }
    p = eol != NULL ? eol + 1 : NULL;
  }
  if (v2path == NULL || v2len >= n) return -1;
  memcpy(out, v2path, v2len);
  out[v2len] = '\0';
  *v2 = 1;
  return 0;
}

/* [path] (absolute in its hierarchy) below the mount [m]: the rest, or
 * NULL if the mount does not show it. */
static const char *below(const struct memcg_mount *m, const char *path)
{
  size_t k = strlen(m->root);
  if (path[0] != '/') return NULL;
  if (strcmp(m->root, "/") == 0) return path + 1;
  if (strncmp(path, m->root, k) != 0) return NULL;
  if (path[k] == '\0') return path + k;
  return path[k] == '/' ? path + k + 1 : NULL;
}

/* The components of [rel] are names (no "", ".", ".."), at most
 * CG_DEPTH_MAX of them. */
static int rel_ok(const char *rel)
{
  const char *p = rel;
  unsigned depth = 0;
  if (*rel == '\0') return 1;
  for (;;) {
    const char *e = strchr(p, '/');
    size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
    if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) return 0;
    if (++depth > CG_DEPTH_MAX) return 0;
    if (e == NULL) return 1;
    p = e + 1;
  }
}

/* The cgroup's directory, walked from the mount's with O_NOFOLLOW: a
 * descriptor, or -1. */
static int open_cgroup(const struct memcg_mount *m, const char *rel)
{
  char comp[256];
  const char *p = rel;
  int fd = openat(m->dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  while (fd >= 0 && *p != '\0') {
    const char *e = strchr(p, '/');
    size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
    int next;
    if (len >= sizeof comp) { close(fd); return -1; }
    memcpy(comp, p, len);
    comp[len] = '\0';
    next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(fd);
    fd = next;
    p = e != NULL ? e + 1 : p + len;
  }
  return fd;
}

static int host_oom(const struct memcg_mounts *ms, uint64_t *out)
{
  char buf[16384];
  int fd = open(ms->proc_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  ssize_t len;
  if (fd < 0) return -1;
  len = read_at(fd, "vmstat", buf, sizeof buf);
  close(fd);
  return len > 0 ? keyed(buf, "oom_kill", out) : -1;
}

void memcg_follow(struct memcg_mounts *ms, struct memcg_at *at, int pid, uint64_t now_ns,
                  struct ocgc_memcg *pub)
{
  char dir[512], text[CGROUP_FILE_MAX], cg[CG_PATH_MAX];
  unsigned i;
  int fd, v2;
  ssize_t len;
  at->mount = -1;
  at->rel = NULL;
  pub->known = 0;
  if (ms->proc_root[0] == '\0') snprintf(ms->proc_root, sizeof ms->proc_root, "/proc");
  if (!ms->looked || (ms->n == 0 && now_ns - ms->looked_ns >= LOOK_AGAIN_NS)) {
    char proc_root[sizeof ms->proc_root], fs_root[sizeof ms->fs_root];
    memcpy(proc_root, ms->proc_root, sizeof proc_root);
    memcpy(fs_root, ms->fs_root, sizeof fs_root);
    memcg_mounts_find_at(ms, proc_root, fs_root);
    ms->looked_ns = now_ns;
  }
  snprintf(dir, sizeof dir, "%s/%d", ms->proc_root, pid);
  if ((fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0) {
    len = read_at(fd, "cgroup", text, sizeof text);
    close(fd);
    if (len > 0 && memcg_parse_cgroup(text, cg, sizeof cg, &v2) == 0) {
      size_t k = strlen(cg) < sizeof pub->path ? strlen(cg) : sizeof pub->path - 1;
      memcpy(pub->path, cg, k); /* cut */
      pub->path[k] = '\0';
      for (i = 0; i < ms->n; i++) {
        const char *rel;
        if (ms->m[i].v2 != v2 || (rel = below(&ms->m[i], cg)) == NULL || !rel_ok(rel)) continue;
        if ((at->rel = strdup(rel)) != NULL) at->mount = (int)i;
        break;
      }
    }
  }
  memcg_update(ms, at, pub, 1, now_ns);
}

void memcg_update(struct memcg_mounts *ms, struct memcg_at *at, struct ocgc_memcg *pub,
                  int alive, uint64_t now_ns)
{
  const struct memcg_mount *m = at->mount >= 0 ? &ms->m[at->mount] : NULL;
  uint64_t v, oom = 0;
  int fd = m != NULL ? open_cgroup(m, at->rel) : -1, have_oom = 0;
  /* A cgroup that cannot be read (removed after the death) leaves the
   * figures as last read. */
  if (fd >= 0) {
    if (file_u64(fd, m->v2 ? "memory.current" : "memory.usage_in_bytes", &v) == 0) {
      pub->known = 1;
      pub->v2 = m->v2;
      pub->usage = v;
      if (file_u64(fd, m->v2 ? "memory.max" : "memory.limit_in_bytes", &v) == 0)
        pub->limit = !m->v2 && v >= V1_UNLIMITED ? UINT64_MAX : v;
      else
        pub->limit = UINT64_MAX;
      pub->peak = file_u64(fd, m->v2 ? "memory.peak" : "memory.max_usage_in_bytes", &v) == 0 ? v : 0;
      if (file_keyed(fd, m->v2 ? "memory.events" : "memory.oom_control", "oom_kill", &oom) == 0) {
        pub->oom_kills = oom;
        have_oom = 1;
      }
    }
    close(fd);
  }
  /* The host's, read once for every process within MEMCG_HOST_EVERY_NS. */
  if (ms->host_ns == 0 || now_ns - ms->host_ns >= MEMCG_HOST_EVERY_NS) {
    ms->have_host = host_oom(ms, &ms->host_oom) == 0;
    ms->host_ns = now_ns != 0 ? now_ns : 1;
  }
  if (alive) {
    at->have_base = have_oom;
    at->oom_base = oom;
    at->have_host_base = ms->have_host;
    at->host_base = ms->host_oom;
  } else {
    at->have_now = have_oom;
    at->oom_now = oom;
    at->have_host_now = ms->have_host;
    at->host_now = ms->host_oom;
  }
}

int memcg_oom_grew(const struct memcg_at *at)
{
  if (at->have_base && at->have_now) return at->oom_now > at->oom_base;
  return at->have_host_base && at->have_host_now && at->host_now > at->host_base;
}

void memcg_base_keep(struct memcg_at *at, const struct memcg_at *was)
{
  at->have_base = was->have_base;
  at->oom_base = was->oom_base;
  at->have_host_base = was->have_host_base;
  at->host_base = was->host_base;
}

int memcg_base_moved(const struct memcg_at *at, const struct memcg_at *was)
{
  return at->have_base != was->have_base || at->oom_base != was->oom_base ||
         at->have_host_base != was->have_host_base || at->host_base != was->host_base;
}

void memcg_at_free(struct memcg_at *at)
{
  free(at->rel);
  at->rel = NULL;
  at->mount = -1;
}
