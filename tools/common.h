/* common.h - what every `ocgc` subcommand shares (private to tools/), as
 * bpftool's main.h: exit codes and error lines, argument parsing, the
 * target (a PID or a ring file) and its liveness, signals, the bounded
 * clock, and the escaper for text output.  Code in common.c (process-wide
 * things) and target.c (the target); the drain of a reader is libocgc's
 * (ocgc_agg_drain).  Nothing here is libocgc's ABI: the `tool_` prefix is
 * ours. */
#ifndef OCGC_TOOLS_COMMON_H
#define OCGC_TOOLS_COMMON_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "clock.h"
#include "human.h"
#include "ocgc/consumer.h"

/* ---- subcommands ----------------------------------------------------------- */

int cmd_dump(int argc, char **argv);
int cmd_flight(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_top(int argc, char **argv);
/* `ocgc stat`'s table of [t], a row every [interval_ns], [count] rows (0:
 * until the process exits or a signal), for another command (`ocgc top`
 * when stdout is no terminal), whose name (tool_name) its messages keep.
 * Returns the exit code. */
struct tool_target;
int stat_rows(const struct tool_target *t, uint64_t interval_ns, uint64_t count);
int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_profile(int argc, char **argv);

/* The running subcommand's name ("stat"), for "ocgc stat: ..." lines; main()
 * sets it before the dispatch. */
extern const char *tool_name;

/* ---- exit codes and error lines -------------------------------------------- */

/* Exit codes, one per kind of failure a script may want to tell apart
 * (documented in `ocgc --help`, ocgc(1) and README.md). */
enum {
  TOOL_EXIT_USAGE = 2,    /* bad arguments */
  TOOL_EXIT_NOTFOUND = 3, /* no such file or process */
  TOOL_EXIT_CORRUPT = 4,  /* corrupt, truncated or unsupported ring */
  TOOL_EXIT_ERROR = 5,    /* anything else */
  TOOL_EXIT_NORING = 6,   /* the process has no ring */
  TOOL_EXIT_STALE = 7,    /* the ring's process exited or is gone */
  TOOL_EXIT_DENIED = 8,   /* not allowed to read the process or file */
  TOOL_EXIT_NOPROFILE = 9,/* no allocation profile to give (profile) */
};

/* Exit code for a libocgc error (0 for 0). */
int tool_exit_code(int err);

/* One line "ocgc NAME: <fmt...>" on stderr. */
void tool_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tool_say(), then TOOL_EXIT_USAGE: `return tool_usage_error(...)`. */
int tool_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- arguments -------------------------------------------------------------- */

/* A process id as the command line gives it (a positive decimal int), or
 * -1 if [s] is not one. */
int tool_parse_pid(const char *s);

/* "10", "10s", "1.5s", "500ms", "2m", "1h", "250us" -> nanoseconds (a bare
 * number is seconds).  Returns 0, or -1 if [s] is not a duration. */
int tool_parse_duration(const char *s, uint64_t *ns);

/* A positive decimal count (no sign, no suffix): 0 and *n, or -1. */
int tool_parse_count(const char *s, uint64_t *n);

/* A positive size in bytes: "1048576", "512K", "256M", "1G" (powers of
 * 1024; "MiB", "MB" and "B" read the same): 0 and *n, or -1. */
int tool_parse_size(const char *s, uint64_t *n);

/* --ids 5.2|5.3|5.4 (how a stock ring numbers its events) into *out: 0,
 * or a line on stderr and TOOL_EXIT_USAGE. */
int tool_parse_ids(const char *s, enum ocgc_ids *out);

/* "5.2", "5.3" or "5.4": how --ids and the output name a numbering. */
const char *tool_ids_name(enum ocgc_ids ids);

/* Which numbering a source is read with, and why, for output. */
struct tool_ids {
  const char *ids;  /* tool_ids_name(): "5.2", "5.3" or "5.4" */
  const char *from; /* "file" (an ocgc ring), "executable", "option" (--ids), "assumed" */
  int stock;        /* not an ocgc ring: worth saying */
  char ocaml[65];   /* "executable": the OCaml version read (escaped: 4 x 16 + 1), else "" */
  char why[192];    /* a phrase: "from its executable's OCaml 5.3.0", ... */
};
int tool_ids(const struct ocgc_source *src, struct tool_ids *out);

/* For a stock ring only: one line on stderr saying which numbering it is
 * read with and why ("LABEL: a stock OCaml 5 ring, read with ..."). */
void tool_say_ids(const struct ocgc_source *src, const char *label);

/* ---- the target: a live process or a ring file (target.c) ------------------- */

struct tool_target {
  int pid;              /* > 0: a live process; 0: the file */
  const char *dir;      /* with pid: its ring is DIR/PID.events, not searched */
  const char *file;     /* without pid: a ring file */
  enum ocgc_ids ids;    /* how a stock file numbers its events (0: 5.2) */
  char label[32];       /* "process PID" (set with pid), for messages */
};

/* ---- the options every reading command takes ---------------------------------- */

/* --dir DIR, --ids 5.2|5.3|5.4, --file FILE and --json, spelt and parsed in
 * one place, as bpftool's main.c parses its globals: a command puts the
 * entries it takes in its getopt_long table and hands what getopt_long
 * returns to tool_common_opt() before its own cases.  Their getopt values
 * are past any character, so they never clash with a command's own. */
enum {
  TOOL_OPT_DIR = 0x100,
  TOOL_OPT_IDS,
  TOOL_OPT_FILE,
  TOOL_OPT_JSON,
};
#define TOOL_LONGOPT_DIR {"dir", required_argument, NULL, TOOL_OPT_DIR}
#define TOOL_LONGOPT_IDS {"ids", required_argument, NULL, TOOL_OPT_IDS}
#define TOOL_LONGOPT_FILE {"file", required_argument, NULL, TOOL_OPT_FILE}
#define TOOL_LONGOPT_JSON {"json", no_argument, NULL, TOOL_OPT_JSON}

/* [opt] (with getopt's [arg]) into [t] and *json (may be NULL for a
 * command without --json): 1 if it was one of them, 0 if not (the
 * command's own), or TOOL_EXIT_USAGE after a line on stderr. */
int tool_common_opt(int opt, const char *arg, struct tool_target *t, int *json);

/* Parse [arg] as the target's PID: 0, or a line saying it is no process id
 * ([hint] ends it; NULL: "('ocgc ls' lists ...)") and TOOL_EXIT_USAGE. */
int tool_target_pid(struct tool_target *t, const char *arg, const char *hint);

/* The PID operand of a command that also takes --file FILE: exactly one of
 * them; --dir goes with a PID only.  [operands] are what getopt left.
 * Returns 0 or, after a line on stderr, TOOL_EXIT_USAGE. */
int tool_target_operands(struct tool_target *t, int noperands, char **operands);

/* What messages call the target: "process PID" or the file's path. */
const char *tool_target_label(const struct tool_target *t);

/* Open the target.  On failure prints one line saying what is wrong and what
 * to do (for a process: why attaching failed), and returns the error. */
int tool_target_open(struct tool_target *t, struct ocgc_source **out);

/* "ocgc NAME: LABEL: <libocgc's words for err>" on stderr; returns the exit
 * code of [err] (TOOL_EXIT_ERROR if err is 0). */
int tool_target_error(const struct tool_target *t, int err);

/* Why attaching to [pid] (its ring looked for in [dir], or in its memory
 * map when dir is NULL) failed with [err], and what to do: one line. */
void tool_say_attach_error(int pid, const char *dir, int err);

/* ---- signals ------------------------------------------------------------------ */

/* The signal (SIGINT, SIGTERM) that asked us to stop, or 0. */
extern volatile sig_atomic_t tool_stop;

struct tool_signals {
  struct sigaction old_int, old_term;
};

/* SIGINT and SIGTERM set tool_stop (cleared here), without SA_RESTART so
 * that a sleep or a wait for a key ends at once; the old handlers go in
 * *s for tool_signals_restore. */
void tool_signals_catch(struct tool_signals *s);
void tool_signals_restore(const struct tool_signals *s);

/* ---- sleeping (the clock: common/clock.h, cm_mono_ns) -------------------------- */

/* Sleep [ns] nanoseconds, or not at all once tool_stop is set; a signal
 * cuts it short, a stop signal even one that arrives just before the wait
 * (callers look at tool_stop in their loops). */
void tool_sleep_ns(uint64_t ns);

/* The same until CLOCK_MONOTONIC reads [when] (cm_mono_ns), through other
 * signals, which do not end it. */
void tool_sleep_until_ns(uint64_t when);

/* How long the last drain of a window (report --duration) may read past
 * the window's end. */
#define TOOL_DRAIN_GRACE_NS UINT64_C(1000000000)

/* ---- text output ---------------------------------------------------------------- */

/* [s] for text output: every byte outside printable ASCII, and the
 * backslash, written as \xHH, so that a string the target controls (a
 * program name, a user-event name, a file name) can neither send escape
 * sequences to a terminal nor start a new "key value" line.  Writes into
 * buf[0..n) and returns buf; TOOL_ESC_SIZE(len) bytes hold any string of
 * len bytes whole, a smaller buf cuts it (never mid-escape).  (JSON output
 * escapes with json.h instead.) */
#define TOOL_ESC_SIZE(len) (4 * (len) + 1)
const char *tool_esc(const char *s, char *buf, size_t n);
/* tool_esc, with a space as \x20 too: for a string that must stay one
 * field of a line (a key of `ocgc dump`, a column of its --events). */
const char *tool_esc_word(const char *s, char *buf, size_t n);

#endif /* OCGC_TOOLS_COMMON_H */
