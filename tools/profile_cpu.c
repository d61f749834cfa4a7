/* profile_cpu.c - `ocgc profile PID --cpu`: a CPU profile of a running
 * process over a window, each sample labelled with what the collector was
 * doing (libocgc's ocgc/cpuprof.h), written as pprof, folded stacks or
 * JSON.
 *
 * What it owns: the command line, the ring's opening and the window's
 * loop: its turns (cpu_window.c: the ring read, then the samples, then the
 * profile settled), its end.  The sampler, the unwinder, the labels and
 * the writers are libocgc's; the forms and figures cpu_window.c's.
 *
 * Invariants:
 * - a process without a ring (a stock runtime, or none found) is still
 *   profiled: its gc_phase from the stacks, its gc_cause "unknown";
 * - SIGINT and SIGTERM end the window early, an exec or the process's
 *   exit ends it: the profile of what was gathered is written; a refusal
 *   of perf_event_open is libocgc's one line, exit 8;
 * - pprof, which is binary, never to a terminal. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "cpu_window.h"

#define DEFAULT_DURATION_NS UINT64_C(30000000000) /* Go's /debug/pprof/profile */

struct cpu_args {
  struct tool_target t;
  uint64_t duration_ns;
  unsigned frequency;
  int no_lines, by_phase;
  enum format format;
  const char *out;
};

static void cpu_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc profile PID --cpu [--duration D] [--frequency HZ]\n"
          "                        [--format pprof|folded|json] [--by-phase] [-o FILE]\n"
          "                        [--no-lines] [--dir DIR]\n"
          "\n"
          "A CPU profile of process PID over a window: its threads sampled from outside\n"
          "(perf_event_open, cpu-clock), each stack unwound without frame pointers and\n"
          "labelled gc_phase (mutator, minor, major_mark, major_sweep, major_clean,\n"
          "major, compaction, collector) and gc_cause (the ring's cause of the\n"
          "collection, for samples in the collector).\n"
          "\n"
          "  --duration D     the window (default 30s); SIGINT ends it early\n"
          "  --frequency HZ   samples a second of CPU per thread (default 100, 1..%u)\n"
          "  --format F       pprof (default; samples/count and cpu/nanoseconds, as Go's),\n"
          "                   folded (\"a;b;c N\" lines) or json\n"
          "  --by-phase       folded: each line's first frame is [gc_phase]\n"
          "  -o FILE          write FILE (replaced whole) instead of stdout\n"
          "  --no-lines       function names only: no DWARF read\n"
          "  --dir DIR        the ring is DIR/PID.events (not searched)\n"
          "\n"
          "Sampling needs what perf needs: root, CAP_PERFMON, or\n"
          "kernel.perf_event_paranoid <= 2 for a process of one's own; a refusal is exit %d.\n",
          PROFILE_CPU_MAX_HZ, TOOL_EXIT_DENIED);
}

static int parse_args(int argc, char **argv, struct cpu_args *a)
{
  static const struct option longopts[] = {
    {"cpu", no_argument, NULL, 'c'},
    {"duration", required_argument, NULL, 'd'},
    {"frequency", required_argument, NULL, 'F'},
    {"format", required_argument, NULL, 'f'},
    {"by-phase", no_argument, NULL, 'b'},
    {"output", required_argument, NULL, 'o'},
    {"no-lines", no_argument, NULL, 'n'},
    TOOL_LONGOPT_DIR,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt, c;
  uint64_t hz;
  optind = 1;
  a->duration_ns = DEFAULT_DURATION_NS;
  a->frequency = PROFILE_CPU_DEFAULT_HZ;
  while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
    if ((c = tool_common_opt(opt, optarg, &a->t, NULL)) != 0) {
      if (c != 1) return c;
      continue;
    }
    switch (opt) {
    case 'c': break;
    case 'd':
      if (tool_parse_duration(optarg, &a->duration_ns) != 0 || a->duration_ns == 0)
        return tool_usage_error("--duration takes a duration (\"30s\"), not '%s'", optarg);
      break;
    case 'F':
      if (tool_parse_count(optarg, &hz) != 0 || hz == 0 || hz > PROFILE_CPU_MAX_HZ)
        return tool_usage_error("--frequency takes 1 to %u samples a second, not '%s'",
                                PROFILE_CPU_MAX_HZ, optarg);
      a->frequency = (unsigned)hz;
      break;
    case 'f':
      if (strcmp(optarg, "pprof") == 0) a->format = FMT_PPROF;
      else if (strcmp(optarg, "folded") == 0) a->format = FMT_FOLDED;
      else if (strcmp(optarg, "json") == 0) a->format = FMT_JSON;
      else return tool_usage_error("--format is pprof, folded or json, not '%s'", optarg);
      break;
    case 'b': a->by_phase = 1; break;
    case 'o': a->out = optarg; break;
    case 'n': a->no_lines = 1; break;
    case 'h': cpu_usage(stdout); exit(0);
    default: cpu_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    cpu_usage(stderr);
    return TOOL_EXIT_USAGE;
  }
  if ((c = tool_target_pid(&a->t, argv[optind], NULL)) != 0) return c;
  if (a->format == FMT_PPROF && a->out == NULL && isatty(STDOUT_FILENO))
    return tool_usage_error("pprof is binary: give -o FILE, or send stdout to a file or pipe");
  return 0;
}

/* The process's ring, if it has one: NULL and why not. */
static struct ocgc_source *open_ring(const struct cpu_args *a, int *err)
{
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *src = NULL;
  ao.dir = a->t.dir;
  ao.ids = a->t.ids;
  if ((*err = ocgc_source_open_pid(a->t.pid, &ao, &src)) != 0) return NULL;
  return src;
}

/* The window: until its end, a stop signal, an exec or the process's end. */
static int run_window(const struct cpu_args *a, struct cpu_window *w)
{
  int n = 0;
  for (;;) {
    int last;
    tool_sleep_ns(cpu_window_poll_ns(w));
    last = tool_stop || cpu_window_ns(w) >= a->duration_ns;
    if ((n = cpu_window_turn(w)) > 0) return n; /* an exit code, said */
    if (n < 0 || last) break;
  }
  cpu_window_end(w);
  if (tool_stop)
    tool_say("stopped: the window is %.1f s, not the %.1f s asked",
             (double)cpu_window_ns(w) / 1e9, (double)a->duration_ns / 1e9);
  else if (n == OCGC_E_STALE)
    tool_say("%s exec'd or exited after %.1f s: the profile is of the samples before",
             tool_target_label(&a->t), (double)cpu_window_ns(w) / 1e9);
  else if (n < 0)
    tool_say("%s: reading its samples failed after %.1f s (%s): the profile is of the samples "
             "before", tool_target_label(&a->t), (double)cpu_window_ns(w) / 1e9,
             ocgc_strerror(n));
  return 0;
}

int cmd_profile_cpu(int argc, char **argv)
{
  struct cpu_args a;
  struct tool_signals sig;
  struct ocgc_source *src;
  struct cpu_window *w = NULL;
  int rc, ring_err = 0;
  memset(&a, 0, sizeof a);
  if ((rc = parse_args(argc, argv, &a)) != 0) return rc;
  /* caught before the opening (reading the files' CFI takes a while): a
   * stop then ends the window at its first turn */
  tool_signals_catch(&sig);
  src = open_ring(&a, &ring_err);
  rc = cpu_window_open(&w, a.t.pid, tool_target_label(&a.t), src,
                       src ? NULL : ocgc_strerror(ring_err), a.frequency, a.no_lines);
  if (rc == 0) rc = run_window(&a, w);
  if (rc == 0) {
    cpu_window_say(w);
    rc = cpu_window_write(w, a.format, a.by_phase, a.out);
  }
  tool_signals_restore(&sig);
  cpu_window_free(w);
  ocgc_source_close(src);
  return rc;
}
