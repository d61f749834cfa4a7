/* ocgc_entries.c - the names of a producer's entries in its ring folder,
 * and the text of a memfd ring's link: the one place that says what they
 * are, for ocgc_file.c (which makes and removes them) and ocgc_stale.c
 * (which sweeps what dead processes left).
 *
 * Invariants:
 * - A pid means something only in one pid namespace, and a folder may be
 *   shared by several (a container's bind mount).  So every hidden name a
 *   producer makes says whose pid it holds: ".ocgc-<kind>.<ns>.<pid>",
 *   <ns> the inode of /proc/self/ns/pid (unique among live namespaces).
 *   Only entries of one's own namespace are judged by pid.
 * - A memfd ring's identity link leads to /proc/<pid>/map_files/<range>:
 *   the mapping's own entry, which exists exactly while the mapping does.
 *   Its pid is the one our /proc mount gives us (readlink /proc/self), so
 *   that a reader sharing that mount follows it to us.
 * - A link is judged by readlink(2) of its target: a /proc magic link's
 *   text names the file it stands for, without opening anything. */

#define CAML_INTERNALS
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc_entries.h"
#include "ocgc/wire.h" /* OCGC_DIR_ENTRY_PREFIX */

unsigned long caml_ocgc_pidns(void)
{
  char text[64];
  ssize_t n = readlink("/proc/self/ns/pid", text, sizeof text - 1);
  unsigned long ino;
  char *end;
  if (n <= 0) return 0;
  text[n] = '\0';
  if (strncmp(text, "pid:[", 5) != 0) return 0;
  ino = strtoul(text + 5, &end, 10);
  return end != text + 5 && strcmp(end, "]") == 0 ? ino : 0;
}

void caml_ocgc_entry_name(char *out, size_t n, const char *kind, unsigned long ns, pid_t pid)
{
  snprintf(out, n, OCGC_DIR_ENTRY_PREFIX "%s.%lu.%d", kind, ns, (int)pid);
}

/* A decimal number without sign or leading zero, at most [max]; returns
 * the text after it, or NULL. */
static const char *number(const char *p, unsigned long max, unsigned long *out)
{
  unsigned long v = 0;
  if (*p < '1' || *p > '9') return NULL;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (max - d) / 10) return NULL;
    v = v * 10 + d;
  }
  *out = v;
  return p;
}

int caml_ocgc_entry_parse(const char *name, const char *kind, unsigned long *ns, pid_t *pid)
{
  size_t klen = strlen(kind), plen = strlen(OCGC_DIR_ENTRY_PREFIX);
  unsigned long p;
  const char *s;
  if (strncmp(name, OCGC_DIR_ENTRY_PREFIX, plen) != 0 || strncmp(name + plen, kind, klen) != 0 ||
      name[plen + klen] != '.')
    return 0;
  s = name + plen + 1 + klen;
  if (s[0] == '0') *ns = 0, s++; /* made where /proc/self/ns/pid was unreadable */
  else s = number(s, 0xffffffffUL, ns);
  if (s == NULL || *s != '.') return 0;
  s = number(s + 1, 0x3fffffffUL, &p);
  if (s == NULL || *s != '\0') return 0;
  *pid = (pid_t)p;
  return 1;
}

int caml_ocgc_map_link(char *out, size_t n, const void *map, size_t size)
{
  char self[32];
  ssize_t got = readlink("/proc/self", self, sizeof self - 1);
  uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), start = (uintptr_t)map;
  /* The kernel names a mapping by its pages: the end rounded up. */
  uintptr_t end = (start + size + pg - 1) / pg * pg;
  int len;
  if (got <= 0) got = snprintf(self, sizeof self, "%d", (int)getpid());
  else self[got] = '\0';
  len = snprintf(out, n, "/proc/%s/map_files/%lx-%lx", self, (unsigned long)start,
                 (unsigned long)end);
  return len > 0 && (size_t)len < n ? 0 : -1;
}

/* Whether [text] is "/proc/<pid>/map_files/<start>-<end>" (hex, as the
 * kernel names mappings). */
static int is_map_link(const char *text)
{
  unsigned long v;
  const char *p;
  size_t digits;
  if (strncmp(text, "/proc/", 6) != 0) return 0;
  p = number(text + 6, 0x3fffffffUL, &v);
  if (p == NULL || strncmp(p, "/map_files/", 11) != 0) return 0;
  p += 11;
  digits = strspn(p, "0123456789abcdef");
  if (digits == 0 || digits > 16 || p[digits] != '-') return 0;
  p += digits + 1;
  digits = strspn(p, "0123456789abcdef");
  return digits > 0 && digits <= 16 && p[digits] == '\0';
}

int caml_ocgc_ring_link_state(int dfd, const char *name, pid_t pid)
{
  char target[CAML_OCGC_ENTRY_MAX], text[CAML_OCGC_ENTRY_MAX], want[64];
  ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
  if (n <= 0) return CAML_OCGC_LINK_NOT;
  target[n] = '\0';
  if (!is_map_link(target)) return CAML_OCGC_LINK_NOT;
  n = readlink(target, text, sizeof text - 1);
  if (n < 0) return errno == ENOENT || errno == ESRCH ? CAML_OCGC_LINK_DEAD : CAML_OCGC_LINK_UNKNOWN;
  text[n] = '\0';
  snprintf(want, sizeof want, OCGC_MEMFD_MAPS_PREFIX "%d" OCGC_DIR_EVENTS_SUFFIX " (deleted)", (int)pid);
  return strcmp(text, want) == 0 ? CAML_OCGC_LINK_LIVE : CAML_OCGC_LINK_DEAD;
}
