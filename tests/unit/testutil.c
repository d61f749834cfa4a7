/* testutil.c - the unit suites' main(), temporary folders and xz fixtures.
 *
 * Every suite program links this file and defines tu_suite (TU_SUITE), so
 * that the way suites are run (fork mode, verbosity, exit status) is
 * decided here once.  Fixtures are unpacked into a fresh mkdtemp() folder,
 * never into the source tree (which is read-only under `make distcheck`). */

#include "testutil.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void tu_buf_put(void *ctx, const char *s, size_t n)
{
  struct tu_buf *b = ctx;
  if (b->n + n >= sizeof b->s) n = sizeof b->s - 1 - b->n;
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

char *tu_mkdtemp(void)
{
  const char *tmp = getenv("TMPDIR");
  char buf[4096];
  char *dir;
  if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
  if ((size_t)snprintf(buf, sizeof buf, "%s/ocgc-unit-XXXXXX", tmp) >= sizeof buf) return NULL;
  dir = mkdtemp(buf);
  return dir ? strdup(dir) : NULL;
}

char *tu_scratch;

void tu_scratch_setup(void)
{
  tu_scratch = tu_mkdtemp();
}

void tu_scratch_teardown(void)
{
  tu_rmtree(tu_scratch);
  free(tu_scratch);
  tu_scratch = NULL;
}

void tu_rmtree(const char *dir)
{
  DIR *d;
  struct dirent *e;
  char p[4096];
  if (dir == NULL) return;
  d = opendir(dir);
  if (d != NULL) {
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      unlink(tu_path(p, sizeof p, dir, e->d_name));
    }
    closedir(d);
  }
  rmdir(dir);
}

int tu_unxz(const char *src, const char *dst)
{
  int fd, status;
  pid_t pid;
  fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  pid = fork();
  if (pid < 0) { close(fd); return -1; }
  if (pid == 0) {
    if (dup2(fd, STDOUT_FILENO) < 0) _exit(126);
    execlp("xz", "xz", "-dc", "--", src, (char *)NULL);
    _exit(127);
  }
  close(fd);
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

const char *tu_srcdir(void)
{
  const char *s = getenv("OCGC_SRCDIR");
  if (s != NULL && s[0] != '\0') return s;
#ifdef OCGC_TOP_SRCDIR
  return OCGC_TOP_SRCDIR;
#else
  return NULL;
#endif
}

char *tu_path(char *buf, size_t n, const char *a, const char *b)
{
  snprintf(buf, n, "%s/%s", a, b);
  return buf;
}

int main(int argc, char **argv)
{
  SRunner *sr;
  int failed;
  if (tu_suite.args != NULL) {
    int status = tu_suite.args(argc, argv);
    if (status >= 0) return status;
  }
  sr = srunner_create(tu_suite.make());
  /* Each test case one named TAP result on stdout, for make check's
   * tap-driver.sh (tests/tests.am); CK_TAP_LOG_FILE_NAME overrides. */
  if (getenv("CK_TAP_LOG_FILE_NAME") == NULL) srunner_set_tap(sr, "-");
  /* CK_ENV: CK_VERBOSITY, else CK_NORMAL as before; the fork mode is
   * libcheck's default, CK_FORK from the environment, else fork. */
  srunner_run_all(sr, CK_ENV);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
