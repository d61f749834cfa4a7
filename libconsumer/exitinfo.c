/* exitinfo.c - how a watched process ended (exitinfo.h, ocgc/exit.h):
 * a pidfd opened on it when the watch takes it, and at its end what the
 * kernel says: the pidfd's exit information (ioctl PIDFD_GET_INFO with
 * PIDFD_INFO_EXIT, Linux 6.15 and later, given once the process is
 * reaped), or /proc/PID/stat's exit code (field 52) while it is a zombie.
 *
 * Invariants: the pidfd is that process's: opened after its ring was
 * proved its own, and kept only if /proc/PID/stat still shows the same
 * start time once it is open (a pid reused in between is not taken);
 * nothing here waits: a process seen gone whose end is not told yet is
 * asked again (EXITINFO_POLL_NS) for at most EXITINFO_ENDING_NS, then
 * ends unknown; a process alive and not exiting (no PF_EXITING, no exit
 * mark) when its ring went has exec'd: no end; a zero exit code in a
 * zombie's stat is believed only when we may read it (root, or the
 * process's user: the kernel shows 0 to others). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitinfo.h"
#include "procfs.h"

#define PF_EXITING 0x00000004ul

/* The kernel's struct pidfd_info (include/uapi/linux/pidfd.h), its first
 * published size (PIDFD_INFO_SIZE_VER0, 64 bytes), whose last word became
 * exit_code in 6.15; Debian 12's headers have none of it. */
struct exit_pidfd_info {
  uint64_t mask;
  uint64_t cgroupid;
  uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  int32_t exit_code;
};
_Static_assert(sizeof(struct exit_pidfd_info) == 64, "pidfd_info VER0 is 64 bytes");
#define EXIT_PIDFD_INFO_EXIT (1ull << 3)
#define EXIT_PIDFD_GET_INFO _IOWR(0xFF, 11, struct exit_pidfd_info)

const char *ocgc_exit_how_name(int how)
{
  switch (how) {
  case OCGC_EXIT_EXITED: return "exited";
  case OCGC_EXIT_KILLED: return "killed";
  case OCGC_EXIT_OOM: return "oom";
  default: return "unknown";
  }
}

int exitinfo_parse_stat(const char *line, struct exit_stat *out)
{
  const char *p = strrchr(line, ')');
  unsigned field = 3;
  memset(out, 0, sizeof *out);
  if (p == NULL || p[1] != ' ') return -1;
  p += 2;
  while (*p != '\0' && *p != '\n') {
    char *end;
    if (field == 3) {
      out->state = *p;
    } else if (field == 9 || field == 22 || field == 52) {
      unsigned long long v;
      if ((*p < '0' || *p > '9') && *p != '-') return -1;
      errno = 0;
      v = strtoull(p, &end, 10);
      if (errno != 0 || (*end != ' ' && *end != '\n' && *end != '\0')) return -1;
      if (field == 9) out->flags = (unsigned long)v;
      else if (field == 22) out->start_time = v;
      else {
        out->exit_code = (int)(long long)v;
        out->have_exit_code = 1;
      }
    }
    if ((p = strchr(p, ' ')) == NULL) break;
    p++;
    field++;
  }
  return field >= 22 ? 0 : -1;
}

/* /proc/PID/stat, zombies too: 0, -ESRCH, or -errno. */
static int read_stat(int pid, struct exit_stat *st)
{
  char path[64], buf[2048];
  ssize_t len;
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  len = ocgc_proc_read_small(path, buf, sizeof buf);
  if (len == -ENOENT || len == -ESRCH) return -ESRCH;
  if (len < 0) return (int)len;
  return exitinfo_parse_stat(buf, st) == 0 ? 0 : -EIO;
}

void exitinfo_decode(int status, struct ocgc_exit *e)
{
  e->code = -1;
  e->signal = 0;
  e->core_dumped = 0;
  if (WIFEXITED(status)) {
    e->known = 1;
    e->how = OCGC_EXIT_EXITED;
    e->code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e->known = 1;
    e->how = OCGC_EXIT_KILLED;
    e->signal = WTERMSIG(status);
    e->core_dumped = WCOREDUMP(status) != 0;
  } else {
    e->known = 0;
    e->how = OCGC_EXIT_UNKNOWN;
  }
}

void exitinfo_open(struct exitinfo *x, int pid, uint64_t start_ticks)
{
  struct exit_stat st;
  x->pidfd = -1;
  x->no_get_info = 0;
  x->ending_ns = 0;
#ifdef SYS_pidfd_open
  if (start_ticks == 0) return; /* it could not be told from a reuse of its pid */
  x->pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec, as pidfds are */
  if (x->pidfd >= 0 && (read_stat(pid, &st) != 0 || st.start_time != start_ticks)) {
    close(x->pidfd);
    x->pidfd = -1;
  }
#else
  (void)pid;
  (void)start_ticks;
  (void)st;
#endif
}

void exitinfo_close(struct exitinfo *x)
{
  if (x->pidfd >= 0) close(x->pidfd);
  x->pidfd = -1;
}

/* The pidfd's exit status: 0 and *status, or -1 (not told: alive, not
 * reaped yet, or a kernel that does not keep it). */
static int pidfd_status(struct exitinfo *x, int *status)
{
  struct exit_pidfd_info in;
  if (x->pidfd < 0 || x->no_get_info) return -1;
  memset(&in, 0, sizeof in);
  in.mask = EXIT_PIDFD_INFO_EXIT;
  if (ioctl(x->pidfd, EXIT_PIDFD_GET_INFO, &in) != 0) {
    /* No PIDFD_GET_INFO at all (before 6.13): not asked again.  ESRCH: a
     * reaped process on a kernel that keeps no exit information (6.13,
     * 6.14). */
    if (errno == ENOTTY || errno == EINVAL) x->no_get_info = 1;
    return -1;
  }
  if (!(in.mask & EXIT_PIDFD_INFO_EXIT)) return -1;
  *status = in.exit_code;
  return 0;
}

enum exitinfo_verdict exitinfo_settle(struct exitinfo *x, int pid, uint64_t start_ticks,
                                      unsigned uid, int exit_mark, uint64_t now,
                                      struct ocgc_exit *e)
{
  struct exit_stat st;
  int status, dead = 0, err;
  if (x->ending_ns == 0) x->ending_ns = now;
  e->exit_mark = exit_mark;
  if (x->pidfd >= 0) {
    struct pollfd pf = {x->pidfd, POLLIN, 0};
    /* Readable once the whole process has exited (a zombie, or reaped). */
    dead = poll(&pf, 1, 0) == 1 && (pf.revents & (POLLIN | POLLHUP)) != 0;
    if (dead && pidfd_status(x, &status) == 0) goto told;
  }
  err = read_stat(pid, &st);
  /* Without its start time (never read) a reuse of its pid cannot be
   * told: what lives there is taken for it, so that no end is made up. */
  if (err == 0 && (st.start_time == start_ticks || start_ticks == 0)) {
    if (st.state == 'Z' || st.state == 'X') {
      /* A zombie's wait status, which the kernel shows as 0 to whom may
       * not ptrace it: a 0 is believed only from root or its user. */
      if (st.have_exit_code &&
          (st.exit_code != 0 || geteuid() == 0 || geteuid() == (uid_t)uid)) {
        status = st.exit_code;
        goto told;
      }
    } else if (!dead && !(st.flags & PF_EXITING) && !exit_mark) {
      /* It lives, and is not on its way out: an exec left its ring. */
      return EXITINFO_ALIVE;
    }
  }
  /* Else reaped (its pid maybe another's now), or ending: asked again. */
  if (now - x->ending_ns < EXITINFO_ENDING_NS) return EXITINFO_ENDING;
  /* The kernel did not say: that it is gone, and (its mark) that it went
   * through the runtime's exit. */
  e->known = 0;
  e->how = exit_mark ? OCGC_EXIT_EXITED : OCGC_EXIT_UNKNOWN;
  e->code = -1;
  e->signal = 0;
  e->core_dumped = 0;
  e->gone_ns = x->ending_ns;
  return EXITINFO_ENDED;
told:
  exitinfo_decode(status, e);
  e->gone_ns = x->ending_ns;
  return EXITINFO_ENDED;
}
