/* test_guard.c - the SIGBUS guard: a fault on a guarded mapping becomes
 * OCGC_E_TRUNCATED; any other SIGBUS behaves as if libocgc were not there. */

#include <check.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "ocgc/consumer.h"
#include "testutil.h"

#define SIZE (4 * 4096)

/* A mapping of a file that is then truncated to nothing: every load SIGBUSes. */
static char *truncated_mapping(void)
{
  char path[] = "/tmp/ocgc-guard-XXXXXX";
  int fd = mkstemp(path);
  char *map;
  ck_assert_int_ge(fd, 0);
  unlink(path);
  ck_assert_int_eq(ftruncate(fd, SIZE), 0);
  map = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
  ck_assert_ptr_ne(map, MAP_FAILED);
  ck_assert_int_eq(ftruncate(fd, 0), 0);
  close(fd);
  return map;
}

static int load(const char *p)
{
  return *(const volatile char *)p;
}

START_TEST(fault_in_guard_is_an_error)
{
  char *map = truncated_mapping();
  int r = 12345, i;
  ck_assert_int_eq(ocgc_guard_install(), 0);
  for (i = 0; i < 3; i++) { /* and again: the signal is not left blocked */
    OCGC_GUARDED(map, SIZE, r, load(map + 4096 * i));
    ck_assert_int_eq(r, OCGC_E_TRUNCATED);
    ck_assert_int_eq(ocgc_guard_tls.up, 0);
  }
  munmap(map, SIZE);
}
END_TEST

START_TEST(guard_passes_values_through)
{
  char buf[16] = "x";
  int r;
  ck_assert_int_eq(ocgc_guard_install(), 0);
  OCGC_GUARDED(buf, sizeof buf, r, load(buf));
  ck_assert_int_eq(r, 'x');
}
END_TEST

/* Outside a guard, or outside the guarded range, SIGBUS still kills. */
static int child_status(int guarded_elsewhere)
{
  pid_t pid = fork();
  int status = 0;
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char *map = truncated_mapping();
    char other[8];
    int r;
    ocgc_guard_install();
    if (guarded_elsewhere) {
      OCGC_GUARDED(other, sizeof other, r, load(map));
      (void)r;
    } else {
      load(map);
    }
    _exit(0);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return status;
}

/* Died of SIGBUS, or (under a sanitizer, whose handler came first and is
 * chained to) was made to exit with an error: either way, not survived. */
static void ck_assert_fatal(int st)
{
  if (WIFSIGNALED(st)) ck_assert_int_eq(WTERMSIG(st), SIGBUS);
  else ck_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0);
}

START_TEST(unguarded_fault_still_kills)
{
  ck_assert_fatal(child_status(0));
  ck_assert_fatal(child_status(1));
}
END_TEST

/* A handler the program installed before libocgc still gets its faults. */
static sigjmp_buf own_jump;
static volatile sig_atomic_t own_calls;
static void own_handler(int sig)
{
  (void)sig;
  own_calls++;
  siglongjmp(own_jump, 1);
}

START_TEST(earlier_handler_is_chained)
{
  pid_t pid = fork();
  int status = 0;
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char *map = truncated_mapping();
    struct sigaction sa;
    int r;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGBUS, &sa, NULL);
    if (ocgc_guard_install() != 0) _exit(2);
    if (sigsetjmp(own_jump, 1) == 0) load(map); /* not guarded: the program's */
    if (own_calls != 1) _exit(3);
    OCGC_GUARDED(map, SIZE, r, load(map));   /* guarded: ours */
    if (r != OCGC_E_TRUNCATED || own_calls != 1) _exit(4);
    _exit(0);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static Suite *guard_suite(void)
{
  Suite *s = suite_create("guard");
  TCase *tc = tcase_create("sigbus");
  tcase_add_test(tc, fault_in_guard_is_an_error);
  tcase_add_test(tc, guard_passes_values_through);
  tcase_add_test(tc, unguarded_fault_still_kills);
  tcase_add_test(tc, earlier_handler_is_chained);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(guard_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
