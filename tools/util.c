/* util.c - durations, JSON strings, opening a PID or a file, the clock:
 * helpers shared by the `ocgc` subcommands. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "util.h"

int ocgc_parse_duration(const char *s, uint64_t *ns)
{
  static const struct { const char *unit; double ns; } units[] = {
    {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}, {"", 1e9},
  };
  char *end;
  double v;
  size_t i;
  if (s == NULL || *s == '\0' || *s == '-' || *s == '+') return -1;
  errno = 0;
  v = strtod(s, &end);
  if (errno != 0 || end == s || !isfinite(v) || v < 0) return -1;
  for (i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(end, units[i].unit) == 0) {
      double t = v * units[i].ns;
      if (t > 1e18) return -1;
      *ns = (uint64_t)t;
      return 0;
    }
  return -1;
}

const char *ocgc_esc(const char *s, char *buf, size_t n)
{
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  if (n == 0) return buf;
  for (; s != NULL && *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      if (o + 1 >= n) break;
      buf[o++] = (char)c;
    } else {
      if (o + 4 >= n) break;
      buf[o++] = '\\';
      buf[o++] = 'x';
      buf[o++] = hex[c >> 4];
      buf[o++] = hex[c & 15];
    }
  }
  buf[o] = '\0';
  return buf;
}

void ocgc_json_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (; s != NULL && *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      if (c < 0x20) fprintf(f, "\\u%04x", c);
      else fputc(c, f);
    }
  }
  fputc('"', f);
}

int ocgc_cmd_open(const char *cmd, int pid, const char *dir, const char *file,
                  struct ocgc_source **out)
{
  int err;
  if (pid > 0) {
    struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
    ao.dir = dir;
    err = ocgc_source_open_pid(pid, &ao, out);
    if (err) ocgc_cmd_attach_error(cmd, pid, dir, err);
    return err;
  }
  err = ocgc_source_open_path(file, NULL, out);
  if (err == -ENOENT)
    fprintf(stderr, "ocgc %s: %s: no such file (rings are <pid>.events files; "
            "'ocgc ls' lists the attachable processes)\n", cmd, file);
  else if (err)
    fprintf(stderr, "ocgc %s: %s: %s\n", cmd, file, ocgc_strerror(err));
  return err;
}

uint64_t ocgc_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

void ocgc_sleep_ns(uint64_t ns)
{
  struct timespec ts;
  ts.tv_sec = (time_t)(ns / 1000000000u);
  ts.tv_nsec = (long)(ns % 1000000000u);
  nanosleep(&ts, NULL);
}

/* Events a cursor has passed: what a drain counts as progress. */
static uint64_t passed(const struct ocgc_cursor_stats *st)
{
  return st->seen + st->skipped + st->lost;
}

/* The loop of both drains; [poll] polls, [stats] fills *st. */
static int drain(int64_t (*poll)(void *), void (*stats)(const void *, struct ocgc_cursor_stats *),
                 void *h, uint64_t max_events, const volatile sig_atomic_t *stop)
{
  struct ocgc_cursor_stats st;
  uint64_t first, last;
  unsigned idle = 0;
  stats(h, &st);
  first = last = passed(&st);
  for (;;) {
    int64_t got = poll(h);
    if (got < 0) return (int)got;
    stats(h, &st);
    idle = passed(&st) == last ? idle + 1 : 0;
    last = passed(&st);
    if (!st.behind || last - first >= max_events || idle >= 100 || (stop != NULL && *stop))
      return 0;
  }
}

static int64_t poll_agg(void *h) { return ocgc_agg_poll(h); }
static int64_t poll_cursor(void *h) { return ocgc_cursor_poll(h, 0); }
static void stats_agg(const void *h, struct ocgc_cursor_stats *st) { ocgc_agg_cursor_stats(h, st); }
static void stats_cursor(const void *h, struct ocgc_cursor_stats *st) { ocgc_cursor_stats(h, st); }

int ocgc_drain_agg(struct ocgc_agg *agg, uint64_t max_events, const volatile sig_atomic_t *stop)
{
  return drain(poll_agg, stats_agg, agg, max_events, stop);
}

int ocgc_drain_cursor(struct ocgc_cursor *cur, uint64_t max_events,
                      const volatile sig_atomic_t *stop)
{
  return drain(poll_cursor, stats_cursor, cur, max_events, stop);
}

uint64_t ocgc_drain_events(const struct ocgc_source *src)
{
  struct ocgc_source_info info;
  if (ocgc_source_info(src, &info) != 0) return UINT64_C(1) << 22;
  return 4 * (info.max_domains ? info.max_domains : 1) * (info.ring_words / 2 + 1);
}
