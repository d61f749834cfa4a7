/* run.c - `ocgc run [--] CMD ARGS...`: run a program with its GC ring on,
 * follow the ring while it runs, and when it ends print the GC report
 * (report_print.c, as `ocgc report` does) to stderr or to -o FILE; exit
 * with the program's status (its exit code, or 128+N when signal N killed
 * it).
 *
 * Owns the child process and the private ring folder.  Invariants:
 * - the child runs in a fresh folder of ours (mkdtemp, 0700) named by
 *   OCAML_RUNTIME_EVENTS_DIR, so the only rings there are our child's (or
 *   of programs it starts): no search of other processes' memory maps;
 * - OCGC_DISABLE is removed from the child's environment (the ring must
 *   be on); OCAML_RUNTIME_EVENTS_PRESERVE=1 is set so that a program that
 *   ends before our first look (a few ms) still leaves its ring to read;
 *   we remove the folder and everything in it ourselves at the end;
 * - once the ring is open, its mapping is kept until the report is printed:
 *   the file may go, the mapping stays readable;
 * - the aggregator reads from the oldest event, polled every POLL_NS, so
 *   nothing the program did early is missed unless the ring overflows
 *   between polls (the counts stay exact then: they are the producer's);
 * - the child's stdin, stdout and stderr are ours: the report goes to
 *   stderr (or -o FILE), never to stdout;
 * - SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to ocgc are passed on to the child;
 *   ocgc itself waits for the child to end and then reports.  A signal the
 *   terminal sent to the whole foreground process group (si_code
 *   SI_KERNEL) already reached the child and is not sent a second time;
 * - whatever happens to the report, ocgc exits with the child's status,
 *   but for --html OUT: a folder we cannot write to fails before the
 *   program is started (exit 5 or 8), and a write that fails at the end
 *   (a full disk) turns a status of 0 into 5 (said on stderr);
 * - with --html, the aggregator gives each pause to a timeline (html.h)
 *   and the child's /proc figures are sampled at each poll;
 * - with --cpu FILE, the program's CPU is sampled from when its ring is
 *   found (after its exec: a sampler opened before would stop at the
 *   exec) to its end, a turn at each poll (cpu_window.c), and its profile
 *   written to FILE once it ended, its figures on stderr; sampling that is
 *   refused is said in one line and the run goes on without it; a profile
 *   that cannot be written turns a status of 0 into 5, as --html; with
 *   --json or --html the profile (report_cpu*.c) is taken before the
 *   report, whose member "cpu" and "Where the CPU goes" it is.
 * Its signal handling is its own (it forwards; it does not stop): not
 * common.h's stop flag. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "cpu_window.h"
#include "html.h"
#include "report.h"

#define POLL_NS UINT64_C(50000000)       /* follow the ring every 50 ms */
#define LOOK_NS UINT64_C(5000000)        /* look for it every 5 ms at first */
#define NORING_NS UINT64_C(1000000000)   /* after 1 s without one, say so */

static volatile sig_atomic_t child_pid;

static void forward(int sig, siginfo_t *si, void *uc)
{
  (void)uc;
  if (child_pid > 0 && (si == NULL || si->si_code != SI_KERNEL)) kill((pid_t)child_pid, sig);
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

static void run_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc run [--json] [-o FILE] [--html OUT] [--] CMD [ARGS...]\n\n"
          "Run CMD with its GC ring on, follow the ring while it runs, and when it\n"
          "ends print the GC report of its whole life (as 'ocgc report' does) on\n"
          "stderr, or in FILE; stdin, stdout and stderr are the program's.  ocgc exits\n"
          "with the program's status: its exit code, or 128+N if signal N killed it\n"
          "(the report says so).  SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to ocgc are\n"
          "passed on to the program.\n\n"
          "CMD must be an OCaml program linked with -runtime-variant _ocgc (or run\n"
          "by ocamlrun_ocgc); any other program is run all the same, without a\n"
          "report.  The ring is put in a private temporary folder (removed at the\n"
          "end), and OCGC_DISABLE is unset for the program; OCAMLRUNPARAM=e=N sets\n"
          "its size as usual.\n\n"
          "  --json          the report in JSON (schema \"ocgc-report\", version %d:\n"
          "                  docs/report-json.md)\n"
          "  -o, --output F  write the report to F instead of stderr\n"
          "  --html OUT      also write the report as one self-contained HTML file\n"
          "                  (docs/html-report.md); a folder that cannot be written\n"
          "                  to is an error before CMD starts\n"
          "  --cpu FILE      also write the program's CPU profile (pprof, labelled\n"
          "                  gc_phase and gc_cause, as 'ocgc profile --cpu') to FILE;\n"
          "                  with --json or --html the report has it too (the member\n"
          "                  \"cpu\"; \"Where the CPU goes\", a flame graph by GC phase)\n"
          "  --frequency HZ  its samples a second of CPU per thread (default 100)\n"
          "  -h, --help      this help\n",
          REPORT_SCHEMA_VERSION);
}

/* A folder for the ring: on tmpfs when we can (a disk-backed shared
 * mapping can stall the writer), else where temporary files go. */
static char *make_ring_dir(void)
{
  const char *bases[4];
  struct stat st;
  char path[4096];
  size_t i, n = 0;
  const char *x = getenv("XDG_RUNTIME_DIR"), *t = getenv("TMPDIR");
  if (x != NULL && x[0] == '/') bases[n++] = x;
  bases[n++] = "/dev/shm";
  if (t != NULL && t[0] == '/') bases[n++] = t;
  bases[n++] = "/tmp";
  for (i = 0; i < n; i++) {
    if (stat(bases[i], &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if ((size_t)snprintf(path, sizeof path, "%s/ocgc-run.XXXXXX", bases[i]) >= sizeof path) continue;
    if (mkdtemp(path) != NULL) return strdup(path);
  }
  return NULL;
}

static void remove_ring_dir(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4096];
  if (d != NULL) {
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path) unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* The ring in [dir]: the child's own <pid>.events if there, else the first
 * other "<digits>.events" (a program the child started).  0 and the path,
 * or -1. */
static int find_ring(const char *dir, pid_t pid, char *out, size_t n)
{
  DIR *d;
  struct dirent *e;
  struct stat st;
  int found = -1;
  snprintf(out, n, "%s/%d" OCGC_DIR_EVENTS_SUFFIX, dir, (int)pid);
  if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) return 0;
  if ((d = opendir(dir)) == NULL) return -1;
  while (found != 0 && (e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name), digits = strspn(e->d_name, "0123456789");
    if (digits == 0 || len != digits + strlen(OCGC_DIR_EVENTS_SUFFIX) ||
        strcmp(e->d_name + digits, OCGC_DIR_EVENTS_SUFFIX) != 0)
      continue;
    if ((size_t)snprintf(out, n, "%s/%s", dir, e->d_name) < n) found = 0;
  }
  closedir(d);
  return found;
}

struct run {
  char *dir;
  pid_t pid;
  struct ocgc_source *src;
  struct ocgc_agg *agg;        /* non-NULL: we follow the ring */
  char ring[4200];
  struct ocgc_timeline *tl;         /* --html: what is drawn over time, else NULL */
  struct html_file hf;         /* --html: the file (hf.f NULL: none) */
  struct html_prof prof;       /* --html: its names, read when its ring is found */
  const char *cpu_out;         /* --cpu FILE, or NULL */
  unsigned cpu_hz;             /* --frequency */
  struct cpu_window *cw;       /* --cpu: sampling, once the ring is found */
  struct rep_cpu cpu;          /* --cpu with --json or --html: its profile for the report */
  int cpu_tried;               /* the sampler was asked for */
  int said_noring;             /* the "no GC ring" line was written */
  int seen_ring;               /* its ring's name appeared in r->dir */
};

/* Open the ring if it is there now; 1 if we follow it (now or before). */
static int try_attach(struct run *r)
{
  int err;
  if (r->agg != NULL) return 1;
  if (find_ring(r->dir, r->pid, r->ring, sizeof r->ring) != 0) return 0;
  r->seen_ring = 1;
  err = ocgc_source_open_path(r->ring, NULL, &r->src);
  if (err == 0 && (err = rep_agg_new(r->src, OCGC_START_OLDEST, r->tl, &r->agg)) != 0) {
    ocgc_source_close(r->src);
    r->src = NULL;
  }
  if (err == 0 && r->tl != NULL) {
    struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
    if (ocgc_source_info(r->src, &info) == 0 && info.created_ns != 0) ocgc_timeline_origin(r->tl, info.created_ns);
    /* Its names now: once it has exited, /proc has nothing to read. */
    html_prof_begin(&r->prof, r->src, (int)r->pid, 1);
  }
  /* ENOENT: it came and went (a child that exited without PRESERVE): look
   * again next time */
  if (err && err != -ENOENT) tool_say("%s: %s", r->ring, ocgc_strerror(err));
  return err == 0;
}

/* The child's end of the pipe: reset the signals, set the environment,
 * exec; on failure, errno through the pipe. */
static void exec_child(const char *dir, char **argv, int fd)
{
  struct sigaction sa;
  size_t i;
  int e;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &sa, NULL);
  unsetenv("OCGC_DISABLE");
  if (setenv("OCAML_RUNTIME_EVENTS_DIR", dir, 1) == 0 &&
      setenv("OCAML_RUNTIME_EVENTS_PRESERVE", "1", 1) == 0)
    execvp(argv[0], argv);
  e = errno;
  if (write(fd, &e, sizeof e) < 0) { /* nothing more we can do */ }
  _exit(e == ENOENT ? 127 : 126);
}

/* Start argv[0] with the ring on in r->dir; the pid, or -1 (said why, and
 * *code is the exit status to give: 126 not executable, 127 not found). */
static pid_t start_child(struct run *r, char **argv, int *code)
{
  int fds[2], e = 0;
  ssize_t got;
  pid_t pid;
  *code = TOOL_EXIT_ERROR;
  if (pipe2(fds, O_CLOEXEC) != 0) {
    tool_say("pipe: %s", strerror(errno));
    return -1;
  }
  if ((pid = fork()) < 0) {
    tool_say("fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    exec_child(r->dir, argv, fds[1]);
  }
  close(fds[1]);
  child_pid = pid; /* from now on, signals to us are passed on */
  /* The pipe closes at exec (O_CLOEXEC): nothing to read means it ran. */
  do got = read(fds[0], &e, sizeof e); while (got < 0 && errno == EINTR);
  close(fds[0]);
  if (got != (ssize_t)sizeof e) return pid;
  child_pid = 0;
  {
    char esc[TOOL_ESC_SIZE(PATH_MAX)];
    tool_say("cannot run %s: %s", tool_esc(argv[0], esc, sizeof esc), strerror(e));
  }
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  *code = e == ENOENT ? 127 : 126;
  return -1;
}

/* Follow the ring (once it is there) until the child ends: its wait
 * status in *status, 0; or -1 if waitpid failed (said why). */
static int follow_child(struct run *r, const char *cmd, int *status)
{
  uint64_t t0 = cm_mono_ns();
  int err = 0;
  for (;;) {
    pid_t w = waitpid(r->pid, status, WNOHANG);
    if (w == r->pid) return 0;
    if (w < 0 && errno != EINTR) {
      tool_say("waitpid: %s", strerror(errno));
      return -1;
    }
    if (try_attach(r)) {
      int64_t got = ocgc_agg_poll(r->agg);
      uint64_t poll = POLL_NS;
      html_sample(r->tl, (int)r->pid);
      if (got < 0 && err == 0) {
        err = (int)got;
        tool_say("%s: %s (reading on)", r->ring, ocgc_strerror(err));
      }
      if (r->cpu_out != NULL && !r->cpu_tried) {
        char label[32];
        r->cpu_tried = 1;
        snprintf(label, sizeof label, "process %d", (int)r->pid);
        if (cpu_window_open(&r->cw, (int)r->pid, label, r->src, NULL, r->cpu_hz, 0) != 0)
          tool_say("running it without a CPU profile");
      }
      if (r->cw != NULL) {
        if (cpu_window_turn(r->cw) > 0) { /* no memory: said; the run goes on without it */
          cpu_window_free(r->cw);
          r->cw = NULL;
        } else if (cpu_window_poll_ns(r->cw) < poll) {
          poll = cpu_window_poll_ns(r->cw);
        }
      }
      tool_sleep_ns(poll);
      continue;
    }
    if (!r->said_noring && cm_mono_ns() - t0 >= NORING_NS) {
      char esc[TOOL_ESC_SIZE(PATH_MAX)];
      tool_say("%s has no GC ring after 1 s: it is not an OCaml program linked with "
               "-runtime-variant _ocgc (or run by ocamlrun_ocgc); running it without a "
               "report", tool_esc(cmd, esc, sizeof esc));
      r->said_noring = 1;
    }
    tool_sleep_ns(r->said_noring ? POLL_NS : LOOK_NS);
  }
}

/* How the child ended, into m; the status ocgc exits with. */
static int child_status(int status, struct rep_meta *m)
{
  m->ended_ns = cm_mono_ns();
  m->has_status = 1;
  if (WIFSIGNALED(status)) {
    m->signal = WTERMSIG(status);
    m->exit_code = -1;
    m->core_dumped = WCOREDUMP(status) ? 1 : 0;
    return 128 + m->signal;
  }
  m->exit_code = WEXITSTATUS(status);
  return m->exit_code;
}

/* How the child ended, in words, into buf. */
static const char *how_it_ended(const struct rep_meta *m, char *buf, size_t n)
{
  if (m->signal != 0)
    snprintf(buf, n, "was killed by signal %d (%s)", m->signal, rep_signal_name(m->signal));
  else
    snprintf(buf, n, "exited with status %d", m->exit_code);
  return buf;
}

/* No ring to report on: say why, and how the program ended all the same. */
static void no_report(const struct run *r, const struct rep_meta *m)
{
  char how[96], esc[TOOL_ESC_SIZE(PATH_MAX)];
  how_it_ended(m, how, sizeof how);
  tool_esc(m->command[0], esc, sizeof esc);
  if (r->seen_ring)
    /* A program killed before our first look takes its memfd ring with it
     * (only a normal exit preserves it). */
    tool_say("%s %s before ocgc could open its GC ring: no report", esc, how);
  else if (!r->said_noring)
    tool_say("%s has no GC ring: it is not an OCaml program linked with -runtime-variant "
             "_ocgc (or run by ocamlrun_ocgc); no report (it %s)", esc, how);
}

/* The HTML report of [snap], if asked: 0, or the exit code to give. */
static int html_report(struct run *r, const struct rep_meta *m, const struct ocgc_snapshot *snap)
{
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  struct html_in in = {m, r->src, NULL, snap, r->tl, NULL, NULL};
  if (r->hf.f == NULL) return 0;
  html_prof_end(&r->prof, r->src);
  in.prof = r->prof.window;
  in.syms = r->prof.syms;
  ocgc_snapshot_counters(snap, &c);
  ocgc_timeline_end(r->tl, c.last_event_ns);
  return html_finish(&r->hf, &in);
}

/* The report, once the child has ended: 0, or the exit code the HTML
 * report's failure calls for. */
static int final_report(struct run *r, FILE *out, int json, struct rep_meta *m)
{
  struct ocgc_snapshot *snap = NULL;
  int err, code = 0;
  /* The ring is still there (PRESERVE) if it came after our last look. */
  if (!try_attach(r)) {
    no_report(r, m);
    return 0;
  }
  if ((err = ocgc_agg_drain(r->agg, NULL, NULL)) != 0 ||
      (err = ocgc_agg_finish(r->agg)) != 0 || (err = ocgc_agg_snapshot(r->agg, &snap)) != 0) {
    tool_say("%s: %s", r->ring, ocgc_strerror(err));
  } else {
    if ((err = rep_print(out, json, m, r->src, NULL, snap)) != 0)
      tool_say("writing the report: %s", strerror(-err));
    code = html_report(r, m, snap);
  }
  ocgc_snapshot_free(snap);
  return code;
}

/* The CPU window's end, once the child has ended: its last samples, its
 * figures on stderr and, for a JSON or HTML report, its profile into
 * m->cpu.  0, or the exit code its failure calls for. */
static int cpu_end(struct run *r, struct rep_meta *m, int json)
{
  if (r->cpu_out == NULL) return 0;
  m->cpu = &r->cpu; /* "cpu": null if none is taken below */
  if (r->cw == NULL) {
    if (!r->cpu_tried) tool_say("no CPU profile: the program's ring was never found");
    return TOOL_EXIT_ERROR;
  }
  (void)cpu_window_turn(r->cw); /* its last samples (it is gone: OCGC_E_STALE) */
  cpu_window_end(r->cw);
  cpu_window_say(r->cw);
  return json || r->hf.f != NULL ? rep_cpu_take(&r->cpu, r->cw) : 0;
}

/* The CPU profile written, after the report: 0, or the exit code its
 * failure calls for. */
static int cpu_report(struct run *r)
{
  if (r->cpu_out == NULL || r->cw == NULL) return 0;
  return cpu_window_write(r->cw, FMT_PPROF, 0, r->cpu_out);
}

/* Run the program and report; the status to exit with. */
static int run(struct run *r, char **argv, FILE *out, int json)
{
  struct sigaction sa, old[NFORWARDED];
  struct rep_meta m;
  int status = 0, code = 0;
  size_t i;
  memset(&m, 0, sizeof m);
  m.mode = REP_RUN;
  m.command = argv;
  /* Handlers before the fork, so no signal falls between; the child puts
   * the defaults back before exec. */
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  child_pid = 0;
  for (i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &sa, &old[i]);
  if ((r->pid = start_child(r, argv, &code)) >= 0) {
    if (follow_child(r, argv[0], &status) == 0) {
      child_pid = 0;
      code = child_status(status, &m);
      if (cpu_end(r, &m, json) != 0 && code == 0) code = TOOL_EXIT_ERROR;
      if (final_report(r, out, json, &m) != 0 && code == 0) code = TOOL_EXIT_ERROR;
      if (cpu_report(r) != 0 && code == 0) code = TOOL_EXIT_ERROR;
    } else {
      code = TOOL_EXIT_ERROR;
    }
  }
  child_pid = 0;
  for (i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &old[i], NULL);
  return code;
}

/* The options into *json, *output, *html and r's CPU profile; 0, or the
 * exit code. */
static int parse_args(int argc, char **argv, int *json, const char **output, const char **html,
                      struct run *r)
{
  static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"cpu", required_argument, NULL, 'c'},
    {"frequency", required_argument, NULL, 'F'},
    {"html", required_argument, NULL, 'H'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt;
  uint64_t hz;
  optind = 1;
  r->cpu_hz = PROFILE_CPU_DEFAULT_HZ;
  /* "+": options end at CMD, whose own options are its business */
  while ((opt = getopt_long(argc, argv, "+ho:", longopts, NULL)) != -1) {
    switch (opt) {
    case 'j': *json = 1; break;
    case 'o': *output = optarg; break;
    case 'H': *html = optarg; break;
    case 'c': r->cpu_out = optarg; break;
    case 'F':
      if (tool_parse_count(optarg, &hz) != 0 || hz == 0 || hz > PROFILE_CPU_MAX_HZ)
        return tool_usage_error("--frequency takes 1 to %u samples a second, not '%s'",
                                PROFILE_CPU_MAX_HZ, optarg);
      r->cpu_hz = (unsigned)hz;
      break;
    case 'h': run_usage(stdout); exit(0);
    default: run_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (optind >= argc)
    return tool_usage_error("give the program to run: ocgc run [--] CMD [ARGS...]");
  return 0;
}

int cmd_run(int argc, char **argv)
{
  const char *output = NULL, *html = NULL;
  FILE *out = stderr;
  struct run r;
  int json = 0, code;
  memset(&r, 0, sizeof r);
  if ((code = parse_args(argc, argv, &json, &output, &html, &r)) != 0) return code;
  if (html != NULL && (code = html_begin(&r.hf, html)) != 0) return code;
  if (html != NULL && ocgc_timeline_new(&r.tl) != 0) {
    html_file_abort(&r.hf);
    tool_say("out of memory");
    return TOOL_EXIT_ERROR;
  }
  if (output != NULL && (out = fopen(output, "we")) == NULL) {
    int e = errno;
    tool_say("%s: %s", output, strerror(e));
    html_file_abort(&r.hf);
    ocgc_timeline_free(r.tl);
    return tool_exit_code(-e);
  }
  if ((r.dir = make_ring_dir()) == NULL) {
    tool_say("cannot make a folder for the ring (in $XDG_RUNTIME_DIR, /dev/shm, $TMPDIR or "
             "/tmp): %s", strerror(errno));
    code = TOOL_EXIT_ERROR;
  } else {
    code = run(&r, argv + optind, out, json);
  }
  cpu_window_free(r.cw);
  rep_cpu_free(&r.cpu);
  ocgc_agg_free(r.agg);
  ocgc_timeline_free(r.tl);
  html_prof_free(&r.prof);
  html_file_abort(&r.hf); /* nothing if it was written */
  ocgc_source_close(r.src);
  if (r.dir != NULL) remove_ring_dir(r.dir);
  free(r.dir);
  if (out != stderr && fclose(out) != 0) tool_say("%s: %s", output, strerror(errno));
  return code;
}
