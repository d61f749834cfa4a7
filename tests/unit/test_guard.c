/* test_guard.c - the SIGBUS guard: once the host installs libocgc's
 * handler (or forwards to ocgc_sigbus_handle()), a fault on a guarded
 * mapping becomes OCGC_E_TRUNCATED; any other SIGBUS behaves as if libocgc
 * were not there; and libocgc takes no signal on its own. */

#include <check.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "ocgc/consumer.h"
#include "ringgen.h"
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

/* The child [pid] (which _exits with a step number on failure) passed. */
static void ck_child_ok(pid_t pid)
{
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child failed (status %d)", status);
}

static int load(const char *p)
{
  return *(const volatile char *)p;
}

START_TEST(fault_in_guard_is_an_error)
{
  char *map = truncated_mapping();
  int r = 12345, i;
  ck_assert_int_eq(ocgc_sigbus_install(), 0);
  for (i = 0; i < 3; i++) { /* and again: the signal is not left blocked */
    OCGC_GUARDED(map, SIZE, r, load(map + 4096 * i));
    ck_assert_int_eq(r, OCGC_E_TRUNCATED);
    ck_assert_ptr_null(ocgc_guard_cur);
  }
  munmap(map, SIZE);
}
END_TEST

START_TEST(guard_passes_values_through)
{
  char buf[16] = "x";
  int r;
  ck_assert_int_eq(ocgc_sigbus_install(), 0);
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
    ocgc_sigbus_install();
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
    if (ocgc_sigbus_install() != 0) _exit(2);
    if (sigsetjmp(own_jump, 1) == 0) load(map); /* not guarded: the program's */
    if (own_calls != 1) _exit(3);
    OCGC_GUARDED(map, SIZE, r, load(map));   /* guarded: ours */
    if (r != OCGC_E_TRUNCATED || own_calls != 1) _exit(4);
    _exit(0);
  }
  ck_child_ok(pid);
}
END_TEST

/* Opening and reading a ring installs nothing: SIGBUS stays the host's. */
START_TEST(library_takes_no_signal)
{
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char path[] = "/tmp/ocgc-guard-src-XXXXXX";
    struct sigaction before, now;
    struct ocgc_source *src = NULL;
    struct rg_file f;
    int fd = mkstemp(path);
    if (fd < 0) _exit(2);
    close(fd);
    unlink(path);
    if (rg_create(&f, path, 1, 1, 1024) != 0) _exit(3);
    /* (A sanitizer may have a handler of its own: compare, do not assume.) */
    if (sigaction(SIGBUS, NULL, &before) != 0) _exit(5);
    if (ocgc_source_open_path(path, NULL, &src) != 0) _exit(4);
    unlink(path);
    if (sigaction(SIGBUS, NULL, &now) != 0) _exit(5);
    if (now.sa_flags != before.sa_flags || now.sa_handler != before.sa_handler) _exit(6);
    ocgc_source_close(src);
    rg_close(&f);
    _exit(0);
  }
  ck_child_ok(pid);
}
END_TEST

/* A program that ignores SIGBUS, then a real fault outside any guard: the
 * process dies of it, as without libocgc, instead of faulting for ever. */
START_TEST(ignored_sigbus_fault_still_kills)
{
  pid_t pid = fork();
  int status = 0;
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char *map = truncated_mapping();
    signal(SIGBUS, SIG_IGN);
    if (ocgc_sigbus_install() != 0) _exit(2);
    alarm(5); /* an endless fault loop ends here, as a failure */
    load(map);
    _exit(0);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(!(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM),
                "a fault under an ignored SIGBUS looped");
  ck_assert_fatal(status);
}
END_TEST

/* A host with its own handler forwards: the guarded read fails cleanly,
 * and the host still gets its own faults. */
static volatile sig_atomic_t host_calls;
static sigjmp_buf host_jump;
static void host_handler(int sig, siginfo_t *info, void *uctx)
{
  (void)sig;
  (void)uctx;
  ocgc_sigbus_handle(info->si_addr); /* returns only if not libocgc's */
  host_calls++;
  siglongjmp(host_jump, 1);
}

START_TEST(host_handler_forwards)
{
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char *map = truncated_mapping();
    struct sigaction sa;
    int r = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = host_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
    OCGC_GUARDED(map, SIZE, r, load(map)); /* libocgc's */
    if (r != OCGC_E_TRUNCATED || host_calls != 0) _exit(3);
    if (sigsetjmp(host_jump, 1) == 0) load(map); /* the host's */
    if (host_calls != 1) _exit(4);
    _exit(0);
  }
  ck_child_ok(pid);
}
END_TEST

/* A SIGBUS sent, not raised by a fault, ends no read: even one whose
 * payload is forged to look like a fault address inside the mapping. */
static int forged_sigbus(const char *addr)
{
  siginfo_t si;
  memset(&si, 0, sizeof si);
  si.si_signo = SIGBUS;
  si.si_code = SI_QUEUE;
  si.si_addr = (void *)addr;
  return (int)syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), SIGBUS, &si);
}

START_TEST(sent_sigbus_is_not_a_fault)
{
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    static char buf[64];
    struct sigaction sa;
    volatile int r = 12345;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGBUS, &sa, NULL);
    if (ocgc_sigbus_install() != 0) _exit(2);
    if (sigsetjmp(own_jump, 1) == 0) {
      OCGC_GUARDED(buf, sizeof buf, r, forged_sigbus(buf + 8));
      _exit(3); /* the program's handler was not called */
    }
    if (own_calls != 1 || r != 12345) _exit(4);
    _exit(0);
  }
  ck_child_ok(pid);
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
  tcase_add_test(tc, library_takes_no_signal);
  tcase_add_test(tc, ignored_sigbus_fault_still_kills);
  tcase_add_test(tc, host_handler_forwards);
  tcase_add_test(tc, sent_sigbus_is_not_a_fault);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(guard_suite);
