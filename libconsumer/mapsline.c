/* mapsline.c - splitting one /proc/PID/maps line into fields (mapsline.h).
 *
 * Owns the text format only; which mapping is a ring is attach.c's call.
 * Invariants: every read stays inside the NUL-terminated line (each scan
 * stops at NUL, and the "\012" test checks one byte at a time); a number
 * is digits only (no blank, no sign), within an unsigned long, and ends
 * where its field does, else the line does not parse: it is not one the
 * kernel wrote; the line is only ever shortened in place, so the path
 * cannot outgrow it.  This is the one parser of maps lines (attach.c,
 * procfs.c, hostmaps.c). */

#include "mapsline.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/wire.h"

#define DELETED_SUFFIX " (deleted)"

/* The number in [base] (10 or 16) at *pp, its digits only, into *out;
 * *pp moves past it.  0, or -1: no digit, or past ULONG_MAX. */
static int number(char **pp, int base, unsigned long *out)
{
  char *p = *pp, *end;
  int digit = (*p >= '0' && *p <= '9') ||
              (base == 16 && ((*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')));
  if (!digit) return -1;
  errno = 0;
  *out = strtoul(p, &end, base);
  if (errno == ERANGE) return -1;
  *pp = end;
  return 0;
}

static int field_end(const char *p)
{
  return *p == '\0' || *p == ' ' || *p == '\t';
}

/* Skip one whitespace-separated field and the blanks after it. */
static char *skip_field(char *p)
{
  while (*p != '\0' && *p != ' ' && *p != '\t') p++;
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* The kernel writes a newline in a path as "\012" (seq_file_path() with
 * "\n" to escape); a backslash itself is not escaped, so a literal "\012"
 * reads the same: both come out as '\n'. */
size_t ocgc_maps_unescape(char *s)
{
  char *r = s, *w = s;
  while (*r != '\0') {
    if (r[0] == '\\' && r[1] == '0' && r[2] == '1' && r[3] == '2') {
      *w++ = '\n';
      r += 4;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
  return (size_t)(w - s);
}

int ocgc_maps_parse_line(char *line, struct ocgc_maps_line *out)
{
  char *p, *perms;
  size_t i, len, dl = strlen(DELETED_SUFFIX);

  memset(out, 0, sizeof *out);
  line[strcspn(line, "\n")] = '\0';
  p = line;
  if (number(&p, 16, &out->start) != 0 || *p != '-') return -1;
  p++;
  if (number(&p, 16, &out->end) != 0 || !field_end(p)) return -1;
  perms = skip_field(line);
  for (i = 0; i < 4 && perms[i] != '\0' && perms[i] != ' ' && perms[i] != '\t'; i++)
    out->perms[i] = perms[i];
  p = skip_field(perms); /* offset */
  p = skip_field(p);     /* major:minor, in hex */
  if (number(&p, 16, &out->dev_major) != 0 || *p != ':') return -1;
  p++;
  if (number(&p, 16, &out->dev_minor) != 0 || !field_end(p)) return -1;
  p = skip_field(p);
  if (number(&p, 10, &out->inode) != 0 || !field_end(p)) return -1;
  p = skip_field(p);
  if (*p == '\0') return 0; /* anonymous */
  len = strlen(p);
  if (len >= dl && memcmp(p + len - dl, DELETED_SUFFIX, dl) == 0) {
    p[len - dl] = '\0';
    out->deleted = 1;
  }
  out->path = p;
  out->path_len = ocgc_maps_unescape(p);
  return 0;
}

int ocgc_maps_ring_like(const struct ocgc_maps_line *f)
{
  size_t sl = strlen(OCGC_DIR_EVENTS_SUFFIX);
  const char *base;
  if (f->perms[1] != 'w' || f->perms[3] != 's') return 0;
  if (f->path == NULL || f->path[0] != '/' || f->path_len <= sl) return 0;
  if (memcmp(f->path + f->path_len - sl, OCGC_DIR_EVENTS_SUFFIX, sl) != 0) return 0;
  /* the last name (after the memfd's "ocgc:" too) is more than ".events" */
  base = f->path + f->path_len - sl;
  return base[-1] != '/' && base[-1] != ':';
}

long ocgc_maps_memfd_pid(const struct ocgc_maps_line *f)
{
  size_t pl = strlen(OCGC_MEMFD_MAPS_PREFIX), sl = strlen(OCGC_DIR_EVENTS_SUFFIX), i;
  unsigned long v = 0;
  if (f->path == NULL || f->path_len <= pl + sl ||
      memcmp(f->path, OCGC_MEMFD_MAPS_PREFIX, pl) != 0 ||
      memcmp(f->path + f->path_len - sl, OCGC_DIR_EVENTS_SUFFIX, sl) != 0 || f->path[pl] == '0')
    return 0;
  for (i = pl; i < f->path_len - sl; i++) {
    if (f->path[i] < '0' || f->path[i] > '9' || i - pl >= 10) return 0;
    v = v * 10 + (unsigned long)(f->path[i] - '0');
  }
  return v <= INT_MAX ? (long)v : 0;
}
