/* test_exit.c - how a watched process ended and its memory cgroup
 * (libconsumer/exitinfo.c, memcg.c): wait statuses decoded, stat lines
 * parsed, the verdict on real children (a zombie, one reaped, one alive,
 * a pid not proved), and the memory cgroup found and read on fake trees
 * of /proc and of the mounts (v1, v2, a mount of a subtree, a link in the
 * path, a cgroup without an OOM count), its OOM kills compared; the look
 * that lets a read be a living process's base (no SIGKILL queued). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exitinfo.h"
#include "memcg.h"
#include "procfs.h"
#include "testutil.h"

START_TEST(decode_statuses)
{
  struct ocgc_exit e;
  memset(&e, 0, sizeof e);
  exitinfo_decode(0, &e);
  ck_assert_int_eq(e.known, 1);
  ck_assert_int_eq(e.how, OCGC_EXIT_EXITED);
  ck_assert_int_eq(e.code, 0);
  exitinfo_decode(3 << 8, &e);
  ck_assert_int_eq(e.how, OCGC_EXIT_EXITED);
  ck_assert_int_eq(e.code, 3);
  ck_assert_int_eq(e.signal, 0);
  exitinfo_decode(SIGKILL, &e);
  ck_assert_int_eq(e.known, 1);
  ck_assert_int_eq(e.how, OCGC_EXIT_KILLED);
  ck_assert_int_eq(e.signal, SIGKILL);
  ck_assert_int_eq(e.code, -1);
  ck_assert_int_eq(e.core_dumped, 0);
  exitinfo_decode(SIGSEGV | 0x80, &e);
  ck_assert_int_eq(e.how, OCGC_EXIT_KILLED);
  ck_assert_int_eq(e.signal, SIGSEGV);
  ck_assert_int_eq(e.core_dumped, 1);
  exitinfo_decode(0x137f, &e); /* stopped by SIGSTOP: no end */
  ck_assert_int_eq(e.known, 0);
  ck_assert_int_eq(e.how, OCGC_EXIT_UNKNOWN);
  ck_assert_str_eq(ocgc_exit_how_name(OCGC_EXIT_EXITED), "exited");
  ck_assert_str_eq(ocgc_exit_how_name(OCGC_EXIT_KILLED), "killed");
  ck_assert_str_eq(ocgc_exit_how_name(OCGC_EXIT_OOM), "oom");
  ck_assert_str_eq(ocgc_exit_how_name(OCGC_EXIT_UNKNOWN), "unknown");
  ck_assert_str_eq(ocgc_exit_how_name(77), "unknown");
}
END_TEST

/* A stat line of 52 fields whose name holds ") (" and spaces. */
START_TEST(parse_stat_lines)
{
  char line[1024];
  struct exit_stat st;
  int i, n;
  n = snprintf(line, sizeof line, "42 (a) (b c) Z");
  for (i = 4; i <= 52; i++)
    n += snprintf(line + n, sizeof line - (size_t)n, " %d",
                  i == 9 ? 4194308 : i == 22 ? 123456 : i == 52 ? 137 : i);
  snprintf(line + n, sizeof line - (size_t)n, "\n");
  ck_assert_int_eq(exitinfo_parse_stat(line, &st), 0);
  ck_assert_int_eq(st.state, 'Z');
  ck_assert_uint_eq(st.flags, 4194308);
  ck_assert_uint_eq(st.start_time, 123456);
  ck_assert_int_eq(st.have_exit_code, 1);
  ck_assert_int_eq(st.exit_code, 137);
  /* A kernel before 3.5: no field 52. */
  ck_assert_int_eq(exitinfo_parse_stat("1 (x) S 1 1 1 0 -1 64 0 0 0 0 0 0 0 0 20 0 1 0 99 1", &st), 0);
  ck_assert_uint_eq(st.start_time, 99);
  ck_assert_int_eq(st.have_exit_code, 0);
  ck_assert_int_eq(exitinfo_parse_stat("1 (x) S 1 1", &st), -1);
  ck_assert_int_eq(exitinfo_parse_stat("no paren", &st), -1);
  ck_assert_int_eq(exitinfo_parse_stat("1 (x) S 1 1 1 0 -1 abc", &st), -1);
}
END_TEST

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t start_of(pid_t pid)
{
  struct ocgc_proc_ident id;
  ck_assert_int_eq(ocgc_proc_ident(pid, &id), 0);
  return id.start_time;
}

/* A child that waits for a byte on [fd] and then exits with [code], or
 * pauses ([code] < 0). */
static pid_t child(int code, int *wfd)
{
  int fds[2];
  pid_t pid;
  char c;
  ck_assert_int_eq(pipe(fds), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[1]);
    if (code < 0) for (;;) pause();
    if (read(fds[0], &c, 1) < 0) _exit(99);
    _exit(code);
  }
  close(fds[0]);
  *wfd = fds[1];
  return pid;
}

/* Wait until [pid] is a zombie (at most 10 s). */
static void until_zombie(pid_t pid)
{
  int i;
  for (i = 0; i < 10000; i++) {
    char path[64], buf[1024];
    struct exit_stat st;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (ocgc_proc_read_small(path, buf, sizeof buf) > 0 && exitinfo_parse_stat(buf, &st) == 0 &&
        st.state == 'Z')
      return;
    usleep(1000);
  }
  ck_abort_msg("child %d never became a zombie", (int)pid);
}

START_TEST(zombie_says_its_status)
{
  struct exitinfo x;
  struct ocgc_exit e;
  int wfd;
  pid_t pid = child(5, &wfd);
  uint64_t start = start_of(pid), now = mono_ns();
  exitinfo_open(&x, pid, start);
  /* Alive, not exiting, no mark: an exec would look so, no end. */
  memset(&e, 0, sizeof e);
  ck_assert_int_eq(exitinfo_settle(&x, pid, start, getuid(), 0, now, &e), EXITINFO_ALIVE);
  ck_assert_int_eq(e.known, 0);
  x.ending_ns = 0;
  /* With its runtime's exit mark it is ending, not alive. */
  ck_assert_int_eq(exitinfo_settle(&x, pid, start, getuid(), 1, now, &e), EXITINFO_ENDING);
  x.ending_ns = 0;
  ck_assert_int_eq(write(wfd, "x", 1), 1);
  close(wfd);
  until_zombie(pid);
  ck_assert_int_eq(exitinfo_settle(&x, pid, start, getuid(), 0, now + 5, &e), EXITINFO_ENDED);
  ck_assert_int_eq(e.known, 1);
  ck_assert_int_eq(e.how, OCGC_EXIT_EXITED);
  ck_assert_int_eq(e.code, 5);
  ck_assert_uint_eq(e.gone_ns, now + 5);
  exitinfo_close(&x);
  ck_assert_int_eq(x.pidfd, -1);
  waitpid(pid, NULL, 0);
}
END_TEST

/* An OOM kill's base is taken only of a process seen alive with no SIGKILL
 * queued after its cgroup was read (watch.c, memcg_alive): the OOM killer
 * queues its SIGKILL before it counts the kill.  The look: /proc/PID/status
 * parsed (State, SigPnd, ShdPnd), on texts and on real processes. */
START_TEST(unkilled_look)
{
  int wfd;
  pid_t pid;
  const char *alive = "Name:\tx\nState:\tS (sleeping)\nSigQ:\t0/1\n"
                      "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n";
  const char *own = "Name:\tx\nState:\tR (running)\n"
                    "SigPnd:\t0000000000000100\nShdPnd:\t0000000000000000\n";
  const char *shared = "Name:\tx\nState:\tD (disk sleep)\n"
                       "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000100\n";
  const char *other = "Name:\tx\nState:\tS (sleeping)\n"
                      "SigPnd:\t0000000000004000\nShdPnd:\t0000000000000002\n";
  const char *zombie = "Name:\tx\nState:\tZ (zombie)\n"
                       "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n";
  ck_assert_int_eq(ocgc_proc_status_unkilled(alive), 1);
  ck_assert_int_eq(ocgc_proc_status_unkilled(own), 0);    /* SIGKILL, bit 8 */
  ck_assert_int_eq(ocgc_proc_status_unkilled(shared), 0);
  ck_assert_int_eq(ocgc_proc_status_unkilled(other), 1);  /* SIGTERM, SIGINT pending */
  ck_assert_int_eq(ocgc_proc_status_unkilled(zombie), 0);
  ck_assert_int_eq(ocgc_proc_status_unkilled("Name:\tx\nState:\tS\n"), 0);
  ck_assert_int_eq(ocgc_proc_status_unkilled(""), 0);
  ck_assert_int_eq(ocgc_proc_unkilled(getpid()), 1);
  pid = child(0, &wfd);
  ck_assert_int_eq(ocgc_proc_unkilled(pid), 1);
  ck_assert_int_eq(write(wfd, "x", 1), 1);
  close(wfd);
  until_zombie(pid);
  ck_assert_int_eq(ocgc_proc_unkilled(pid), 0);
  waitpid(pid, NULL, 0);
  ck_assert_int_eq(ocgc_proc_unkilled(pid), -ESRCH);
}
END_TEST

START_TEST(reaped_says_or_ends_unknown)
{
  struct exitinfo x;
  struct ocgc_exit e;
  int wfd, r;
  pid_t pid = child(-1, &wfd);
  uint64_t start = start_of(pid), now = mono_ns();
  exitinfo_open(&x, pid, start);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0); /* reaped: /proc says nothing more */
  memset(&e, 0, sizeof e);
  r = exitinfo_settle(&x, pid, start, getuid(), 0, now, &e);
  if (r == EXITINFO_ENDED) { /* a pidfd with exit information (Linux 6.15 and later) */
    ck_assert_int_eq(e.known, 1);
    ck_assert_int_eq(e.how, OCGC_EXIT_KILLED);
    ck_assert_int_eq(e.signal, SIGKILL);
  } else {
    /* Older: asked again for a while, then gone, how unknown. */
    ck_assert_int_eq(r, EXITINFO_ENDING);
    ck_assert_int_eq(exitinfo_settle(&x, pid, start, getuid(), 0, now + EXITINFO_ENDING_NS, &e),
                     EXITINFO_ENDED);
    ck_assert_int_eq(e.known, 0);
    ck_assert_int_eq(e.how, OCGC_EXIT_UNKNOWN);
  }
  ck_assert_uint_eq(e.gone_ns, now);
  exitinfo_close(&x);
  close(wfd);
}
END_TEST

START_TEST(pid_not_proved)
{
  struct exitinfo x;
  int wfd;
  pid_t pid = child(-1, &wfd);
  uint64_t start = start_of(pid);
  exitinfo_open(&x, pid, start + 1); /* another start: a reused pid */
  ck_assert_int_eq(x.pidfd, -1);
  exitinfo_open(&x, pid, 0);         /* no start known */
  ck_assert_int_eq(x.pidfd, -1);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  close(wfd);
}
END_TEST

/* ---- memory cgroups on fake trees ---- */

static char *tree;

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
  (void)st; (void)flag; (void)f;
  return remove(p);
}

static void tree_setup(void) { tree = tu_mkdtemp(); ck_assert_ptr_nonnull(tree); }
static void tree_teardown(void)
{
  if (tree != NULL) nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  free(tree);
  tree = NULL;
}

/* Write [text] into TREE/[rel], its folders made. */
static void put(const char *rel, const char *text)
{
  char path[4096], *s;
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", tree, rel);
  for (s = path + strlen(tree) + 1; (s = strchr(s, '/')) != NULL; s++) {
    *s = '\0';
    mkdir(path, 0755);
    *s = '/';
  }
  ck_assert_ptr_nonnull(f = fopen(path, "w"));
  fputs(text, f);
  fclose(f);
}

static void find(struct memcg_mounts *ms, unsigned want)
{
  char proc[4096];
  memset(ms, 0, sizeof *ms);
  snprintf(proc, sizeof proc, "%s/proc", tree);
  ck_assert_uint_eq(memcg_mounts_find_at(ms, proc, tree), want);
}

static const char *MOUNTS =
    "22 1 0:21 / /proc rw - proc proc rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/mem\\040ory rw shared:9 - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

START_TEST(memcg_v1)
{
  struct memcg_mounts ms;
  struct memcg_at at;
  struct ocgc_memcg m;
  put("proc/self/mountinfo", MOUNTS);
  put("proc/123/cgroup", "9:name=systemd:/\n4:cpuset,memory:/a/b\n1:cpu:/x\n0::/\n");
  put("sys/fs/cgroup/mem ory/a/b/memory.usage_in_bytes", "1000\n");
  put("sys/fs/cgroup/mem ory/a/b/memory.limit_in_bytes", "9223372036854771712\n");
  put("sys/fs/cgroup/mem ory/a/b/memory.max_usage_in_bytes", "2000\n");
  put("sys/fs/cgroup/mem ory/a/b/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  put("sys/fs/cgroup/unified/cgroup.controllers", "");
  find(&ms, 2);
  memset(&at, 0, sizeof at);
  memset(&m, 0, sizeof m);
  memcg_follow(&ms, &at, 123, 1, &m);
  ck_assert_int_eq(m.known, 1);
  ck_assert_int_eq(m.v2, 0);
  ck_assert_uint_eq(m.usage, 1000);
  ck_assert_uint_eq(m.limit, UINT64_MAX);
  ck_assert_uint_eq(m.peak, 2000);
  ck_assert_uint_eq(m.oom_kills, 2);
  ck_assert_str_eq(m.path, "/a/b");
  ck_assert_int_eq(memcg_oom_grew(&at), 0);
  /* A limit, and an OOM kill after the last read alive: grown. */
  put("sys/fs/cgroup/mem ory/a/b/memory.limit_in_bytes", "100663296\n");
  put("sys/fs/cgroup/mem ory/a/b/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
  memcg_update(&ms, &at, &m, 0, 2);
  ck_assert_uint_eq(m.limit, 100663296);
  ck_assert_uint_eq(m.oom_kills, 3);
  ck_assert_int_eq(memcg_oom_grew(&at), 1);
  /* Read alive again: the new count is the base. */
  memcg_update(&ms, &at, &m, 1, 3);
  ck_assert_int_eq(memcg_oom_grew(&at), 0);
  memcg_at_free(&at);
  memcg_mounts_free(&ms);
}
END_TEST

START_TEST(memcg_v2)
{
  struct memcg_mounts ms;
  struct memcg_at at;
  struct ocgc_memcg m;
  put("proc/self/mountinfo", "41 31 0:38 / /cg2 rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  put("proc/7/cgroup", "0::/c/d\n");
  put("cg2/c/d/memory.current", "4096\n");
  put("cg2/c/d/memory.max", "max\n");
  put("cg2/c/d/memory.peak", "8192\n");
  put("cg2/c/d/memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\noom_group_kill 0\n");
  find(&ms, 1);
  memset(&at, 0, sizeof at);
  memset(&m, 0, sizeof m);
  memcg_follow(&ms, &at, 7, 1, &m);
  ck_assert_int_eq(m.known, 1);
  ck_assert_int_eq(m.v2, 1);
  ck_assert_uint_eq(m.usage, 4096);
  ck_assert_uint_eq(m.limit, UINT64_MAX);
  ck_assert_uint_eq(m.peak, 8192);
  ck_assert_uint_eq(m.oom_kills, 1);
  ck_assert_str_eq(m.path, "/c/d");
  put("cg2/c/d/memory.max", "100663296\n");
  memcg_update(&ms, &at, &m, 0, 2);
  ck_assert_uint_eq(m.limit, 100663296);
  ck_assert_int_eq(memcg_oom_grew(&at), 0);
  memcg_at_free(&at);
  memcg_mounts_free(&ms);
}
END_TEST

/* A mount of a subtree (a container's view), and a cgroup whose count is
 * not there: the host's /proc/vmstat is compared. */
START_TEST(memcg_subtree_and_host)
{
  struct memcg_mounts ms;
  struct memcg_at at;
  struct ocgc_memcg m;
  put("proc/self/mountinfo", "41 31 0:38 /kube/pod1 /cg rw - cgroup2 cgroup2 rw\n");
  put("proc/8/cgroup", "0::/kube/pod1/app\n");
  put("proc/9/cgroup", "0::/elsewhere\n");
  put("proc/vmstat", "nr_free_pages 1\noom_kill 5\nnuma_hit 2\n");
  put("cg/app/memory.current", "10\n");
  find(&ms, 1);
  memset(&at, 0, sizeof at);
  memset(&m, 0, sizeof m);
  memcg_follow(&ms, &at, 8, 1, &m);
  ck_assert_int_eq(m.known, 1);
  ck_assert_uint_eq(m.usage, 10);
  ck_assert_uint_eq(m.limit, UINT64_MAX); /* no memory.max: none */
  ck_assert_int_eq(at.have_base, 0);
  ck_assert_int_eq(at.have_host_base, 1);
  put("proc/vmstat", "nr_free_pages 1\noom_kill 6\nnuma_hit 2\n");
  /* Within 100 ms the host's count is not read again: the same for all. */
  memcg_update(&ms, &at, &m, 0, 2);
  ck_assert_int_eq(memcg_oom_grew(&at), 0);
  memcg_update(&ms, &at, &m, 0, 2 + MEMCG_HOST_EVERY_NS);
  ck_assert_int_eq(memcg_oom_grew(&at), 1);
  memcg_at_free(&at);
  /* Not below the mount: not known. */
  memset(&at, 0, sizeof at);
  memset(&m, 0, sizeof m);
  memcg_follow(&ms, &at, 9, 1, &m);
  ck_assert_int_eq(m.known, 0);
  ck_assert_int_eq(at.mount, -1);
  memcg_at_free(&at);
  memcg_mounts_free(&ms);
}
END_TEST

/* A link in the cgroup's path is not followed; "..", empty components
 * and a missing process are not known; neither is a /proc/PID/cgroup
 * without memory or v2. */
START_TEST(memcg_hostile_paths)
{
  struct memcg_mounts ms;
  struct memcg_at at;
  struct ocgc_memcg m;
  char target[4096], link[4096];
  static const char *const bad[] = {"0::/x/../etc\n", "0::/x//y\n", "0::relative\n",
                                    "3:cpu:/a\n", "garbage"};
  unsigned i;
  put("proc/self/mountinfo", "41 31 0:38 / /cg rw - cgroup2 cgroup2 rw\n");
  put("elsewhere/memory.current", "1\n");
  put("cg/x/memory.current", "2\n");
  snprintf(target, sizeof target, "%s/elsewhere", tree);
  snprintf(link, sizeof link, "%s/cg/lnk", tree);
  ck_assert_int_eq(symlink(target, link), 0);
  put("proc/10/cgroup", "0::/lnk\n");
  find(&ms, 1);
  memset(&at, 0, sizeof at);
  memset(&m, 0, sizeof m);
  memcg_follow(&ms, &at, 10, 1, &m);
  ck_assert_int_eq(m.known, 0);
  memcg_at_free(&at);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    put("proc/11/cgroup", bad[i]);
    memset(&at, 0, sizeof at);
    memset(&m, 0, sizeof m);
    memcg_follow(&ms, &at, 11, 1, &m);
    ck_assert_msg(m.known == 0, "known from %s", bad[i]);
    memcg_at_free(&at);
  }
  memset(&at, 0, sizeof at);
  memcg_follow(&ms, &at, 12, 1, &m); /* no such process */
  ck_assert_int_eq(m.known, 0);
  memcg_at_free(&at);
  memcg_mounts_free(&ms);
}
END_TEST

/* Its cgroup's count decides while it can be read at the death (another
 * cgroup's OOM kill on the host is not its own); a cgroup removed before
 * the death is read leaves the host's. */
START_TEST(memcg_removed_after_death)
{
  struct memcg_mounts ms;
  struct memcg_at at;
  struct ocgc_memcg m;
  char dir[4096];
  static const char *const files[] = {"memory.current", "memory.events"};
  unsigned i;
  put("proc/self/mountinfo", "41 31 0:38 / /cg rw - cgroup2 cgroup2 rw\n");
  put("proc/13/cgroup", "0::/svc\n");
  put("proc/vmstat", "oom_kill 7\n");
  put("cg/svc/memory.current", "10\n");
  put("cg/svc/memory.events", "oom_kill 0\n");
  find(&ms, 1);
  memset(&at, 0, sizeof at);
  memset(&m, 0, sizeof m);
  memcg_follow(&ms, &at, 13, 1, &m);
  put("proc/vmstat", "oom_kill 8\n"); /* another cgroup's */
  memcg_update(&ms, &at, &m, 0, 1 + MEMCG_HOST_EVERY_NS);
  ck_assert_int_eq(memcg_oom_grew(&at), 0);
  /* Again, and its cgroup goes before its death is read. */
  memcg_update(&ms, &at, &m, 1, 1 + 2 * MEMCG_HOST_EVERY_NS);
  for (i = 0; i < 2; i++) {
    snprintf(dir, sizeof dir, "%s/cg/svc/%s", tree, files[i]);
    ck_assert_int_eq(unlink(dir), 0);
  }
  snprintf(dir, sizeof dir, "%s/cg/svc", tree);
  ck_assert_int_eq(rmdir(dir), 0);
  put("proc/vmstat", "oom_kill 9\n");
  memcg_update(&ms, &at, &m, 0, 1 + 3 * MEMCG_HOST_EVERY_NS);
  ck_assert_int_eq(m.known, 1); /* as last read */
  ck_assert_uint_eq(m.usage, 10);
  ck_assert_int_eq(memcg_oom_grew(&at), 1);
  memcg_at_free(&at);
  memcg_mounts_free(&ms);
}
END_TEST

START_TEST(parse_cgroup_files)
{
  char out[64];
  int v2 = -1;
  ck_assert_int_eq(memcg_parse_cgroup("5:memory:/m\n0::/u\n", out, sizeof out, &v2), 0);
  ck_assert_str_eq(out, "/m");
  ck_assert_int_eq(v2, 0);
  ck_assert_int_eq(memcg_parse_cgroup("1:name=systemd:/s\n0::/u v\n", out, sizeof out, &v2), 0);
  ck_assert_str_eq(out, "/u v");
  ck_assert_int_eq(v2, 1);
  ck_assert_int_eq(memcg_parse_cgroup("4:memoryx:/no\n", out, sizeof out, &v2), -1);
  ck_assert_int_eq(memcg_parse_cgroup("0::/a-path-longer-than-the-buffer-is-refused-whole-"
                                      "not-cut-aaaaaaaaaaaaaaaaaaaaaaaaa\n", out, sizeof out, &v2),
                   -1);
}
END_TEST

static Suite *exit_suite(void)
{
  Suite *s = suite_create("exit");
  TCase *tc = tcase_create("exitinfo"), *mc = tcase_create("memcg");
  tcase_add_test(tc, decode_statuses);
  tcase_add_test(tc, parse_stat_lines);
  tcase_add_test(tc, zombie_says_its_status);
  tcase_add_test(tc, unkilled_look);
  tcase_add_test(tc, reaped_says_or_ends_unknown);
  tcase_add_test(tc, pid_not_proved);
  suite_add_tcase(s, tc);
  tcase_add_checked_fixture(mc, tree_setup, tree_teardown);
  tcase_add_test(mc, memcg_v1);
  tcase_add_test(mc, memcg_v2);
  tcase_add_test(mc, memcg_subtree_and_host);
  tcase_add_test(mc, memcg_hostile_paths);
  tcase_add_test(mc, memcg_removed_after_death);
  tcase_add_test(mc, parse_cgroup_files);
  suite_add_tcase(s, mc);
  return s;
}

TU_SUITE(exit_suite);
