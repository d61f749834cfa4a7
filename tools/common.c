/* common.c - the process-wide things every `ocgc` subcommand shares: exit
 * codes and error lines, parsing pids, durations and counts, the stop
 * signals and a sleep they end, and the escaper for text output
 * (common.h).  The clock, files replaced whole and human figures are the
 * common layer's (common/).
 *
 * Invariants: the signal handler only stores the signal in tool_stop (a
 * sig_atomic_t), so the loops of the subcommands end cleanly and free what
 * they hold; tool_esc() never writes a byte outside printable ASCII nor a
 * lone backslash, whatever [s] holds. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

const char *tool_name = "?";
volatile sig_atomic_t tool_stop;

int tool_exit_code(int err)
{
  switch (err) {
  case 0: return 0;
  case -ENOENT: case -ESRCH: return TOOL_EXIT_NOTFOUND;
  case OCGC_E_CORRUPT: case OCGC_E_VERSION: case OCGC_E_TRUNCATED: case OCGC_E_IDS_UNKNOWN:
    return TOOL_EXIT_CORRUPT;
  case OCGC_E_NORING: return TOOL_EXIT_NORING;
  case OCGC_E_STALE: return TOOL_EXIT_STALE;
  case -EPERM: case -EACCES: return TOOL_EXIT_DENIED;
  default: return TOOL_EXIT_ERROR;
  }
}

/* One line, whole: stderr is unbuffered (each call a write), and a
 * command's threads (serve's poll thread saying a ring failed, its main
 * thread saying where it listens) must not cut each other's lines, which
 * scripts read. */
static void vsay(const char *fmt, va_list ap)
{
  flockfile(stderr);
  fprintf(stderr, "ocgc %s: ", tool_name);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  funlockfile(stderr);
}

void tool_say(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsay(fmt, ap);
  va_end(ap);
}

int tool_usage_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsay(fmt, ap);
  va_end(ap);
  return TOOL_EXIT_USAGE;
}

int tool_parse_pid(const char *s)
{
  char *end;
  long v;
  if (s[0] < '0' || s[0] > '9') return -1;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v <= 0 || v > INT_MAX) return -1;
  return (int)v;
}

int tool_parse_duration(const char *s, uint64_t *ns)
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

int tool_parse_count(const char *s, uint64_t *n)
{
  char *end;
  uint64_t v;
  if (s[0] < '0' || s[0] > '9') return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (*end != '\0' || errno != 0 || v == 0) return -1;
  *n = v;
  return 0;
}

int tool_parse_size(const char *s, uint64_t *n)
{
  char *end;
  uint64_t v;
  unsigned shift = 0;
  if (s[0] < '0' || s[0] > '9') return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0 || v == 0) return -1;
  switch (*end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  default: break;
  }
  if (shift != 0 && end[0] == 'i' && end[1] == 'B') end += 2;
  else if (end[0] == 'B') end++;
  if (*end != '\0' || v > (UINT64_MAX >> shift)) return -1;
  *n = v << shift;
  return 0;
}

/* The numberings --ids names, and how they are printed: one table. */
static const struct { enum ocgc_ids ids; const char *name; } ids_names[] = {
  {OCGC_IDS_52, "5.2"}, {OCGC_IDS_53, "5.3"}, {OCGC_IDS_54, "5.4"},
};

const char *tool_ids_name(enum ocgc_ids ids)
{
  size_t k;
  for (k = 0; k < sizeof ids_names / sizeof ids_names[0]; k++)
    if (ids_names[k].ids == ids) return ids_names[k].name;
  return "5.2"; /* OCGC_IDS_AUTO: the library reads with 5.2's */
}

int tool_parse_ids(const char *s, enum ocgc_ids *out)
{
  size_t k;
  for (k = 0; k < sizeof ids_names / sizeof ids_names[0]; k++)
    if (strcmp(s, ids_names[k].name) == 0) {
      *out = ids_names[k].ids;
      return 0;
    }
  return tool_usage_error("--ids takes 5.2, 5.3 or 5.4, not '%s'", s);
}

int tool_common_opt(int opt, const char *arg, struct tool_target *t, int *json)
{
  switch (opt) {
  case TOOL_OPT_DIR: t->dir = arg; return 1;
  case TOOL_OPT_FILE: t->file = arg; return 1;
  case TOOL_OPT_IDS: return tool_parse_ids(arg, &t->ids) != 0 ? TOOL_EXIT_USAGE : 1;
  case TOOL_OPT_JSON:
    if (json == NULL) return 0;
    *json = 1;
    return 1;
  default: return 0;
  }
}

int tool_ids(const struct ocgc_source *src, struct tool_ids *out)
{
  struct ocgc_ids_info i = OCGC_OPTS_INIT(struct ocgc_ids_info);
  int err = ocgc_source_ids(src, &i);
  memset(out, 0, sizeof *out);
  if (err != 0) return err;
  out->ids = tool_ids_name(i.ids);
  out->stock = i.origin != OCGC_IDS_FROM_EXT;
  tool_esc(i.ocaml_version, out->ocaml, sizeof out->ocaml);
  switch (i.origin) {
  case OCGC_IDS_FROM_EXT: out->from = "file"; snprintf(out->why, sizeof out->why, "from the file"); break;
  case OCGC_IDS_FROM_EXE:
    out->from = "executable";
    snprintf(out->why, sizeof out->why, "from its executable's OCaml %s", out->ocaml);
    break;
  case OCGC_IDS_FROM_CALLER: out->from = "option"; snprintf(out->why, sizeof out->why, "from --ids"); break;
  default:
    out->from = "assumed";
    snprintf(out->why, sizeof out->why, "assumed (the file does not say%s%s; --ids chooses)",
             i.exe_err ? ", nor its executable: " : "", i.exe_err ? ocgc_strerror(i.exe_err) : "");
    break;
  }
  return 0;
}

void tool_say_ids(const struct ocgc_source *src, const char *label)
{
  struct tool_ids t;
  if (tool_ids(src, &t) != 0 || !t.stock) return;
  tool_say("%s: a stock OCaml 5 ring, read with OCaml %s's event ids, %s", label, t.ids, t.why);
}

static void on_stop_signal(int sig)
{
  tool_stop = sig;
}

void tool_signals_catch(struct tool_signals *s)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal; /* no SA_RESTART: sleeps and waits end */
  sigemptyset(&sa.sa_mask);
  tool_stop = 0;
  sigaction(SIGINT, &sa, &s->old_int);
  sigaction(SIGTERM, &sa, &s->old_term);
}

void tool_signals_restore(const struct tool_signals *s)
{
  sigaction(SIGINT, &s->old_int, NULL);
  sigaction(SIGTERM, &s->old_term, NULL);
}

/* SIGINT and SIGTERM are unblocked only inside ppoll(), atomically, so one
 * that arrives between the look at tool_stop and the wait still ends the
 * wait at once (with nanosleep it would be slept through).  A thread that
 * blocks them (serve's poll thread) keeps them blocked. */
void tool_sleep_ns(uint64_t ns)
{
  struct timespec ts;
  sigset_t block, old;
  ts.tv_sec = (time_t)(ns / 1000000000u);
  ts.tv_nsec = (long)(ns % 1000000000u);
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  if (!tool_stop) ppoll(NULL, 0, &ts, &old);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tool_sleep_until_ns(uint64_t when)
{
  uint64_t now;
  while (!tool_stop && (now = cm_mono_ns()) < when) tool_sleep_ns(when - now);
}

/* tool_esc, and with [word] a space escaped too. */
static const char *esc(const char *s, char *buf, size_t n, int word)
{
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  if (n == 0) return buf;
  for (; s != NULL && *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c < 0x7f && c != '\\' && !(word && c == ' ')) {
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

const char *tool_esc(const char *s, char *buf, size_t n)
{
  return esc(s, buf, n, 0);
}

const char *tool_esc_word(const char *s, char *buf, size_t n)
{
  return esc(s, buf, n, 1);
}
