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

int ocgc_drain_agg(struct ocgc_agg *agg, unsigned max_polls, const volatile sig_atomic_t *stop)
{
  struct ocgc_cursor_stats st;
  unsigned polls = 0;
  for (;;) {
    int64_t got = ocgc_agg_poll(agg);
    if (got == -EAGAIN) return 0;
    if (got < 0) return (int)got;
    ocgc_agg_cursor_stats(agg, &st);
    if (!st.behind || ++polls >= max_polls || (stop != NULL && *stop)) return 0;
  }
}

int ocgc_drain_cursor(struct ocgc_cursor *cur, unsigned max_polls,
                      const volatile sig_atomic_t *stop)
{
  struct ocgc_cursor_stats st;
  unsigned polls = 0;
  for (;;) {
    int64_t got = ocgc_cursor_poll(cur, 0);
    if (got == -EAGAIN) return 0;
    if (got < 0) return (int)got;
    ocgc_cursor_stats(cur, &st);
    if (!st.behind || ++polls >= max_polls || (stop != NULL && *stop)) return 0;
  }
}

unsigned ocgc_drain_polls(uint64_t rings, uint64_t ring_words)
{
  /* A poll delivers up to 1 Mi events (at least 2 words each) in 10 ms. */
  uint64_t n = 16 + 4 * rings * (ring_words / (UINT64_C(1) << 21) + 1);
  return n > 100000 ? 100000 : (unsigned)n;
}
