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
 * - whatever happens to the report, ocgc exits with the child's status. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "report.h"
#include "util.h"

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
          "usage: ocgc run [--json] [-o FILE] [--] CMD [ARGS...]\n\n"
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
  snprintf(out, n, "%s/%d.events", dir, (int)pid);
  if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) return 0;
  if ((d = opendir(dir)) == NULL) return -1;
  while (found != 0 && (e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name), digits = strspn(e->d_name, "0123456789");
    if (digits == 0 || len != digits + 7 || strcmp(e->d_name + digits, ".events") != 0) continue;
    if ((size_t)snprintf(out, n, "%s/%s", dir, e->d_name) < n) found = 0;
  }
  closedir(d);
  return found;
}

struct run {
  char *dir;
  pid_t pid;
  struct ocgc_source *src;
  struct rep_follow f;
  int following;
  char ring[4200];
};

/* Open the ring if it is there now; 1 if we follow it (now or before). */
static int try_attach(struct run *r)
{
  int err;
  if (r->following) return 1;
  if (find_ring(r->dir, r->pid, r->ring, sizeof r->ring) != 0) return 0;
  err = ocgc_source_open_path(r->ring, NULL, &r->src);
  if (err == 0 && (err = rep_follow_init(&r->f, r->src, OCGC_START_OLDEST)) != 0) {
    ocgc_source_close(r->src);
    r->src = NULL;
  }
  if (err) {
    /* ENOENT: it came and went (a child that exited without PRESERVE):
     * look again next time */
    if (err != -ENOENT)
      fprintf(stderr, "ocgc run: %s: %s\n", r->ring, ocgc_strerror(err));
    return 0;
  }
  r->following = 1;
  return 1;
}

/* Start argv[0] with the ring on in r->dir; the pid, or -1 (said why, and
 * *code is the exit status to give: 126 not executable, 127 not found). */
static pid_t start_child(struct run *r, char **argv, int *code)
{
  int fds[2], e = 0;
  ssize_t got;
  pid_t pid;
  if (pipe2(fds, O_CLOEXEC) != 0) {
    fprintf(stderr, "ocgc run: pipe: %s\n", strerror(errno));
    *code = OCGC_EXIT_ERROR;
    return -1;
  }
  pid = fork();
  if (pid < 0) {
    fprintf(stderr, "ocgc run: fork: %s\n", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    *code = OCGC_EXIT_ERROR;
    return -1;
  }
  if (pid == 0) {
    size_t i;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &sa, NULL);
    close(fds[0]);
    unsetenv("OCGC_DISABLE");
    if (setenv("OCAML_RUNTIME_EVENTS_DIR", r->dir, 1) == 0 &&
        setenv("OCAML_RUNTIME_EVENTS_PRESERVE", "1", 1) == 0)
      execvp(argv[0], argv);
    e = errno;
    if (write(fds[1], &e, sizeof e) < 0) { /* nothing more we can do */ }
    _exit(e == ENOENT ? 127 : 126);
  }
  close(fds[1]);
  child_pid = pid; /* from now on, signals to us are passed on */
  /* The pipe closes at exec (O_CLOEXEC): nothing to read means it ran. */
  do got = read(fds[0], &e, sizeof e); while (got < 0 && errno == EINTR);
  close(fds[0]);
  if (got == (ssize_t)sizeof e) {
    child_pid = 0;
    fprintf(stderr, "ocgc run: cannot run %s: %s\n", argv[0], strerror(e));
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
    *code = e == ENOENT ? 127 : 126;
    return -1;
  }
  return pid;
}

int cmd_run(int argc, char **argv)
{
  static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  struct sigaction sa, old[NFORWARDED];
  struct ocgc_snapshot *snap = NULL;
  struct rep_meta m;
  struct run r;
  const char *output = NULL;
  FILE *out = stderr;
  uint64_t t0;
  int opt, json = 0, status = 0, code = 0, said_noring = 0, err = 0;
  size_t i;
  pid_t w;

  memset(&r, 0, sizeof r);
  memset(&m, 0, sizeof m);
  optind = 1;
  /* "+": options end at CMD, whose own options are its business */
  while ((opt = getopt_long(argc, argv, "+ho:", longopts, NULL)) != -1) {
    switch (opt) {
    case 'j': json = 1; break;
    case 'o': output = optarg; break;
    case 'h': run_usage(stdout); return 0;
    default: run_usage(stderr); return OCGC_EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "ocgc run: give the program to run: ocgc run [--] CMD [ARGS...]\n");
    return OCGC_EXIT_USAGE;
  }
  if (output != NULL && (out = fopen(output, "we")) == NULL) {
    fprintf(stderr, "ocgc run: %s: %s\n", output, strerror(errno));
    return errno == ENOENT ? OCGC_EXIT_NOTFOUND : errno == EACCES ? OCGC_EXIT_DENIED
                                                                   : OCGC_EXIT_ERROR;
  }
  if ((r.dir = make_ring_dir()) == NULL) {
    fprintf(stderr, "ocgc run: cannot make a folder for the ring (in $XDG_RUNTIME_DIR, "
            "/dev/shm, $TMPDIR or /tmp): %s\n", strerror(errno));
    if (out != stderr) fclose(out);
    return OCGC_EXIT_ERROR;
  }

  /* Handlers before the fork, so no signal falls between; the child puts
   * the defaults back before exec. */
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  child_pid = 0;
  for (i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &sa, &old[i]);

  t0 = ocgc_now_ns();
  r.pid = start_child(&r, argv + optind, &code);
  if (r.pid < 0) goto out;

  for (;;) {
    w = waitpid(r.pid, &status, WNOHANG);
    if (w == r.pid) break;
    if (w < 0 && errno != EINTR) {
      fprintf(stderr, "ocgc run: waitpid: %s\n", strerror(errno));
      code = OCGC_EXIT_ERROR;
      goto out;
    }
    if (try_attach(&r)) {
      int64_t got = rep_follow_poll(&r.f);
      if (got < 0 && err == 0) {
        err = (int)got;
        fprintf(stderr, "ocgc run: %s: %s (reading on)\n", r.ring, ocgc_strerror(err));
      }
      ocgc_sleep_ns(POLL_NS);
    } else {
      if (!said_noring && ocgc_now_ns() - t0 >= NORING_NS) {
        fprintf(stderr, "ocgc run: %s has no GC ring after 1 s: it is not an OCaml program "
                "linked with -runtime-variant _ocgc (or run by ocamlrun_ocgc); running it "
                "without a report\n", argv[optind]);
        said_noring = 1;
      }
      ocgc_sleep_ns(said_noring ? POLL_NS : LOOK_NS);
    }
  }
  child_pid = 0;
  m.ended_ns = ocgc_now_ns();
  if (WIFSIGNALED(status)) {
    m.signal = WTERMSIG(status);
    m.exit_code = -1;
    m.core_dumped = WCOREDUMP(status) ? 1 : 0;
    code = 128 + m.signal;
  } else {
    m.exit_code = WEXITSTATUS(status);
    code = m.exit_code;
  }
  m.has_status = 1;

  /* The ring is still there (PRESERVE) if it came after our last look. */
  if (!try_attach(&r)) {
    if (!said_noring)
      fprintf(stderr, "ocgc run: %s has no GC ring: it is not an OCaml program linked with "
              "-runtime-variant _ocgc (or run by ocamlrun_ocgc); no report\n", argv[optind]);
    goto out;
  }
  if ((err = rep_follow_drain(&r.f, NULL)) == 0 && (err = ocgc_agg_snapshot(r.f.agg, &snap)) == 0) {
    m.mode = REP_RUN;
    m.command = argv + optind;
    if ((err = rep_print(out, json, &m, &r.f, NULL, snap)) != 0)
      fprintf(stderr, "ocgc run: writing the report: %s\n", strerror(-err));
  } else {
    fprintf(stderr, "ocgc run: %s: %s\n", r.ring, ocgc_strerror(err));
  }

out:
  child_pid = 0;
  for (i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &old[i], NULL);
  ocgc_snapshot_free(snap);
  if (r.following) rep_follow_fini(&r.f);
  ocgc_source_close(r.src);
  remove_ring_dir(r.dir);
  free(r.dir);
  if (out != stderr && fclose(out) != 0)
    fprintf(stderr, "ocgc run: %s: %s\n", output, strerror(errno));
  return code;
}
