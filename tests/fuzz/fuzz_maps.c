/* fuzz_maps.c - libFuzzer target for the /proc/PID/maps line parser
 * (libconsumer/mapsline.c), whose path field a traced process chooses.
 *
 * Two forms of input, told apart by the first byte:
 * - even: the rest is the line itself, any bytes;
 * - odd: the rest gives the fields of a line the kernel would write
 *   (numbers, perms, a name with '\n' escaped as "\012", " (deleted)",
 *   padding, text after the newline), so that every field must come back
 *   exactly as it went in.
 * Invariants checked on every parse (abort() if one breaks): the path lies
 *   in the line, is never longer than it and ends before the line's first
 *   newline; the kernel's escape of the path, followed by " (deleted)"
 *   when the parser cut that off, gives back the line's text from where the
 *   path starts (so the only newlines in a path are unescaped "\012");
 *   the perms are the line's own characters.  Any line parses or fails
 *   cleanly: a number out of range, or not ending its field, fails the
 *   line; nothing reads past the NUL. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapsline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINE 4096u
#define DELETED " (deleted)"

static void require(int ok, const char *what, const char *line)
{
  if (ok) return;
  fprintf(stderr, "fuzz_maps: %s\nline: ", what);
  for (; *line != '\0'; line++)
    fprintf(stderr, *line >= 0x20 && *line < 0x7f ? "%c" : "\\x%02x", (unsigned char)*line);
  fputc('\n', stderr);
  abort();
}

/* seq_file_path(..., "\n"): a newline becomes "\012", nothing else
 * changes.  out has room for 4 * n + 1 bytes. */
static size_t escape(const char *s, size_t n, char *out)
{
  size_t i, k = 0;
  for (i = 0; i < n; i++) {
    if (s[i] == '\n') {
      memcpy(out + k, "\\012", 4);
      k += 4;
    } else {
      out[k++] = s[i];
    }
  }
  out[k] = '\0';
  return k;
}

/* The invariants that hold for any line.  [orig] is the line before the
 * parse, [buf] the same bytes parsed in place. */
static void check_any(const char *orig, char *buf, const struct ocgc_maps_line *f)
{
  static char esc[4 * MAX_LINE + sizeof DELETED];
  size_t total = strlen(orig), line_len = strcspn(orig, "\n"), off, n, i;

  for (i = 0; i < 4 && f->perms[i] != '\0'; i++)
    require(f->perms[i] != ' ' && f->perms[i] != '\t' && f->perms[i] != '\n',
            "a blank in perms", orig);
  require(f->perms[4] == '\0', "perms not terminated", orig);
  if (f->path == NULL) return;
  require(f->path >= buf && f->path <= buf + line_len, "path outside the line", orig);
  off = (size_t)(f->path - buf);
  require(f->path_len == strlen(f->path), "path_len is not the path's length", orig);
  require(f->path_len <= total - off, "path longer than the input", orig);
  n = escape(f->path, f->path_len, esc);
  if (f->deleted) {
    memcpy(esc + n, DELETED, sizeof DELETED);
    n += strlen(DELETED);
  }
  require(off + n == line_len && memcmp(esc, orig + off, n) == 0,
          "the path, escaped again, is not the line's text", orig);
}

/* Little-endian number from the input; missing bytes read as 0. */
static uint64_t take(const uint8_t **p, const uint8_t *end, unsigned bytes)
{
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < bytes && *p < end; i++, (*p)++) v |= (uint64_t)**p << (8 * i);
  return v;
}

/* Kernel-shaped line (fs/proc/task_mmu.c show_map_vma()). */
static void fuzz_fields(const uint8_t *p, const uint8_t *end)
{
  static char line[8 * MAX_LINE], orig[8 * MAX_LINE], name[4 * MAX_LINE + 1];
  char raw[MAX_LINE];
  struct ocgc_maps_line f;
  unsigned long start = (unsigned long)take(&p, end, 8), stop = (unsigned long)take(&p, end, 8);
  unsigned long long offset = take(&p, end, 8);
  unsigned long major = (unsigned long)take(&p, end, 2) & 0xfff;
  unsigned long minor = (unsigned long)take(&p, end, 3) & 0xfffff;
  unsigned long ino = (unsigned long)take(&p, end, 8);
  unsigned pb = (unsigned)take(&p, end, 1), flags = (unsigned)take(&p, end, 1);
  char perms[5] = {pb & 1 ? 'r' : '-', pb & 2 ? 'w' : '-', pb & 4 ? 'x' : '-',
                   pb & 8 ? 's' : 'p', '\0'};
  int deleted = (flags & 1) != 0, after_nl = (flags & 2) != 0;
  size_t nraw = 0, nname, len;
  int rc;

  /* The name: the rest of the input (after the tail, if any), NUL-free,
   * not starting with a blank (the padding before it would swallow it). */
  while (p < end && nraw < sizeof raw) {
    char c = (char)*p++;
    raw[nraw++] = c == '\0' ? '_' : c;
  }
  if (nraw > 0 && (raw[0] == ' ' || raw[0] == '\t')) raw[0] = '_';
  if (nraw == 0) deleted = 0;
  nname = escape(raw, nraw, name);
  len = (size_t)snprintf(line, sizeof line, "%08lx-%08lx %s %08llx %02lx:%02lx %lu ", start,
                         stop, perms, offset, major, minor, ino);
  if (nname > 0) {
    while (len < 73) line[len++] = ' ';
    memcpy(line + len, name, nname);
    len += nname;
    if (deleted) {
      memcpy(line + len, DELETED, strlen(DELETED));
      len += strlen(DELETED);
    }
  }
  line[len++] = '\n';
  if (after_nl) { /* getline() would not give this, but a NUL-cut buffer might */
    memcpy(line + len, "/x.events", 10);
    len += 9;
  }
  line[len] = '\0';
  memcpy(orig, line, len + 1);

  rc = ocgc_maps_parse_line(line, &f);
  require(rc == 0, "a kernel-shaped line does not parse", orig);
  check_any(orig, line, &f);
  require(f.start == start && f.end == stop, "address range", orig);
  require(strcmp(f.perms, perms) == 0, "perms", orig);
  require(f.dev_major == major && f.dev_minor == minor, "device", orig);
  require(f.inode == ino, "inode", orig);
  if (nname == 0) {
    require(f.path == NULL, "a path where there is none", orig);
    return;
  }
  require(f.path != NULL, "no path", orig);
  /* A name that itself ends in " (deleted)" is the kernel's ambiguity;
   * check_any() has checked that text is kept either way. */
  if (nname < strlen(DELETED) || memcmp(name + nname - strlen(DELETED), DELETED,
                                        strlen(DELETED)) != 0) {
    char esc[4 * MAX_LINE + 1];
    require(f.deleted == deleted, "deleted flag", orig);
    require(escape(f.path, f.path_len, esc) == nname && memcmp(esc, name, nname) == 0,
            "path", orig);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char line[MAX_LINE + 1], orig[MAX_LINE + 1];
  struct ocgc_maps_line f;
  size_t n;

  if (size == 0) return 0;
  if (data[0] & 1) {
    fuzz_fields(data + 1, data + size);
    return 0;
  }
  n = size - 1 < MAX_LINE ? size - 1 : MAX_LINE;
  memcpy(line, data + 1, n);
  line[n] = '\0'; /* a NUL inside ends the line, as it does for getline() users */
  memcpy(orig, line, n + 1);
  if (ocgc_maps_parse_line(line, &f) == 0) check_any(orig, line, &f);
  return 0;
}
