/* hostile_timer.c - run a command, send it SIGINT after a while, and say
 * how long it took to exit and how much memory it used at its peak (for
 * tests/hostile/hostile_live.sh).
 *
 *   hostile_timer [-a AFTER_MS] [-l LIMIT_MS] [-o OUT] [-e ERR] [-p] -- CMD [ARG...]
 *
 * CMD runs with stdout in OUT and stderr in ERR (default /dev/null).  With
 * -p it runs in a new session on a pseudo-terminal of 120x40 (TERM=xterm)
 * as its controlling terminal and stdin/stdout, and what it writes to the
 * terminal goes to OUT; without a pseudo-terminal to be had, hostile_timer
 * prints "nopty REASON" and exits 77.  After AFTER_MS (default 1000) it
 * sends SIGINT to CMD alone; if CMD has not exited LIMIT_MS (default 5000)
 * later it is killed with SIGKILL and counted as hung.  The result is
 * printed on stdout as "key value" lines:
 *
 *   early 0|1         1 if CMD exited before the SIGINT
 *   ran_ms N          from the start to the SIGINT (or to the early exit)
 *   exit_us N         from the SIGINT to CMD's exit (0 if early)
 *   exit_ms N.N       the same in milliseconds
 *   status exit N | signal N | hang
 *   hwm_kb N          peak resident memory (VmHWM sampled while it ran,
 *                     and the kernel's ru_maxrss at exit: the larger)
 *
 * CMD starts with SIGINT ignored, as a script's background job (`agent &`)
 * starts it: whether a consumer stops on SIGINT must not depend on how the
 * test suite happens to be started (from a terminal, or from a script in
 * the background), so it is always tried the hard way, and a consumer that
 * leaves SIGINT to its default action is found out at once.
 *
 * Exit status 0 when it could run CMD, 77 (see -p), 2 bad usage, 1 other.
 *
 * Invariants: the exit time is measured from just after kill() to the
 * moment SIGCHLD is seen (self-pipe, so no polling granularity); every wait
 * has a deadline, and an alarm ends the timer (and kills CMD) if something
 * unforeseen blocks it, so it can never be the reason a test hangs. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int sig_pipe[2] = {-1, -1};
static volatile pid_t child = -1;

static void on_chld(int sig)
{
  int e = errno;
  (void)sig;
  if (write(sig_pipe[1], "c", 1) < 0) { /* full: a wake-up is pending anyway */ }
  errno = e;
}

static void on_alarm(int sig)
{
  (void)sig;
  if (child > 0) kill(child, SIGKILL);
  _exit(1);
}

static uint64_t now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* VmHWM of [pid] in kB, or 0 when it cannot be read (gone, a zombie). */
static unsigned long vm_hwm(pid_t pid)
{
  char path[64], buf[4096], *p;
  ssize_t n;
  int fd;
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  p = strstr(buf, "\nVmHWM:");
  return p != NULL ? strtoul(p + 7, NULL, 10) : 0;
}

/* A pseudo-terminal: the master (returned) and the slave's name. */
static int open_pty(char *name, size_t n, const char **why)
{
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) { *why = "posix_openpt"; return -1; }
  if (grantpt(m) != 0 || unlockpt(m) != 0 || ptsname_r(m, name, n) != 0) {
    *why = "grantpt/unlockpt/ptsname";
    close(m);
    return -1;
  }
  return m;
}

static void usage(void)
{
  fprintf(stderr, "usage: hostile_timer [-a AFTER_MS] [-l LIMIT_MS] [-o OUT] [-e ERR] [-p] "
          "-- CMD [ARG...]\n");
  exit(2);
}

/* Copy what the terminal's master has to [out] (never blocks).  Returns
 * 0, or -1 once the terminal is closed on the other side (EIO), after
 * which polling it would only spin. */
static int drain_master(int master, int out)
{
  char buf[8192];
  ssize_t n;
  while ((n = read(master, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) < 0) break;
  return n < 0 && errno != EAGAIN && errno != EINTR ? -1 : 0;
}

int main(int argc, char **argv)
{
  const char *out_path = "/dev/null", *err_path = "/dev/null", *why = NULL;
  unsigned long after_ms = 1000, limit_ms = 5000, hwm = 0;
  char pty_name[256];
  int opt, use_pty = 0, master = -1, master_open = 1, out_fd, err_fd, status = 0;
  int early = 0, hung = 0;
  uint64_t t_start, t_int = 0, t_exit = 0, next_sample;
  struct sigaction sa;
  struct rusage ru;
  pid_t pid;

  while ((opt = getopt(argc, argv, "+a:l:o:e:p")) != -1) {
    switch (opt) {
    case 'a': after_ms = strtoul(optarg, NULL, 10); break;
    case 'l': limit_ms = strtoul(optarg, NULL, 10); break;
    case 'o': out_path = optarg; break;
    case 'e': err_path = optarg; break;
    case 'p': use_pty = 1; break;
    default: usage();
    }
  }
  if (optind >= argc || after_ms > 600000 || limit_ms == 0 || limit_ms > 600000) usage();
  argv += optind;

  out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) {
    perror("hostile_timer: output file");
    return 1;
  }
  if (use_pty && (master = open_pty(pty_name, sizeof pty_name, &why)) < 0) {
    printf("nopty %s: %s\n", why, strerror(errno));
    return 77;
  }
  if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    perror("hostile_timer: pipe");
    return 1;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_chld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  sa.sa_handler = on_alarm;
  sa.sa_flags = 0;
  sigaction(SIGALRM, &sa, NULL);
  alarm((unsigned)((after_ms + limit_ms) / 1000 + 30));

  t_start = now_us();
  pid = fork();
  if (pid < 0) {
    perror("hostile_timer: fork");
    return 1;
  }
  if (pid == 0) {
    sigset_t none;
    sa.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = SIG_IGN; /* inherited through exec (see the top) */
    sigaction(SIGINT, &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    alarm(0);
    if (use_pty) {
      struct winsize ws = {.ws_row = 40, .ws_col = 120};
      int slave;
      if (setsid() < 0) _exit(126);
      slave = open(pty_name, O_RDWR); /* the first terminal opened: controlling */
      if (slave < 0) _exit(126);
      ioctl(slave, TIOCSCTTY, 0);
      ioctl(slave, TIOCSWINSZ, &ws);
      dup2(slave, 0);
      dup2(slave, 1);
      if (slave > 2) close(slave);
      setenv("TERM", "xterm", 1);
    } else {
      int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, 0);
      dup2(out_fd, 1);
    }
    dup2(err_fd, 2);
    execvp(argv[0], argv);
    fprintf(stderr, "hostile_timer: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  child = pid;
  if (master >= 0) fcntl(master, F_SETFL, O_NONBLOCK);

  /* Wait for AFTER_MS, then SIGINT, then at most LIMIT_MS for the exit;
   * SIGCHLD (through the pipe) ends either wait at once. */
  next_sample = t_start;
  for (;;) {
    struct pollfd pf[2];
    uint64_t now = now_us(), deadline;
    int n, got;
    if (t_int == 0 && now >= t_start + after_ms * 1000u) {
      unsigned long h = vm_hwm(pid);
      if (h > hwm) hwm = h;
      kill(pid, SIGINT);
      t_int = now_us();
      now = t_int;
    }
    if (t_int != 0 && now >= t_int + limit_ms * 1000u) {
      hung = 1;
      kill(pid, SIGKILL);
      break;
    }
    if (now >= next_sample) {
      unsigned long h = vm_hwm(pid);
      if (h > hwm) hwm = h;
      next_sample = now + 20000;
    }
    deadline = t_int == 0 ? t_start + after_ms * 1000u : t_int + limit_ms * 1000u;
    if (deadline > next_sample) deadline = next_sample;
    pf[0].fd = sig_pipe[0];
    pf[0].events = POLLIN;
    pf[1].fd = master;
    pf[1].events = POLLIN;
    n = master >= 0 && master_open ? 2 : 1;
    got = poll(pf, (nfds_t)n, deadline > now ? (int)((deadline - now + 999) / 1000) : 0);
    if (got > 0 && n == 2 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
        drain_master(master, out_fd) != 0)
      master_open = 0;
    if (got > 0 && (pf[0].revents & POLLIN)) {
      char c[64];
      while (read(sig_pipe[0], c, sizeof c) > 0) {}
      if (waitpid(pid, &status, WNOHANG) == pid) {
        t_exit = now_us();
        break;
      }
    }
  }
  if (hung) {
    waitpid(pid, &status, 0);
    t_exit = now_us();
  }
  if (t_int == 0) early = 1;
  /* The exited child's own peak, as the kernel kept it. */
  if (getrusage(RUSAGE_CHILDREN, &ru) == 0 && (unsigned long)ru.ru_maxrss > hwm)
    hwm = (unsigned long)ru.ru_maxrss;
  if (master >= 0) (void)drain_master(master, out_fd);
  alarm(0);

  printf("early %d\n", early);
  printf("ran_ms %llu\n", (unsigned long long)(((early ? t_exit : t_int) - t_start) / 1000u));
  printf("exit_us %llu\n", (unsigned long long)(early ? 0 : t_exit - t_int));
  printf("exit_ms %.1f\n", early ? 0.0 : (double)(t_exit - t_int) / 1000.0);
  if (hung) printf("status hang\n");
  else if (WIFSIGNALED(status)) printf("status signal %d\n", WTERMSIG(status));
  else printf("status exit %d\n", WEXITSTATUS(status));
  printf("hwm_kb %lu\n", hwm);
  return 0;
}
