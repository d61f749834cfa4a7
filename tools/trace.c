/* trace.c - `ocgc trace`: write a Chrome/Perfetto JSON trace (the Trace
 * Event Format) of a ring file, or of a live process for a while.
 *
 * What it owns: the command (its options, following the target for
 * --duration, until it exits or a signal) and writing the output safely;
 * the translation of events into trace events is trace_events.c's
 * (trace.h says what it writes), the target, signals and the bounded drain
 * common.h's.
 *
 * The output goes to a temporary file next to -o FILE, renamed over it
 * only once everything was written and synced: FILE is either the whole
 * trace or untouched.  Writes go through our own buffer over write(2)
 * (struct trace_out) so that the first error (ENOSPC...) is kept with its
 * errno; a closed stdout pipe is such an error (SIGPIPE is ignored while
 * the trace is written), not a silent death.
 *
 * Only libocgc's public API is used. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "common.h"
#include "trace.h"

#define POLL_NS UINT64_C(10000000) /* 10 ms: keeps a default-sized ring from wrapping */

struct trace_opts {
  struct tool_target t;
  const char *output;
  uint64_t duration;
  uint64_t max_size;          /* --max-size: no more events read past it */
  size_t max_held;
};

/* Where the trace goes: stdout, or a file replaced whole (common/afile.h). */
struct output {
  struct trace_out *out;
  int to_file;                /* 0: stdout */
  struct cm_afile file;       /* to_file: OUT's replacement */
};

static void trace_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc trace [--duration D] [--dir DIR] [--max-held N] [--max-size S]\n"
          "                  PID -o OUT.json\n"
          "       ocgc trace [--max-held N] --file FILE -o OUT.json\n\n"
          "Write a Chrome/Perfetto JSON trace (Trace Event Format; open it in\n"
          "ui.perfetto.dev or chrome://tracing) of the GC events of the running\n"
          "OCaml process PID, followed from now for D (default 10s) or until the\n"
          "process exits or ocgc is interrupted (Ctrl-C ends the trace early and\n"
          "still writes it); or of everything the ring file FILE holds.\n\n"
          "The trace has a slice per phase (minor, major_slice, compact, their\n"
          "sub-phases, explicit Gc calls), pid = the process, tid = the ring;\n"
          "collections carry their cause as args.cause; counter tracks for the\n"
          "bytes allocated and promoted by each minor collection, the heap size,\n"
          "the work of each major slice; instants for the lifecycle and major\n"
          "cycles; and a global instant \"events lost\" (args.count, args.exact)\n"
          "wherever the ring overwrote events before they were read: slices cut\n"
          "by a loss end at the loss, with args.cut.\n\n"
          "The slices inside a slice are held back until it ends, so that they\n"
          "can be written sorted; at most N in all (--max-held).  Past that\n"
          "(a span that never ends), the slices held are written at once, the\n"
          "slices still open around them as begin/end events (args.early), with\n"
          "an instant \"slices written early\" there.\n\n"
          "  -o, --output OUT    where to write (required); '-' for stdout.  OUT is\n"
          "                      written whole or not at all (a temporary file is\n"
          "                      renamed over it); a failed write exits with %d\n"
          "  -d, --duration D    how long to follow PID: 10, 1.5s, 500ms, 2m...\n"
          "  -f, --file FILE     read the ring file FILE instead of a process\n"
          "  --ids 5.2|5.3|5.4\n"
          "                      the event numbering of a stock OCaml 5 ring (default:\n"
          "                      from the process's executable; for a file, 5.2)\n"
          "  --dir DIR           look for DIR/PID.events instead of searching the\n"
          "                      process's memory map\n"
          "  --max-held N        slices held back at most, in all (default %u,\n"
          "                      32 bytes each; 1 to %u)\n"
          "  --max-size S        stop following PID once S bytes are written\n"
          "                      (default 256M; K, M, G: powers of 1024); the\n"
          "                      slices held back and the end follow, so the\n"
          "                      trace stays whole\n"
          "  -h, --help          this text\n",
          TOOL_EXIT_ERROR, TRACE_MAX_HELD_DEFAULT, TRACE_MAX_HELD_LIMIT);
}

/* --max-held N: 0 and *n, or -1. */
static int parse_max_held(const char *s, size_t *n)
{
  char *end;
  unsigned long v;
  errno = 0;
  v = strtoul(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < 1 ||
      v > TRACE_MAX_HELD_LIMIT)
    return -1;
  *n = (size_t)v;
  return 0;
}

/* The options and operands into *o: 0, or the exit code. */
static int parse_args(int argc, char **argv, struct trace_opts *o)
{
  static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"duration", required_argument, NULL, 'd'},
    TOOL_LONGOPT_FILE,
    TOOL_LONGOPT_DIR,
    {"max-held", required_argument, NULL, 'M'},
    {"max-size", required_argument, NULL, 'S'},
    TOOL_LONGOPT_IDS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt, c;
  memset(o, 0, sizeof *o);
  o->duration = UINT64_C(10000000000);
  o->max_held = TRACE_MAX_HELD_DEFAULT;
  o->max_size = TRACE_MAX_SIZE_DEFAULT;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "o:d:f:h", longopts, NULL)) != -1) {
    if ((c = tool_common_opt(opt, optarg, &o->t, NULL)) != 0) {
      if (c != 1) return c;
      continue;
    }
    switch (opt) {
    case 'o': o->output = optarg; break;
    case 'd':
      if (tool_parse_duration(optarg, &o->duration) != 0 || o->duration == 0)
        return tool_usage_error("--duration takes a duration such as 10, 1.5s, 500ms or 2m, "
                                "not '%s'", optarg);
      break;
    case 'f': o->t.file = optarg; break;
    case 'M':
      if (parse_max_held(optarg, &o->max_held) != 0)
        return tool_usage_error("--max-held takes a number of slices from 1 to %u, not '%s'",
                                TRACE_MAX_HELD_LIMIT, optarg);
      break;
    case 'S':
      if (tool_parse_size(optarg, &o->max_size) != 0)
        return tool_usage_error("--max-size takes a size such as 256M, 1G or 500000, not '%s'",
                                optarg);
      break;
    case 'h': trace_usage(stdout); exit(0);
    default: trace_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (tool_target_operands(&o->t, argc - optind, argv + optind) != 0) return TOOL_EXIT_USAGE;
  if (o->output == NULL || o->output[0] == '\0')
    return tool_usage_error("say where to write the trace: -o OUT.json (or -o - for stdout)");
  return 0;
}

/* The output first: a folder we cannot write to should fail before we
 * spend --duration following a process.  0, or the exit code. */
static int open_output(const char *path, struct output *w)
{
  int fd = STDOUT_FILENO, err;
  if (strcmp(path, "-") != 0) {
    if ((err = cm_afile_open(&w->file, path)) != 0) {
      tool_say("cannot write %s: %s", path, strerror(-err));
      return TOOL_EXIT_ERROR;
    }
    w->to_file = 1;
    fd = w->file.fd;
  }
  if ((w->out = malloc(sizeof *w->out)) == NULL) {
    tool_say("out of memory");
    return TOOL_EXIT_ERROR;
  }
  memset(w->out, 0, offsetof(struct trace_out, buf));
  w->out->fd = fd;
  return 0;
}

/* OUT replaced by the whole trace (after a crash: the old file or the
 * whole new one, never a prefix).  0, or the exit code after saying why. */
static int commit_output(const char *path, struct output *w)
{
  struct trace_out *o = w->out;
  trace_out_flush(o);
  if (o->err == 0 && w->to_file) {
    o->err = -cm_afile_commit(&w->file, NULL);
    o->fd = -1;
  }
  if (o->err) {
    tool_say("cannot write %s: %s", w->to_file ? path : "to stdout", strerror(o->err));
    return TOOL_EXIT_ERROR;
  }
  return 0;
}

static void close_output(struct output *w)
{
  if (w->to_file) cm_afile_abort(&w->file); /* nothing left after a commit */
  free(w->out);
}

/* Follow process [pid] until it exits, for [duration], until [max_size]
 * bytes are written (*full set), or a signal. */
static int follow(struct ocgc_cursor *cur, const struct ocgc_source *src, int pid,
                  uint64_t duration, uint64_t max_size, const struct trace *t,
                  const struct trace_out *out, int *full)
{
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  uint64_t deadline = cm_mono_ns() + duration;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  int err;
  if (isatty(STDERR_FILENO))
    fprintf(stderr, "ocgc trace: following process %d until it exits or for %.3g s "
            "(Ctrl-C stops early)\n", pid, (double)duration / 1e9);
  for (;;) {
    /* Alive before the drain: events written before an exit are read. */
    int alive = !ocgc_source_gone(src);
    /* Gone: nothing more is written, read what is left whole. */
    d.stop = &tool_stop;
    d.deadline_ns = alive ? deadline : 0;
    err = ocgc_cursor_drain(cur, &d, NULL);
    if (out->bytes >= max_size) *full = 1;
    if (err != 0 || !alive || tool_stop || out->err || t->oom || *full ||
        cm_mono_ns() >= deadline)
      return err;
    ocgc_cursor_stats(cur, &st);
    if (!st.behind) tool_sleep_ns(POLL_NS); /* else read on at once */
  }
}

/* Read the target into the trace: a file whole, a process as it goes;
 * then the trace's tail.  0 or an error. */
static int read_target(const struct trace_opts *o, struct ocgc_source *src, struct trace *t,
                       const struct trace_out *out, int *full)
{
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_cursor *cur = NULL;
  struct tool_signals sig;
  int err;
  co.start = o->t.file != NULL ? OCGC_START_OLDEST : OCGC_START_NOW;
  co.on_event = trace_on_event;
  co.on_lost = trace_on_lost;
  co.ctx = t;
  if ((err = ocgc_cursor_new(src, &co, &cur)) != 0) return err;
  tool_say_ids(src, tool_target_label(&o->t)); /* after the cursor: it reads from here */
  ocgc_cursor_stats(cur, &st);
  /* What the ring overwrote before we came is lost to the trace too (the
   * cursor counts it as skipped): marked at the first event. */
  if (o->t.file != NULL) trace_skipped(t, st.skipped, st.lost_exact);
  tool_signals_catch(&sig);
  if (o->t.file != NULL) {
    struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
    d.stop = &tool_stop;
    err = ocgc_cursor_drain(cur, &d, NULL);
  } else {
    err = follow(cur, src, o->t.pid, o->duration, o->max_size, t, out, full);
  }
  tool_signals_restore(&sig);
  if (err == 0 && t->oom) err = -ENOMEM;
  if (err == 0) {
    ocgc_cursor_stats(cur, &st);
    trace_end(t, &st, tool_target_label(&o->t));
    if (t->oom) err = -ENOMEM;
  }
  ocgc_cursor_free(cur);
  return err;
}

/* The line on stderr that says what was written. */
static void say_written(const struct trace_opts *o, const struct trace *t, uint64_t skipped)
{
  uint64_t lost = t->lost + skipped;
  fprintf(stderr, "ocgc trace: wrote %s: %" PRIu64 " slices, %" PRIu64 " events lost%s",
          strcmp(o->output, "-") == 0 ? "stdout" : o->output, t->spans, lost,
          lost ? " (marked \"events lost\")" : "");
  if (t->early) fprintf(stderr, ", %" PRIu64 " early writes of held slices", t->early);
  fprintf(stderr, "\n");
}

/* Trace the open source into the output; the exit code. */
static int trace(const struct trace_opts *o, struct ocgc_source *src, struct output *w)
{
  struct sigaction ign, old_pipe;
  struct trace t;
  int err, rc = 0, full = 0;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &old_pipe);
  err = trace_start(&t, w->out, src, (uint64_t)o->t.pid, o->max_held);
  if (err == 0) err = read_target(o, src, &t, w->out, &full);
  if (err == 0 && full)
    tool_say("stopped following process %d at --max-size (%" PRIu64 " bytes written)",
             o->t.pid, w->out->bytes);
  if (err) rc = tool_target_error(&o->t, err);
  else if ((rc = commit_output(o->output, w)) == 0)
    say_written(o, &t, o->t.file != NULL ? t.skipped : 0);
  sigaction(SIGPIPE, &old_pipe, NULL);
  trace_free(&t);
  return rc;
}

int cmd_trace(int argc, char **argv)
{
  struct trace_opts o;
  struct output w;
  struct ocgc_source *src = NULL;
  int err, rc = parse_args(argc, argv, &o);
  if (rc != 0) return rc;
  memset(&w, 0, sizeof w);
  if ((rc = open_output(o.output, &w)) != 0) {
    close_output(&w);
    return rc;
  }
  if ((err = tool_target_open(&o.t, &src)) != 0) rc = tool_exit_code(err);
  else rc = trace(&o, src, &w);
  close_output(&w);
  ocgc_source_close(src);
  return rc;
}
