/* flight.c - `ocgc flight PID`: a recording of a running process now
 * (docs/flight-recorder.md), into a folder: its ring's contents, exact
 * totals, allocation profile table, identity, memory and memory cgroup,
 * and the history of what its ring holds.  It presents libocgc's watch
 * of one process (ocgc_watch_record), which makes the same recording as
 * `serve --flight-dir` does; serve's hold the last --flight-window of
 * history, which a command that has just attached cannot have. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define READ_NS 2000000000u /* the ring's read before the recording, at most */

static void usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc flight [--flight-dir DIR] [--dir RINGDIR] PID\n\n"
          "Write a recording of process PID now into DIR (default: the current\n"
          "folder), as PROGRAM-PID-TIME-demand.ocgcrec, mode 0600: its ring (last\n"
          "events, exact totals, allocation profile table), its executable and build\n"
          "id, its memory and memory cgroup, and the seconds of history its ring\n"
          "holds.  Read it with 'ocgc report --file', 'ocgc trace --file', 'ocgc dump\n"
          "--file'.  'ocgc serve --flight-dir' keeps a longer history and records\n"
          "deaths by itself.  It prints the recording's path.\n\n"
          "  --flight-dir DIR  where the recording goes (others may not write to it)\n"
          "  --dir RINGDIR     the process's ring is RINGDIR/PID.events\n");
}

int cmd_flight(int argc, char **argv)
{
  static const struct option longopts[] = {
    {"flight-dir", required_argument, NULL, 'f'},
    {"dir", required_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct ocgc_flight_dir_opts fo = OCGC_OPTS_INIT(struct ocgc_flight_dir_opts);
  struct ocgc_flight_dir *d = NULL;
  struct ocgc_watch *w = NULL;
  struct tool_target t = {0};
  const char *out = ".", *ringdir = NULL;
  char name[128], esc[TOOL_ESC_SIZE(4096 + 128)], path[4096 + 128];
  int opt, err, rc = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'f': out = optarg; break;
    case 'd': ringdir = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (optind != argc - 1) return tool_usage_error("give one PID ('ocgc flight --help' tells more)");
  if (tool_target_pid(&t, argv[optind], NULL) != 0) return TOOL_EXIT_USAGE;
  /* A recording asked for is not held back by a cooldown. */
  fo.cooldown_ns = 1;
  if ((err = ocgc_flight_dir_open(out, &fo, &d)) != 0) {
    tool_say("%s: %s%s", out, ocgc_strerror(err),
             err == -EPERM ? " (others may write to it: choose a folder only you may write)" : "");
    return tool_exit_code(err);
  }
  o.dir = ringdir;
  o.flight_dir = d;
  o.flight_window_s = OCGC_FLIGHT_MAX_WINDOW_S; /* all that its ring holds */
  if ((err = ocgc_watch_new(&o, &w)) != 0 || (err = ocgc_watch_add_pid(w, t.pid)) != 0) {
    tool_say_attach_error(t.pid, ringdir, err);
    rc = tool_exit_code(err);
  } else {
    ocgc_watch_refresh(w, cm_mono_ns() + READ_NS);
    if ((err = ocgc_watch_record(w, t.pid, name, sizeof name)) != 0) {
      tool_say("process %d: no recording: %s", t.pid,
               err == -ESRCH ? "the process exited" : ocgc_strerror(err));
      rc = err == -ESRCH ? TOOL_EXIT_STALE : tool_exit_code(err);
    } else {
      snprintf(path, sizeof path, "%s/%s", out, name);
      printf("%s\n", tool_esc(path, esc, sizeof esc));
    }
  }
  ocgc_watch_free(w);
  ocgc_flight_dir_close(d);
  return rc;
}
