/* test_no_ctty.c - a target cannot give the reader its terminal.
 *
 * A monitoring agent is often a daemon: a session leader with no
 * controlling terminal.  Such a process acquires as its controlling
 * terminal the first terminal it opens without O_NOCTTY; after that, the
 * terminal's ^C kills it.  A target can name its pty where a ring is
 * expected (a path, or a --dir entry that is a link to /dev/pts/N), so every
 * open in libocgc must leave the agent without a terminal.
 *
 * Each check runs in a child that made itself a session leader.  The test
 * first proves on this machine that an open without O_NOCTTY does take the
 * terminal (otherwise nothing could be shown: exit 77, skipped, e.g. with
 * no /dev/pts).  Exit status 0 pass, 1 fail, 77 skip. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ocgc/consumer.h"

enum how { PLAIN_OPEN, OPEN_PATH, OPEN_PID_DIR };

/* In a new session: open the pty's slave as [how] says, then tell whether
 * we now have a controlling terminal: exit 10 yes, 11 no, 2 setup failed. */
static void probe(enum how how, const char *slave, const char *dir)
{
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;
  char link[PATH_MAX];
  int fd, err = 0;
  if (setsid() < 0) _exit(2);
  switch (how) {
  case PLAIN_OPEN:
    if (open(slave, O_RDWR) < 0) _exit(2);
    break;
  case OPEN_PATH:
    err = ocgc_source_open_path(slave, NULL, &s);
    break;
  case OPEN_PID_DIR:
    snprintf(link, sizeof link, "%s/%d.events", dir, (int)getpid());
    if (symlink(slave, link) != 0) _exit(2);
    o.dir = dir;
    o.wait_ms = 10;
    err = ocgc_source_open_pid(getpid(), &o, &s);
    unlink(link);
    break;
  }
  if (how != PLAIN_OPEN && (err == 0 || s != NULL)) {
    fprintf(stderr, "a terminal was opened as a ring\n");
    _exit(3);
  }
  fd = open("/dev/tty", O_RDONLY | O_NOCTTY);
  _exit(fd >= 0 ? 10 : errno == ENXIO ? 11 : 2);
}

static int run(enum how how, const char *slave, const char *dir)
{
  int st = 0;
  pid_t p = fork();
  if (p < 0) return -1;
  if (p == 0) probe(how, slave, dir);
  if (waitpid(p, &st, 0) != p || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

int main(void)
{
  static const char *const names[] = {"a plain open", "ocgc_source_open_path",
                                      "ocgc_source_open_pid with --dir"};
  char dir[] = "/tmp/ocgc-ctty-XXXXXX";
  const char *slave;
  int master, r, failed = 0;
  unsigned k;

  master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 ||
      (slave = ptsname(master)) == NULL) {
    printf("1..0 # SKIP no pseudo-terminal can be made here (%s)\n", strerror(errno));
    return 77;
  }
  if (mkdtemp(dir) == NULL) { perror("mkdtemp"); return 1; }
  r = run(PLAIN_OPEN, slave, dir);
  if (r != 10) {
    printf("1..0 # SKIP a session leader opening %s does not get it as its terminal "
           "here (probe status %d), so nothing can be shown\n", slave, r);
    rmdir(dir);
    return 77;
  }
  /* TAP (make check's tap-driver.sh): a result per open, the plan last */
  printf("ok 1 - %s of %s takes it as the controlling terminal\n", names[0], slave);
  for (k = OPEN_PATH; k <= OPEN_PID_DIR; k++) {
    r = run((enum how)k, slave, dir);
    if (r == 11) {
      printf("ok %u - %s of %s: no terminal taken\n", k + 1, names[k], slave);
    } else {
      printf("not ok %u - %s of %s: probe status %d (10: took the terminal)\n", k + 1, names[k],
             slave, r);
      failed = 1;
    }
  }
  printf("1..%u\n", (unsigned)OPEN_PID_DIR + 1);
  rmdir(dir);
  close(master);
  return failed;
}
