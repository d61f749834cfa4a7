/* list.c - the processes of this host that write a ring (ocgc_list()).
 *
 * What `ocgc ls` lists first, for any agent: every process in /proc whose
 * memory map holds a ring, found and opened the checked way
 * (ocgc_open_ring(): nothing the target names is opened on its word), and
 * judged as ocgc_source_open_pid() would judge it.
 *
 * Invariants:
 * - Bounded: each process's maps are read once (by ocgc_open_ring()), its
 *   stat twice, an ocgc file's extension block once; a stock file is
 *   judged by that one maps read (it was found there), never a second; a
 *   process the caller's skip filter names costs one stat read.
 * - A process is one process throughout: its start time is read before and
 *   after its maps; if they differ (the pid passed to another process
 *   meanwhile) or it is gone, it is counted as vanished, not listed.
 * - Processes that vanish, or whose maps may not be read (another user's),
 *   are counted and skipped, as ps skips what it cannot see.
 * - What the target wrote (the program name, the path) reaches the caller
 *   as untrusted bytes, unescaped: printing them safely is the caller's. */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opts.h"
#include "attach.h"
#include "ocgc/consumer.h"
#include "procfs.h"
#include "source.h"

/* What the ring [src] of [pid] is (e: has_ext, state, err, program). */
static void judge(struct ocgc_list_entry *e, struct ocgc_source *src, char *program, size_t n)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  int err = ocgc_source_info(src, &info);
  e->src = src;
  if (err != 0) {
    e->state = OCGC_LIST_UNREADABLE;
    e->err = err;
    return;
  }
  e->has_ext = info.has_ext;
  if (!info.has_ext) return; /* found in its maps just now: running */
  memcpy(program, info.program, sizeof info.program < n ? sizeof info.program : n);
  program[n - 1] = '\0';
  err = ocgc_source_check_owner(src, e->pid);
  if (err == OCGC_E_STALE)
    e->state = info.state == OCGC_STATE_EXITED ? OCGC_LIST_EXITED : OCGC_LIST_STALE;
  else if (err != 0) {
    e->state = OCGC_LIST_UNREADABLE;
    e->err = err;
  }
}

/* Count a process ocgc_open_ring() could not list.  -ENOMEM ends the
 * listing; the rest skip the process. */
static int skipped(int err, struct ocgc_list_stats *st)
{
  if (err == -ENOMEM) return err;
  if (err == -ESRCH) st->vanished++;
  else if (err == -EACCES || err == -EPERM) st->denied++;
  else if (err != OCGC_E_NORING) st->failed++;
  return 0;
}

/* List [pid] if it maps a ring: 1 if the callback asked to stop, 0, or
 * -ENOMEM. */
static int list_one(int pid, const struct ocgc_list_opts *o, ocgc_list_fn fn, void *ctx,
                    struct ocgc_list_stats *st)
{
  struct ocgc_list_entry e;
  struct ocgc_proc_ident before, after;
  struct ocgc_source *src = NULL;
  char path[PATH_MAX], program[128];
  struct stat fst;
  int fd, err, stop;

  if ((err = ocgc_proc_ident(pid, &before)) != 0) return skipped(err, st);
  if (o->skip != NULL && o->skip(pid, before.start_time, ctx)) return 0;
  if ((fd = ocgc_open_ring(pid, path, sizeof path)) < 0) {
    if ((fd == -EACCES || fd == -EPERM) && o->denied != NULL) o->denied(pid, before.start_time, ctx);
    return skipped(fd, st);
  }
  err = ocgc_proc_ident(pid, &after);
  if (err == 0 && after.start_time != before.start_time) err = -ESRCH;
  if (err == 0 && fstat(fd, &fst) != 0) err = -errno;
  if (err != 0) {
    close(fd);
    return skipped(err, st);
  }
  memset(&e, 0, sizeof e);
  e.pid = pid;
  e.start_time = after.start_time;
  e.path = path;
  e.dev = (uint64_t)fst.st_dev;
  e.ino = (uint64_t)fst.st_ino;
  e.program = program;
  ocgc_proc_comm(pid, program, sizeof program); /* stock files: all there is */
  err = ocgc_source_open_fd(fd, NULL, &src); /* takes fd */
  if (err == -ENOMEM) return err;
  if (err != 0) {
    e.state = OCGC_LIST_UNREADABLE;
    e.err = err;
  } else {
    ocgc_source_set_owner(src, pid, 1, after.start_time);
    judge(&e, src, program, sizeof program);
  }
  st->listed++;
  stop = fn(&e, ctx);
  ocgc_source_close(src);
  return stop != 0;
}

int ocgc_list(ocgc_list_fn fn, void *ctx, struct ocgc_list_stats *stats)
{
  return ocgc_list_opts(NULL, fn, ctx, stats);
}

int ocgc_list_opts(const struct ocgc_list_opts *opts, ocgc_list_fn fn, void *ctx,
                   struct ocgc_list_stats *stats)
{
  struct ocgc_list_opts o = OCGC_OPTS_INIT(struct ocgc_list_opts);
  struct ocgc_list_stats st = OCGC_OPTS_INIT(struct ocgc_list_stats);
  struct dirent *de;
  DIR *d;
  int err = 0;

  memset(&st, 0, sizeof st);
  st.sz = sizeof st;
  if (stats != NULL && stats->sz < sizeof stats->sz) return -EINVAL;
  if (stats != NULL) (void)opts_write(stats, &st, sizeof st);
  if (fn == NULL || opts_read(&o, sizeof o, opts) != 0) return -EINVAL;
  if ((d = opendir("/proc")) == NULL) return -errno;
  while (err == 0 && (de = readdir(d)) != NULL) {
    int pid = ocgc_proc_pid_name(de->d_name);
    if (pid == 0) continue;
    st.processes++;
    err = list_one(pid, &o, fn, ctx, &st);
  }
  closedir(d);
  if (stats != NULL) (void)opts_write(stats, &st, sizeof st);
  if (err < 0) return err;
  return st.listed > INT_MAX ? INT_MAX : (int)st.listed;
}
