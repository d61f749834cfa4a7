/* test_attach.c - attaching by pid (attach.c): ocgc_find_ring(),
 * ocgc_source_open_pid() and ocgc_source_check_alive() against real
 * processes, stock OCaml 5 rings and reused pids included; listing them
 * (list.c: ocgc_list(), and ocgc_list_opts()'s skip filter) and the
 * default ring folders (dirs.c).
 *
 * Each test forks "producer" children (children.c) that do what the
 * patched runtime does, or plant wrong identity fields, an exited state, a
 * stock file, a read-only (reader's) mapping, an unlinked file, other
 * names, or no ring at all.  The watch's cases are test_watch.c's. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "children.h"
#include "common/clock.h"
#include "ocgc/consumer.h"
#include "procfs.h"
#include "source.h"
#include "testutil.h"

/* ---- fixture: a scratch folder per test case --------------------------------------- */

static char *tmp;

static void setup(void)
{
  tmp = tu_mkdtemp();
}

/* Subfolders some tests make (removed here too, should a test fail). */
static const char *const subdirs[] = {"a b\nc", "elsewhere"};

static void teardown(void)
{
  char sub[4096];
  unsigned i;
  for (i = 0; tmp != NULL && i < sizeof subdirs / sizeof subdirs[0]; i++)
    tu_rmtree(tu_path(sub, sizeof sub, tmp, subdirs[i]));
  tu_rmtree(tmp);
  free(tmp);
  tmp = NULL;
}

/* Field 3 of /proc/PID/stat, or 0. */
static char proc_state(pid_t pid)
{
  char path[64], buf[1024];
  ssize_t got;
  char *p;
  int fd;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  got = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
  p = strrchr(buf, ')');
  return p != NULL && p[1] == ' ' ? p[2] : 0;
}

static uint64_t ms_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

static struct ocgc_attach_opts opts_wait(unsigned wait_ms)
{
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  o.wait_ms = wait_ms;
  return o;
}

/* ---- finding ------------------------------------------------------------------------- */

/* The ring of a live producer is found in its maps and opened; it is that
 * very file, it names the child, and its events can be read. */
START_TEST(find_and_open)
{
  struct child c = start(tmp, P_OK);
  char path[4096];
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_cursor *cur = NULL;
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t w;

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 1);
  ck_assert_uint_eq(info.pid, (uint64_t)c.pid);
  ck_assert_uint_eq(info.state, OCGC_STATE_RUNNING);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  co.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &cur), 0);
  ck_assert_int_eq(ocgc_cursor_poll(cur, 0), N_EVENTS);
  ocgc_cursor_stats(cur, &st);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), 0);
  ck_assert_uint_eq(st.seen, w);
  ocgc_cursor_free(cur);
  ocgc_source_close(s);
  /* a second open of the same ring, while the first is closed: as good */
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ocgc_source_close(s);
  stop(&c);
}
END_TEST

/* Pids that name nothing; bad arguments. */
START_TEST(find_errors)
{
  char path[4096], small[8];
  struct ocgc_source *s = NULL;
  pid_t gone = dead_pid();
  struct child c;
  long pid_max = 0;
  FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

  ck_assert_int_eq(ocgc_find_ring(gone, path, sizeof path), -ESRCH);
  ck_assert_int_eq(ocgc_source_open_pid(gone, NULL, &s), -ESRCH);
  if (f != NULL) {
    if (fscanf(f, "%ld", &pid_max) != 1) pid_max = 0;
    fclose(f);
  }
  if (pid_max > 0 && pid_max <= INT_MAX) /* pids are below pid_max */
    ck_assert_int_eq(ocgc_find_ring((int)pid_max, path, sizeof path), -ESRCH);
  ck_assert_int_eq(ocgc_find_ring(0, path, sizeof path), -ESRCH);
  ck_assert_int_eq(ocgc_find_ring(-1, path, sizeof path), -ESRCH);
  ck_assert_int_eq(ocgc_source_open_pid(0, NULL, &s), -ESRCH);
  ck_assert_int_eq(ocgc_source_open_pid(-5, NULL, &s), -ESRCH);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(ocgc_find_ring(getpid(), NULL, 10), -EINVAL);
  ck_assert_int_eq(ocgc_find_ring(getpid(), path, 0), -EINVAL);
  ck_assert_int_eq(ocgc_source_open_pid(getpid(), NULL, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_source_check_alive(NULL), -EINVAL);
  /* a path that does not fit */
  c = start(tmp, P_OK);
  ck_assert_int_eq(ocgc_find_ring(c.pid, small, sizeof small), -ENAMETOOLONG);
  stop(&c);
}
END_TEST

/* Live processes without a ring: this test, a sleeping child, a reader
 * (read-only mapping), a child whose ring file was unlinked.  open_pid
 * waits wait_ms for one, then gives up. */
START_TEST(no_ring)
{
  static const enum pmode modes[] = {P_NONE, P_READONLY};
  struct ocgc_attach_opts o = opts_wait(30);
  struct ocgc_source *s = NULL;
  char path[4096];
  uint64_t t0;
  unsigned i;

  ck_assert_int_eq(ocgc_find_ring(getpid(), path, sizeof path), OCGC_E_NORING);
  t0 = ms_now();
  ck_assert_int_eq(ocgc_source_open_pid(getpid(), &o, &s), OCGC_E_NORING);
  ck_assert_uint_ge(ms_now() - t0, 30);
  ck_assert_uint_lt(ms_now() - t0, 5000);
  for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    struct child c = start(tmp, modes[i]);
    ck_assert_msg(ocgc_find_ring(c.pid, path, sizeof path) == OCGC_E_NORING,
                  "mode %u: find_ring found %s", i, path);
    ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_NORING);
    stop(&c);
  }
  ck_assert_ptr_null(s);
}
END_TEST

/* A ring whose file was unlinked and closed is reached only through
 * /proc/PID/map_files, which needs privileges: found (a /proc path that
 * opens that very mapping) or OCGC_E_NORING, never anything else. */
START_TEST(deleted_ring)
{
  struct child c = start(tmp, P_DELETED);
  char path[4096], prefix[64];
  struct ocgc_source *s = NULL;
  int err = ocgc_find_ring(c.pid, path, sizeof path);

  ck_assert_msg(err == 0 || err == OCGC_E_NORING, "find_ring: %d", err);
  if (err == 0) {
    snprintf(prefix, sizeof prefix, "/proc/%d/map_files/", (int)c.pid);
    ck_assert_msg(strncmp(path, prefix, strlen(prefix)) == 0, "found %s", path);
    ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
    ocgc_source_close(s);
  }
  stop(&c);
}
END_TEST

/* ocgc's producer: a memfd ring, published as a link to /proc/PID/fd/N.
 * Found through the process (map_files or the fd table), by pid and by
 * folder, and it is the process's own. */
START_TEST(memfd_ring)
{
  struct child c = start(tmp, P_MEMFD);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  char path[4096], prefix[64];
  struct ocgc_source *s = NULL;

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  snprintf(prefix, sizeof prefix, "/proc/%d/", (int)c.pid);
  ck_assert_msg(strncmp(path, prefix, strlen(prefix)) == 0, "found %s", path);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ocgc_source_close(s);
  o.dir = tmp;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ocgc_source_close(s);
  stop(&c);
  unlink(c.path);
}
END_TEST

/* The maps show a literal backslash as is, so "a\012b.events" reads like
 * the maps' escape of "a\nb.events", which the process made a link to
 * /dev/null: the ring found must be the mapped inode itself. */
START_TEST(escaped_name)
{
  struct child c = start(tmp, P_ESCAPED);
  char path[4096], decoy[4096];
  struct ocgc_source *s = NULL;

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ocgc_source_close(s);
  stop(&c);
  unlink(c.path);
  tu_path(decoy, sizeof decoy, tmp, "a\nb.events");
  unlink(decoy);
}
END_TEST

/* Any folder and any name ending in .events; <pid>.events is preferred. */
START_TEST(names)
{
  struct child c = start(tmp, P_OTHER);
  char path[4096], sub[4096];
  struct ocgc_source *s = NULL;

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ocgc_source_close(s);
  stop(&c);

  c = start(tmp, P_TWO);
  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  stop(&c);

  /* A folder with a space and a newline in its name: the kernel writes the
   * newline as \012 in the maps. */
  tu_path(sub, sizeof sub, tmp, subdirs[0]);
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  c = start(sub, P_OK);
  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_str_eq(strrchr(path, '/') + 1, strrchr(c.path, '/') + 1);
  ck_assert_msg(same_file(path, c.path), "found '%s', not '%s'", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ocgc_source_close(s);
  stop(&c);
  unlink(c.path);
  rmdir(sub);
}
END_TEST

/* A command name with spaces and parentheses does not confuse the start
 * time read from /proc/PID/stat. */
START_TEST(odd_comm)
{
  struct child c = start(tmp, P_ODD_COMM);
  struct ocgc_source *s = NULL;
  char path[64], buf[256];
  FILE *f;

  snprintf(path, sizeof path, "/proc/%d/comm", (int)c.pid);
  f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
  fclose(f);
  ck_assert_str_eq(buf, "a) b (c) \n");
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ocgc_source_close(s);
  stop(&c);
}
END_TEST

/* ---- identity -------------------------------------------------------------------------- */

/* A ring that does not name its process (wrong pid, start time or boot),
 * or says it exited, is stale; allow_stale opens it anyway, and then
 * check_alive says it is stale. */
START_TEST(stale_identity)
{
  static const enum pmode modes[] = {P_BAD_PID, P_BAD_START, P_BAD_BOOT, P_EXITED};
  enum pmode mode = modes[_i];
  struct child c = start(tmp, mode);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;
  char path[4096];

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), OCGC_E_STALE);
  ck_assert_ptr_null(s);
  o.allow_stale = 1;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ocgc_source_close(s);
  /* the same through the folder */
  o.dir = tmp;
  o.allow_stale = 0;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  stop(&c);
}
END_TEST

/* opts->sz: fields past the caller's size are not read. */
START_TEST(opts_sz)
{
  struct child c = start(tmp, P_EXITED);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;

  o.allow_stale = 1;
  o.sz = offsetof(struct ocgc_attach_opts, allow_stale); /* an older caller */
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  o.sz = sizeof o;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ocgc_source_close(s);
  /* dir beyond sz is ignored too: the maps are searched */
  o.dir = "/nonexistent";
  o.sz = offsetof(struct ocgc_attach_opts, dir);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  o.sz = 0; /* not even sz itself: refused (libconsumer/opts.h) */
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), -EINVAL);
  stop(&c);
}
END_TEST

/* The producer of [s] is killed: stale as a zombie, and once reaped. */
static void check_dies(struct child *c, const struct ocgc_source *s)
{
  uint64_t t0;
  ck_assert_int_eq(kill(c->pid, SIGKILL), 0);
  for (t0 = ms_now(); proc_state(c->pid) != 'Z' && ms_now() - t0 < 5000;) ms_sleep(2);
  ck_assert_int_eq(proc_state(c->pid), 'Z');
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ck_assert_int_eq(waitpid(c->pid, NULL, 0), c->pid);
  c->pid = -1;
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
}

/* Stock OCaml 5 files carry no identity: a source opened by pid remembers
 * its process and file, and is alive while that process maps that file;
 * opened by path there is nothing to check. */
START_TEST(stock_file)
{
  struct child c = start(tmp, P_STOCK);
  struct ocgc_source *s = NULL, *byname = NULL;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);

  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ck_assert_int_eq(ocgc_source_open_path(c.path, NULL, &byname), 0);
  ck_assert_int_eq(ocgc_source_check_alive(byname), -ENODATA);
  ocgc_source_close(byname);
  /* a zombie maps nothing; then the pid names nobody */
  check_dies(&c, s);
  ocgc_source_close(s);
  stop(&c);
}
END_TEST

/* A stock file named after a live process that does not map it (nothing,
 * or another file under that name): stale, found by device and inode, not
 * by name. */
START_TEST(stock_not_mapped)
{
  struct ocgc_attach_opts o = opts_wait(20);
  struct child c = start(tmp, P_NONE), d;
  struct ocgc_source *s = NULL;
  char path[4096], other[4096];
  struct rg_file f;

  snprintf(path, sizeof path, "%s/%d.events", tmp, (int)c.pid);
  ck_assert_int_eq(rg_create(&f, path, 0, 1, 1024), 0);
  rg_close(&f);
  o.dir = tmp;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  ck_assert_ptr_null(s);
  o.allow_stale = 1;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ocgc_source_close(s);
  stop(&c);
  unlink(path);

  /* a producer whose file was replaced under its name */
  d = start(tmp, P_STOCK);
  tu_path(other, sizeof other, tmp, "other.events");
  ck_assert_int_eq(rg_create(&f, other, 0, 1, 1024), 0);
  rg_close(&f);
  ck_assert_int_eq(rename(other, d.path), 0);
  o.allow_stale = 0;
  ck_assert_int_eq(ocgc_source_open_pid(d.pid, &o, &s), OCGC_E_STALE);
  /* through its maps, the file it does map */
  ck_assert_int_eq(ocgc_source_open_pid(d.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ocgc_source_close(s);
  stop(&d);
}
END_TEST

/* In the parent, before a fork: make the kernel give the next child [want]
 * (/proc/sys/kernel/ns_last_pid, which needs privileges).  0 or -1. */
static int next_pid_is(pid_t want)
{
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%d", (int)want - 1), ok;
  int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ok = write(fd, buf, (size_t)n) == n;
  close(fd);
  return ok ? 0 : -1;
}

/* Fork a child that maps the existing file [path] shared and writable, as
 * a stock producer maps its ring, and waits.  With [want] > 0 the child
 * must get that very pid: returns 0 if it could not be had (no privilege,
 * or other processes took it first), else 1. */
static int spawn_mapper(struct child *c, const char *path, pid_t want)
{
  struct stat st;
  unsigned tries;
  ck_assert_int_eq(stat(path, &st), 0);
  for (tries = 0; tries < 50; tries++) {
    int fds[2];
    if (want > 0 && next_pid_is(want) != 0) return 0;
    ck_assert_int_eq(pipe(fds), 0);
    c->pid = fork();
    ck_assert_int_ge(c->pid, 0);
    if (c->pid == 0) {
      int fd = open(path, O_RDWR | O_CLOEXEC);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      alarm(120);
      if (fd < 0 || mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
                        MAP_FAILED || write(fds[1], "R", 1) != 1)
        _exit(1);
      for (;;) pause();
    }
    close(fds[1]);
    c->ready = fds[0];
    if (want <= 0 || c->pid == want) {
      wait_ready(c);
      return 1;
    }
    stop(c);
  }
  return 0;
}

/* The pid of a stock producer passes to another process: stale, even when
 * that process maps the very same file (only the start time tells). */
START_TEST(stock_pid_reused)
{
  struct child a = start(tmp, P_STOCK), b;
  struct ocgc_source *s = NULL;
  uint64_t start;
  pid_t pid = a.pid;

  ck_assert_int_eq(ocgc_source_open_pid(a.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  /* as if the pid had passed to a process started later */
  start = s->pid_start;
  ocgc_source_set_owner(s, a.pid, 1, start + 1);
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ocgc_source_set_owner(s, a.pid, 1, start);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);

  /* really: the producer dies, a later process gets its pid and maps its
   * file (start times tick at 100 Hz: 30 ms make them differ) */
  stop(&a);
  ms_sleep(30);
  if (!spawn_mapper(&b, a.path, pid)) {
    fprintf(stderr, "test_attach: stock_pid_reused: pid %d could not be had again: "
                    "reuse simulated only\n", (int)pid);
  } else {
    ck_assert_int_eq(ocgc_proc_maps_file(b.pid, s->dev, s->ino), 1);
    ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
    stop(&b);
  }
  ocgc_source_close(s);
}
END_TEST

/* check_alive follows the producer: alive, then a zombie, then reaped;
 * and a state word flipped to exited under a live process. */
START_TEST(check_alive)
{
  struct child c = start(tmp, P_OK);
  struct ocgc_source *s = NULL;
  int fd;
  char *map;

  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  check_dies(&c, s);
  ocgc_source_close(s);
  stop(&c);

  c = start(tmp, P_OK);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  fd = open(c.path, O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert_ptr_ne(map, MAP_FAILED);
  close(fd);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  __atomic_store_n(&((struct ocgc_wire_ext *)(map + OCGC_WIRE_HEADER_SIZE))->state,
                   (uint64_t)OCGC_STATE_EXITED, __ATOMIC_RELEASE);
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  munmap(map, 4096);
  ocgc_source_close(s);
  stop(&c);
}
END_TEST

/* ---- the folder option --------------------------------------------------------------- */

/* In a folder, the target's entry is a link to a file of its choosing: it
 * is never followed, so no forged ring (nor a device) is read in place of
 * what the process maps; only the process's own memory map is searched. */
START_TEST(dir_links_not_followed)
{
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;
  struct child c = start(tmp, _i ? P_LINK_ZERO : P_FORGED_LINK);
  o.dir = tmp;
  o.wait_ms = 20;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_NORING);
  ck_assert_ptr_null(s);
  stop(&c);
}
END_TEST

/* A regular file in a folder that copies a live process's identity (which
 * anyone who can read its ring can do) is not that process's ring: the
 * process does not map it (G12). */
START_TEST(dir_copy_refused)
{
  struct child c = start(tmp, P_OK);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;
  char other[4096], copy[4200], cmd[9000];

  tu_path(other, sizeof other, tmp, subdirs[1]);
  ck_assert_int_eq(mkdir(other, 0700), 0);
  snprintf(copy, sizeof copy, "%s/%d.events", other, (int)c.pid);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", c.path, copy);
  ck_assert_int_eq(system(cmd), 0);
  o.dir = tmp; /* the file it maps */
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ocgc_source_close(s);
  s = NULL;
  o.dir = other; /* the copy */
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  ck_assert_ptr_null(s);
  o.allow_stale = 1; /* asked for: opened, and said stale */
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ocgc_source_close(s);
  unlink(copy);
  rmdir(other);
  stop(&c);
}
END_TEST

START_TEST(dir_option)
{
  struct child c = start(tmp, P_OK);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  char other[4096];
  pid_t gone;

  o.dir = tmp;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_uint_eq(info.pid, (uint64_t)c.pid);
  ocgc_source_close(s);

  /* a live process whose ring is elsewhere (or nowhere) */
  tu_path(other, sizeof other, tmp, subdirs[1]);
  ck_assert_int_eq(mkdir(other, 0700), 0);
  o.dir = other;
  o.wait_ms = 20;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_NORING);
  rmdir(other);
  o.dir = "/nonexistent/folder";
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_NORING);

  /* no process, no file */
  gone = dead_pid();
  o.dir = tmp;
  ck_assert_int_eq(ocgc_source_open_pid(gone, &o, &s), -ESRCH);

  /* the process was killed: its file stays, stale */
  {
    pid_t dead = c.pid;
    stop(&c);
    ck_assert_int_eq(access(c.path, F_OK), 0);
    ck_assert_int_eq(ocgc_source_open_pid(dead, &o, &s), OCGC_E_STALE);
    /* without the folder there is no process to search */
    ck_assert_int_eq(ocgc_source_open_pid(dead, NULL, &s), -ESRCH);
    o.allow_stale = 1;
    ck_assert_int_eq(ocgc_source_open_pid(dead, &o, &s), 0);
    ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
    ocgc_source_close(s);
  }
}
END_TEST

/* ---- waiting for a ring being created ---------------------------------------------- */

/* The producer makes its ring [delay] ms after it starts; open_pid with
 * [wait] (0 = default 200 ms), through the maps (_i even) or the folder. */
START_TEST(wait_for_ring)
{
  static const struct { unsigned delay, wait; int ok; } cases[] = {
    {30, 0, 1}, {300, 3000, 1}, {600, 50, 0}};
  unsigned k = (unsigned)_i / 2;
  struct ocgc_attach_opts o = opts_wait(cases[k].wait);
  struct ocgc_source *s = NULL;
  struct child c;
  uint64_t t0 = ms_now();
  int err;

  if (_i % 2) o.dir = tmp;
  spawn(&c, tmp, P_OK, cases[k].delay);
  err = ocgc_source_open_pid(c.pid, &o, &s);
  if (cases[k].ok) {
    ck_assert_msg(err == 0, "delay %u wait %u: %s", cases[k].delay, cases[k].wait,
                  ocgc_strerror(err));
    ck_assert_uint_ge(ms_now() - t0, cases[k].delay - 10);
    ck_assert_int_eq(ocgc_source_check_alive(s), 0);
    ocgc_source_close(s);
  } else {
    ck_assert_int_eq(err, OCGC_E_NORING);
    ck_assert_uint_lt(ms_now() - t0, cases[k].delay);
  }
  wait_ready(&c);
  stop(&c);
}
END_TEST

/* A stock OCaml 5 file that exists before its header does: open_pid waits
 * for the header instead of calling the file corrupt. */
START_TEST(wait_for_stock_header)
{
  struct child c;
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_attach_opts o = opts_wait(3000);
  uint64_t t0 = ms_now();
  int err;

  spawn(&c, tmp, P_STOCK_LATE, 150);
  err = ocgc_source_open_pid(c.pid, &o, &s);
  ck_assert_msg(err == 0, "open_pid: %s", ocgc_strerror(err));
  ck_assert_uint_ge(ms_now() - t0, 100);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 0);
  ck_assert_uint_eq(info.ring_words, 1024);
  ocgc_source_close(s);
  wait_ready(&c);
  stop(&c);
}
END_TEST

/* ---- permission ------------------------------------------------------------------------- */

/* Run [body] as another user than the producer [c]: as root, in a child
 * that became nobody, against c; otherwise against pid 1, if it is not
 * ours.  body returns the child's exit status (0: its checks held).  Says
 * so (and passes) when neither can be tried, or when the other user cannot
 * even reach /proc (a root whose / is not searchable by others): body's
 * refusals would then come from the machine, not from libocgc. */
static void as_another_user(struct child *c, int (*body)(pid_t target), const char *what)
{
  pid_t p = fork();
  int status = 0;

  ck_assert_int_ge(p, 0);
  if (p == 0) {
    struct stat st;
    pid_t target = 1;
    if (getuid() == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(77);
      target = c->pid;
    } else if (stat("/proc/1", &st) != 0 || st.st_uid == getuid()) {
      _exit(77);
    }
    if (access("/proc/self/status", R_OK) != 0) _exit(78);
    _exit(body(target));
  }
  ck_assert_int_eq(waitpid(p, &status, 0), p);
  ck_assert(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77)
    fprintf(stderr, "test_attach: %s not tried (cannot change user)\n", what);
  else if (WEXITSTATUS(status) == 78)
    fprintf(stderr, "test_attach: %s not tried (uid 65534 cannot reach /proc: is / searchable "
            "by all?)\n", what);
  else
    ck_assert_msg(WEXITSTATUS(status) == 0, "%s: check %d failed", what, WEXITSTATUS(status));
  stop(c);
}

static int denied_attach(pid_t target)
{
  char path[4096];
  struct ocgc_source *s = NULL;
  if (ocgc_find_ring(target, path, sizeof path) != -EACCES) return 1;
  if (ocgc_source_open_pid(target, NULL, &s) != -EACCES) return 2;
  return 0;
}

/* Another user's process: its maps cannot be read. */
START_TEST(permission_denied)
{
  struct child c = start(tmp, P_OK);
  as_another_user(&c, denied_attach, "permission_denied");
}
END_TEST

/* ---- listing the processes that write rings ------------------------------------------ */

#define MAX_SEEN 16

/* What a listing said about the pids a test follows. */
struct seen {
  pid_t pids[MAX_SEEN];
  unsigned npids;
  struct ocgc_list_entry e[MAX_SEEN]; /* pointers cleared: valid only in the callback */
  int listed[MAX_SEEN];
  int alive[MAX_SEEN];                /* ocgc_source_check_alive(e->src) */
  char program[MAX_SEEN][128];
  char path[MAX_SEEN][4096];
  unsigned calls, stop_after;
};

static int on_listed(const struct ocgc_list_entry *e, void *ctx)
{
  struct seen *s = ctx;
  unsigned i;
  s->calls++;
  for (i = 0; i < s->npids; i++) {
    if (e->pid != s->pids[i]) continue;
    s->listed[i]++;
    s->e[i] = *e;
    s->e[i].path = NULL;
    s->e[i].program = NULL;
    s->e[i].src = NULL;
    snprintf(s->program[i], sizeof s->program[i], "%s", e->program);
    snprintf(s->path[i], sizeof s->path[i], "%s", e->path);
    s->alive[i] = e->src != NULL ? ocgc_source_check_alive(e->src) : 1;
  }
  return s->stop_after != 0 && s->calls >= s->stop_after;
}

/* /proc/PID/comm without its newline. */
static void comm_of(pid_t pid, char *buf, size_t n)
{
  char path[64];
  FILE *f;
  snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
  buf[0] = '\0';
  if ((f = fopen(path, "r")) != NULL) {
    if (fgets(buf, (int)n, f) == NULL) buf[0] = '\0';
    fclose(f);
  }
  buf[strcspn(buf, "\n")] = '\0';
}

/* Each kind of producer is listed as ocgc_source_open_pid() judges it;
 * processes without a ring, or with a reader's mapping, are not. */
START_TEST(list_processes)
{
  static const enum pmode modes[] = {P_OK, P_MEMFD, P_STOCK, P_EXITED, P_BAD_PID, P_NONE,
                                     P_READONLY};
  enum { N = sizeof modes / sizeof modes[0] };
  static const int listed[N] = {1, 1, 1, 1, 1, 0, 0};
  static const enum ocgc_list_state states[N] = {
    OCGC_LIST_RUNNING, OCGC_LIST_RUNNING, OCGC_LIST_RUNNING, OCGC_LIST_EXITED,
    OCGC_LIST_STALE, 0, 0};
  struct seen *s = calloc(1, sizeof *s);
  struct child c[N];
  struct ocgc_list_stats st = OCGC_OPTS_INIT(struct ocgc_list_stats);
  char comm[64], prefix[64];
  struct stat fst;
  unsigned i;
  int n;

  ck_assert_ptr_nonnull(s);
  for (i = 0; i < N; i++) {
    c[i] = start(tmp, modes[i]);
    s->pids[s->npids++] = c[i].pid;
  }
  n = ocgc_list(on_listed, s, &st);
  ck_assert_int_ge(n, 5);
  ck_assert_uint_eq((uint64_t)n, st.listed);
  ck_assert_uint_eq(s->calls, (unsigned)n);
  ck_assert_uint_ge(st.processes, st.listed + st.vanished + st.denied + st.failed);
  for (i = 0; i < N; i++) {
    ck_assert_msg(s->listed[i] == listed[i], "mode %u listed %d times", i, s->listed[i]);
    if (!listed[i]) continue;
    ck_assert_msg(s->e[i].state == states[i], "mode %u: state %d", i, (int)s->e[i].state);
    ck_assert_int_eq(s->e[i].err, 0);
    ck_assert_int_eq(s->e[i].has_ext, modes[i] != P_STOCK);
    ck_assert_msg(same_file(s->path[i], c[i].path), "mode %u: %s", i, s->path[i]);
    ck_assert_int_eq(stat(c[i].path, &fst), 0);
    ck_assert_uint_eq(s->e[i].dev, (uint64_t)fst.st_dev);
    ck_assert_uint_eq(s->e[i].ino, (uint64_t)fst.st_ino);
    ck_assert_uint_eq(s->e[i].start_time, proc_start_time(c[i].pid));
    /* the source knows its process, stock files included */
    ck_assert_int_eq(s->alive[i], states[i] == OCGC_LIST_RUNNING ? 0 : OCGC_E_STALE);
    if (modes[i] == P_STOCK) comm_of(c[i].pid, comm, sizeof comm);
    ck_assert_str_eq(s->program[i], modes[i] == P_STOCK ? comm : "ringgen");
  }
  snprintf(prefix, sizeof prefix, "/proc/%d/", (int)c[1].pid);
  ck_assert_msg(strncmp(s->path[1], prefix, strlen(prefix)) == 0, "memfd at %s", s->path[1]);
  for (i = 0; i < N; i++) stop(&c[i]);
  unlink(c[1].path);
  free(s);
}
END_TEST

/* The callback ends the listing; no callback is an error. */
START_TEST(list_stop_and_errors)
{
  struct child c = start(tmp, P_OK), d = start(tmp, P_STOCK);
  struct seen *s = calloc(1, sizeof *s);
  struct ocgc_list_stats st = OCGC_OPTS_INIT(struct ocgc_list_stats);
  ck_assert_ptr_nonnull(s);
  s->stop_after = 1;
  ck_assert_int_eq(ocgc_list(on_listed, s, NULL), 1);
  ck_assert_uint_eq(s->calls, 1);
  memset(&st, 0xff, sizeof st);
  ck_assert_int_eq(ocgc_list(NULL, NULL, &st), -EINVAL);
  ck_assert_uint_eq(st.listed + st.processes, 0);
  stop(&c);
  stop(&d);
  free(s);
}
END_TEST

/* ocgc_list_opts's skip filter: a process it names is neither read nor
 * listed, and is asked about with its own start time; the others are
 * listed as by ocgc_list(). */
struct skipper {
  struct seen *s;
  pid_t skip;
  uint64_t skip_start;       /* the start time the filter was given for it */
  unsigned asked;
};

static int skip_one(int pid, uint64_t start_time, void *ctx)
{
  struct skipper *k = ctx;
  k->asked++;
  if (pid != k->skip) return 0;
  k->skip_start = start_time;
  return 1;
}

static int on_listed_skipper(const struct ocgc_list_entry *e, void *ctx)
{
  return on_listed(e, ((struct skipper *)ctx)->s);
}

START_TEST(list_skip)
{
  struct child c = start(tmp, P_OK), d = start(tmp, P_OK);
  struct ocgc_list_opts lo = OCGC_OPTS_INIT(struct ocgc_list_opts);
  struct skipper k = {0};
  struct ocgc_list_stats st = OCGC_OPTS_INIT(struct ocgc_list_stats);
  k.s = calloc(1, sizeof *k.s);
  ck_assert_ptr_nonnull(k.s);
  k.s->pids[k.s->npids++] = c.pid;
  k.s->pids[k.s->npids++] = d.pid;
  k.skip = c.pid;
  lo.skip = skip_one;
  ck_assert_int_ge(ocgc_list_opts(&lo, on_listed_skipper, &k, &st), 1);
  ck_assert_int_eq(k.s->listed[0], 0);
  ck_assert_int_eq(k.s->listed[1], 1);
  ck_assert_uint_eq(k.skip_start, proc_start_time(c.pid));
  ck_assert_uint_ge(k.asked, 2);
  /* NULL options: everything listed. */
  memset(k.s->listed, 0, sizeof k.s->listed);
  ck_assert_int_ge(ocgc_list_opts(NULL, on_listed_skipper, &k, NULL), 2);
  ck_assert_int_eq(k.s->listed[0], 1);
  ck_assert_int_eq(k.s->listed[1], 1);
  stop(&c);
  stop(&d);
  free(k.s);
}
END_TEST

/* A ring that cannot be read yet (a stock file before its header) is
 * listed as unreadable, with the reason and the process's name. */
START_TEST(list_unreadable)
{
  struct seen *s = calloc(1, sizeof *s);
  char path[4096], comm[64];
  struct child c;
  uint64_t t0;

  ck_assert_ptr_nonnull(s);
  spawn(&c, tmp, P_STOCK_LATE, 100000); /* the header never comes */
  for (t0 = ms_now(); ocgc_find_ring(c.pid, path, sizeof path) != 0 && ms_now() - t0 < 10000;)
    ms_sleep(2);
  s->pids[s->npids++] = c.pid;
  ck_assert_int_ge(ocgc_list(on_listed, s, NULL), 1);
  ck_assert_int_eq(s->listed[0], 1);
  ck_assert_int_eq(s->e[0].state, OCGC_LIST_UNREADABLE);
  ck_assert_int_eq(s->e[0].err, OCGC_E_CORRUPT);
  ck_assert_int_eq(s->alive[0], 1); /* no source given */
  comm_of(c.pid, comm, sizeof comm);
  ck_assert_str_eq(s->program[0], comm);
  stop(&c);
  free(s);
}
END_TEST

static int denied_list(pid_t target)
{
  struct seen s;
  struct ocgc_list_stats st = OCGC_OPTS_INIT(struct ocgc_list_stats);
  memset(&s, 0, sizeof s);
  s.pids[s.npids++] = target;
  if (ocgc_list(on_listed, &s, &st) < 0) return 1;
  if (st.denied == 0) return 2;
  if (s.listed[0] != 0) return 3;
  return 0;
}

/* Another user's processes are counted as denied, never listed. */
START_TEST(list_denied)
{
  struct child c = start(tmp, P_OK);
  as_another_user(&c, denied_list, "list_denied");
}
END_TEST

/* A scan by another user: the target's ring is not among the rings, and
 * the processes it could not look into are counted (ocgc_rings_unseen),
 * the target among them; the output struct as the opts rule says. */
static int unseen_rings(pid_t target)
{
  struct ocgc_rings_unseen u = OCGC_OPTS_INIT(struct ocgc_rings_unseen);
  struct ocgc_rings_unseen small;
  struct ocgc_rings *r = NULL;
  size_t i;
  if (ocgc_rings_scan(NULL, &r) != 0) return 1;
  for (i = 0; i < ocgc_rings_count(r); i++)
    if (ocgc_rings_get(r, i)->pid == target) return 2;
  if (ocgc_rings_unseen(r, &u) != 0) return 3;
  if (u.processes == 0) return 4;
  if (ocgc_rings_unseen(r, NULL) != -EINVAL || ocgc_rings_unseen(NULL, &u) != -EINVAL) return 5;
  memset(&small, 0xab, sizeof small);
  small.sz = sizeof small.sz; /* a caller that knows no field: none written */
  if (ocgc_rings_unseen(r, &small) != 0 || small.processes != UINT64_C(0xabababababababab))
    return 6;
  ocgc_rings_free(r);
  return 0;
}

/* What another user's scan could not see is counted, not left out. */
START_TEST(rings_unseen)
{
  struct child c = start(tmp, P_OK);
  as_another_user(&c, unseen_rings, "rings_unseen");
}
END_TEST

/* ---- default folders --------------------------------------------------------------- */

/* The folders ocgc_default_dir() gives under the current environment;
 * returns how many. */
static unsigned default_dirs(char out[4][4096])
{
  unsigned i;
  int err = 0;
  for (i = 0; i < 4 && (err = ocgc_default_dir(i, out[i], sizeof out[i])) == 0; i++) continue;
  ck_assert_int_eq(err, -ENOENT);
  return i;
}

/* The producer's rule (runtime_patch/src/ocgc_start.c default_dir()). */
START_TEST(default_dir_rule)
{
  char got[4][4096], want[4][4096], xdg[4096], small[8], other[4096];
  const char *saved = getenv("XDG_RUNTIME_DIR");
  char *keep = saved != NULL ? strdup(saved) : NULL;
  struct stat st;
  unsigned n = 0, k, uid = (unsigned)geteuid();
  int shm = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode);

  /* an XDG folder of ours comes first */
  setenv("XDG_RUNTIME_DIR", tmp, 1);
  snprintf(want[n++], sizeof want[0], "%s/ocgc", tmp);
  if (shm) snprintf(want[n++], sizeof want[0], "/dev/shm/ocgc-%u", uid);
  snprintf(want[n++], sizeof want[0], "/tmp/ocgc-%u", uid);
  ck_assert_uint_eq(default_dirs(got), n);
  for (k = 0; k < n; k++) ck_assert_str_eq(got[k], want[k]);
  ck_assert_int_eq(ocgc_default_dir(0, small, sizeof small), -ENAMETOOLONG);
  ck_assert_int_eq(ocgc_default_dir(0, NULL, 10), -EINVAL);
  ck_assert_int_eq(ocgc_default_dir(0, got[0], 0), -EINVAL);
  ck_assert_int_eq(ocgc_default_dir(99, got[0], sizeof got[0]), -ENOENT);

  /* XDG_RUNTIME_DIR unset, relative, not a folder, or not ours: skipped */
  tu_path(xdg, sizeof xdg, tmp, "file");
  ck_assert_int_eq(close(open(xdg, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
  tu_path(other, sizeof other, tmp, subdirs[1]);
  ck_assert_int_eq(mkdir(other, 0700), 0);
  if (uid == 0) ck_assert_int_eq(chown(other, 65534, 65534), 0);
  {
    const char *bad[] = {NULL, "relative/dir", xdg, "/nonexistent", uid == 0 ? other : "/"};
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
      if (bad[k] == NULL) unsetenv("XDG_RUNTIME_DIR");
      else setenv("XDG_RUNTIME_DIR", bad[k], 1);
      ck_assert_uint_eq(default_dirs(got), n - 1);
      ck_assert_str_eq(got[0], want[1]);
    }
  }
  unlink(xdg);
  rmdir(other);
  if (keep != NULL) setenv("XDG_RUNTIME_DIR", keep, 1);
  else unsetenv("XDG_RUNTIME_DIR");
  free(keep);
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------------- */

Suite *attach_suite(void);
Suite *attach_suite(void)
{
  Suite *s = suite_create("attach");
  TCase *tc = tcase_create("find");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, find_and_open);
  tcase_add_test(tc, find_errors);
  tcase_add_test(tc, no_ring);
  tcase_add_test(tc, names);
  tcase_add_test(tc, deleted_ring);
  tcase_add_test(tc, memfd_ring);
  tcase_add_test(tc, escaped_name);
  tcase_add_test(tc, odd_comm);
  tcase_add_test(tc, permission_denied);
  suite_add_tcase(s, tc);

  tc = tcase_create("identity");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, stale_identity, 0, 4);
  tcase_add_test(tc, opts_sz);
  tcase_add_test(tc, stock_file);
  tcase_add_test(tc, stock_not_mapped);
  tcase_add_test(tc, stock_pid_reused);
  tcase_add_test(tc, check_alive);
  tcase_add_test(tc, dir_option);
  tcase_add_loop_test(tc, dir_links_not_followed, 0, 2);
  tcase_add_test(tc, dir_copy_refused);
  suite_add_tcase(s, tc);

  tc = tcase_create("list");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, list_processes);
  tcase_add_test(tc, list_stop_and_errors);
  tcase_add_test(tc, list_skip);
  tcase_add_test(tc, list_unreadable);
  tcase_add_test(tc, list_denied);
  tcase_add_test(tc, rings_unseen);
  tcase_add_test(tc, default_dir_rule);
  suite_add_tcase(s, tc);

  tc = tcase_create("wait");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, wait_for_ring, 0, 6);
  tcase_add_test(tc, wait_for_stock_header);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(attach_suite);
