/* report_cpu_take.c - a gathered CPU window (tools/cpu_window.h) into a
 * report's struct rep_cpu (report.h): the figures cpu_window computes
 * (samples, in the collector, lost, threads, the GC share of the samples
 * and the ring's share of the window's wall time in collections), not
 * worked out again, and its folded stacks by phase for the tree
 * (report_cpu.c).
 *
 * cpu_window.h gives its profile only as its written forms, so the window
 * is written twice into a private temporary folder (mkdtemp in $TMPDIR or
 * /tmp, emptied and removed before returning): its JSON, of which only
 * the top-level numbers (one a line, before "stacks": none is the
 * target's) are read back, and its folded stacks.  So the page, the JSON
 * report and `ocgc profile --cpu --format json` say the same numbers.
 *
 * Invariants: the files are ours (a new folder of mode 0700, O_NOFOLLOW,
 * regular files) and read whole only up to REP_CPU_MAX_BYTES, libocgc's
 * own bound of a folded profile. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_window.h"
#include "report.h"

#define REP_CPU_MAX_BYTES (UINT64_C(64) << 20)

/* A file of ours, whole, NUL-terminated: 0 or a negative errno. */
static int slurp(const char *path, char **out, size_t *len)
{
  struct stat st;
  char *b;
  size_t got = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  *out = NULL;
  if (fd < 0) return -errno;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > REP_CPU_MAX_BYTES) {
    close(fd);
    return -EFBIG;
  }
  if ((b = malloc((size_t)st.st_size + 1)) == NULL) {
    close(fd);
    return -ENOMEM;
  }
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  b[got] = '\0';
  *out = b;
  *len = got;
  return 0;
}

/* The top-level numbers of cpu_window's JSON (one a line, two spaces in,
 * before "stacks"). */
static void read_figures(struct rep_cpu *c, char *json)
{
  char *line = json, *nl;
  for (; line != NULL && *line != '\0'; line = nl ? nl + 1 : NULL) {
    char key[40];
    char val[40];
    nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    if (sscanf(line, "  \"%39[a-z_]\": %39[0-9.nul]", key, val) != 2) continue;
    if (strcmp(key, "stacks") == 0) break;
    if (strcmp(key, "frequency_hz") == 0) c->frequency_hz = strtoull(val, NULL, 10);
    else if (strcmp(key, "window_ns") == 0) c->window_ns = strtoull(val, NULL, 10);
    else if (strcmp(key, "samples") == 0) c->samples = strtoull(val, NULL, 10);
    else if (strcmp(key, "gc_samples") == 0) c->gc_samples = strtoull(val, NULL, 10);
    else if (strcmp(key, "gc_unmatched") == 0) c->gc_unmatched = strtoull(val, NULL, 10);
    else if (strcmp(key, "lost") == 0) c->lost = strtoull(val, NULL, 10);
    else if (strcmp(key, "threads_seen") == 0) c->threads_seen = strtoull(val, NULL, 10);
    else if (strcmp(key, "gc_share_samples") == 0) c->gc_share_samples = strtod(val, NULL);
    else if (strcmp(key, "gc_share_ring") == 0) {
      c->ring_known = strcmp(val, "null") != 0;
      c->gc_share_ring = c->ring_known ? strtod(val, NULL) : 0;
    }
  }
}

/* ---- from a window ------------------------------------------------------------------ */

int rep_cpu_take(struct rep_cpu *c, struct cpu_window *w)
{
  const char *tmp = getenv("TMPDIR");
  char dir[4096], json[4200], folded[4200];
  char *jtext = NULL;
  size_t len;
  int err = 0;
  memset(c, 0, sizeof c[0]);
  if (tmp == NULL || tmp[0] != '/' || strlen(tmp) > 3000) tmp = "/tmp";
  snprintf(dir, sizeof dir, "%s/ocgc-cpu.XXXXXX", tmp);
  if (mkdtemp(dir) == NULL) {
    tool_say("cannot put the CPU profile in the report: a folder in %s: %s", tmp,
             strerror(errno));
    return TOOL_EXIT_ERROR;
  }
  snprintf(json, sizeof json, "%s/cpu.json", dir);
  snprintf(folded, sizeof folded, "%s/cpu.folded", dir);
  if (cpu_window_write(w, FMT_JSON, 0, json) != 0 || cpu_window_write(w, FMT_FOLDED, 1, folded) != 0)
    err = TOOL_EXIT_ERROR; /* said */
  if (err == 0 && (err = slurp(json, &jtext, &len)) == 0) {
    read_figures(c, jtext);
    free(jtext);
    if ((err = slurp(folded, &c->text, &len)) == 0) err = rep_cpu_from_folded(c, c->text);
    if (err != 0) tool_say("cannot put the CPU profile in the report: %s", strerror(-err));
    err = err ? TOOL_EXIT_ERROR : 0;
  }
  unlink(json);
  unlink(folded);
  rmdir(dir);
  if (err != 0) rep_cpu_free(c);
  else c->have = 1;
  return err;
}

