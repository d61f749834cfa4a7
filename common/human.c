/* human.c - durations and sizes for people (human.h).  Pure functions of
 * their arguments: any thread, any number of times. */
#include <inttypes.h>
#include <stdio.h>

#include "human.h"

const char *cm_fmt_ns(char *buf, size_t n, uint64_t ns)
{
  static const struct { double div; const char *unit; } u[] = {
    {1e3, "us"}, {1e6, "ms"}, {1e9, "s"},
  };
  double v;
  int i;
  if (ns < 1000) {
    snprintf(buf, n, "%" PRIu64 "ns", ns);
    return buf;
  }
  for (i = 0; i < 2 && (double)ns >= u[i + 1].div; i++)
    ;
  v = (double)ns / u[i].div;
  if (v >= 999.5 && i < 2) { i++; v = (double)ns / u[i].div; }
  snprintf(buf, n, v < 9.995 ? "%.2f%s" : v < 99.95 ? "%.1f%s" : "%.0f%s", v, u[i].unit);
  return buf;
}

const char *cm_fmt_bytes(char *buf, size_t n, uint64_t b)
{
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = (double)b;
  int i = 0;
  if (b < 1024) {
    snprintf(buf, n, "%" PRIu64 " B", b);
    return buf;
  }
  while (v >= 1024 && i < 5) { v /= 1024; i++; }
  snprintf(buf, n, v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s", v, unit[i]);
  return buf;
}

const char *cm_fmt_uptime(char *buf, size_t n, uint64_t ns)
{
  uint64_t s = ns / 1000000000u;
  if (s >= 3600)
    snprintf(buf, n, "%" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s", s / 3600, s / 60 % 60, s % 60);
  else if (s >= 60)
    snprintf(buf, n, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
  else
    snprintf(buf, n, "%.1fs", (double)ns / 1e9);
  return buf;
}
