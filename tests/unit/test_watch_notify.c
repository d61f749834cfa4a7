/* test_watch_notify.c - how a watch is told of new rings
 * (libconsumer/watch_notify.c, and ocgc_watch_fd() over it): the names an
 * entry of a ring folder may have and the pid each names (temporary names,
 * another namespace's identity links, numbers out of range: none); one
 * pid per ring though it has two names; a flood of names read in bounded
 * slices, every one in the end; the watch's descriptor readable when a
 * name comes and quiet once a poll read it, a name of a pid not running
 * counted missed once. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "ocgc/consumer.h"
#include "testutil.h"
#include "watch_notify.h"

START_TEST(names)
{
  unsigned uid = 7;
  ck_assert_int_eq(notify_name_pid("1234.events", 0), 1234);
  ck_assert_int_eq(notify_name_pid("1.events", 99), 1);
  ck_assert_int_eq(notify_name_pid("2147483647.events", 0), 2147483647);
  ck_assert_int_eq(notify_name_pid("2147483648.events", 0), 0);
  ck_assert_int_eq(notify_name_pid("99999999999999999999.events", 0), 0);
  ck_assert_int_eq(notify_name_pid("0.events", 0), 0);
  ck_assert_int_eq(notify_name_pid("012.events", 0), 0);
  ck_assert_int_eq(notify_name_pid("-12.events", 0), 0);
  ck_assert_int_eq(notify_name_pid("12.events.old", 0), 0);
  ck_assert_int_eq(notify_name_pid("12.event", 0), 0);
  ck_assert_int_eq(notify_name_pid(".events", 0), 0);
  ck_assert_int_eq(notify_name_pid("1a.events", 0), 0);
  /* The identity link: of our namespace (or one not known) only. */
  ck_assert_int_eq(notify_name_pid(".ocgc-ring.4026531836.77", 4026531836u), 77);
  ck_assert_int_eq(notify_name_pid(".ocgc-ring.4026531836.77", 0), 77);
  ck_assert_int_eq(notify_name_pid(".ocgc-ring.4026531837.77", 4026531836u), 0);
  ck_assert_int_eq(notify_name_pid(".ocgc-ring.4026531836.77x", 4026531836u), 0);
  ck_assert_int_eq(notify_name_pid(".ocgc-ring..77", 0), 0);
  ck_assert_int_eq(notify_name_pid(".ocgc-ring.123456789012345678901.77", 0), 0);
  /* The temporary name is no ring yet. */
  ck_assert_int_eq(notify_name_pid(".ocgc-tmp.4026531836.77", 4026531836u), 0);
  ck_assert_int_eq(notify_name_pid("", 0), 0);
  ck_assert_int_eq(notify_name_uid("ocgc-1000", &uid), 1);
  ck_assert_uint_eq(uid, 1000);
  ck_assert_int_eq(notify_name_uid("ocgc-0", &uid), 1);
  ck_assert_uint_eq(uid, 0);
  ck_assert_int_eq(notify_name_uid("ocgc-01", &uid), 0);
  ck_assert_int_eq(notify_name_uid("ocgc-", &uid), 0);
  ck_assert_int_eq(notify_name_uid("ocgc", &uid), 0);
  ck_assert_int_eq(notify_name_uid("ocgc-1x", &uid), 0);
}
END_TEST

/* A new folder [tag] in the case's scratch folder (removed by the
 * runner). */
static const char *new_folder(const char *tag)
{
  static char path[4096];
  ck_assert_ptr_nonnull(tu_scratch);
  snprintf(path, sizeof path, "%s/%s.%d", tu_scratch, tag, (int)getpid());
  ck_assert_msg(mkdir(path, 0700) == 0, "mkdir %s: %s", path, strerror(errno));
  return path;
}

/* Make [name] in [dir]: a link to nowhere. */
static void put(const char *dir, const char *name)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ck_assert_msg(symlink("nowhere", path) == 0, "symlink %s: %s", path, strerror(errno));
}

START_TEST(folder)
{
  const char *dir = new_folder("folder");
  char tmp[4096], fin[4096], ns[64];
  struct notify *n;
  int pids[NOTIFY_MAX_PIDS], overflow = 0;
  size_t k;
  ssize_t len;
  unsigned long long pidns = 0;
  len = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  if (len > 0) {
    ns[len] = '\0';
    (void)sscanf(ns, "pid:[%llu]", &pidns);
  }
  ck_assert_int_eq(notify_open(dir, 0, &n), 0);
  ck_assert_uint_eq(notify_watches(n), 1);
  ck_assert_uint_eq(notify_read(n, pids, &overflow), 0);
  /* A ring's two names, a temporary one, a stranger's, a folder. */
  snprintf(tmp, sizeof tmp, ".ocgc-ring.%llu.4242", pidns);
  put(dir, tmp);
  put(dir, "4242.events");
  snprintf(tmp, sizeof tmp, ".ocgc-tmp.%llu.99", pidns);
  put(dir, tmp);
  put(dir, "notes.txt");
  snprintf(tmp, sizeof tmp, "%s/77.events", dir);
  ck_assert_int_eq(mkdir(tmp, 0700), 0);
  /* Renamed into place, as the producer does. */
  snprintf(tmp, sizeof tmp, "%s/.ocgc-tmp.%llu.555", dir, pidns);
  snprintf(fin, sizeof fin, "%s/555.events", dir);
  ck_assert_int_eq(symlink("nowhere", tmp), 0);
  ck_assert_int_eq(rename(tmp, fin), 0);
  k = notify_read(n, pids, &overflow);
  ck_assert_uint_eq(k, 2);
  ck_assert_int_eq(pids[0], 4242);
  ck_assert_int_eq(pids[1], 555);
  ck_assert_int_eq(overflow, 0);
  notify_free(n);
}
END_TEST

/* 1,000 names at once: read at most NOTIFY_MAX_PIDS at a time, every one
 * in the end. */
START_TEST(flood_in_slices)
{
  const char *dir = new_folder("flood");
  char name[64];
  struct notify *n;
  int pids[NOTIFY_MAX_PIDS], overflow = 0;
  size_t total = 0, k, calls = 0;
  unsigned i;
  ck_assert_int_eq(notify_open(dir, 0, &n), 0);
  for (i = 0; i < 1000; i++) {
    snprintf(name, sizeof name, "%u.events", 100000 + i);
    put(dir, name);
  }
  do {
    k = notify_read(n, pids, &overflow);
    ck_assert_uint_le(k, NOTIFY_MAX_PIDS);
    total += k;
    calls++;
  } while (k != 0 && calls < 100);
  ck_assert_uint_eq(total, 1000);
  ck_assert_uint_ge(calls, 1000 / NOTIFY_MAX_PIDS);
  notify_free(n);
}
END_TEST

/* Whether [fd] is readable within [ms]. */
static int readable(int fd, int ms)
{
  struct pollfd p = {.fd = fd, .events = POLLIN};
  return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

START_TEST(watch_fd)
{
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct ocgc_watch_stats st = OCGC_OPTS_INIT(struct ocgc_watch_stats);
  struct ocgc_watch *w;
  const char *dir = new_folder("watch");
  int fd;
  /* Without all too: the processes named are waited on (their pidfds),
   * and the descriptor is there from the start, quiet while nothing is. */
  ck_assert_int_eq(ocgc_watch_new(&o, &w), 0);
  ck_assert_int_ge(fd = ocgc_watch_fd(w), 0);
  {
    struct pollfd q = {fd, POLLIN, 0};
    ck_assert_int_eq(poll(&q, 1, 0), 0);
  }
  ocgc_watch_free(w);
  ck_assert_int_eq(ocgc_watch_fd(NULL), -1);
  o.all = 1;
  o.dir = dir;
  ck_assert_int_eq(ocgc_watch_new(&o, &w), 0);
  fd = ocgc_watch_fd(w);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  (void)ocgc_watch_poll(w, cm_mono_ns()); /* the first listing */
  ck_assert_int_eq(readable(fd, 0), 0);
  /* A pid that runs nowhere: named, tried, counted missed, once though
   * it has two names. */
  put(dir, "2000000000.events");
  ck_assert_int_eq(readable(fd, 5000), 1);
  (void)ocgc_watch_poll(w, cm_mono_ns());
  ck_assert_int_eq(readable(fd, 0), 0);
  put(dir, ".ocgc-ring.0.2000000000");
  ck_assert_int_eq(readable(fd, 5000), 1);
  (void)ocgc_watch_poll(w, cm_mono_ns());
  ck_assert_int_eq(readable(fd, 0), 0);
  ck_assert_int_eq(ocgc_watch_stats(w, &st), 0);
  ck_assert_uint_eq(st.missed, 1);
  ck_assert_uint_eq(st.notified, 0);
  ck_assert_uint_eq(st.processes, 0);
  ocgc_watch_free(w);
}
END_TEST

static Suite *watch_notify_suite(void)
{
  Suite *s = suite_create("watch_notify");
  TCase *tc = tcase_create("notify");
  tcase_add_unchecked_fixture(tc, tu_scratch_setup, tu_scratch_teardown);
  tcase_add_test(tc, names);
  tcase_add_test(tc, folder);
  tcase_add_test(tc, flood_in_slices);
  tcase_add_test(tc, watch_fd);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(watch_notify_suite);
