/* ls.c - `ocgc ls`: the processes on this host that ocgc can attach to,
 * and the ring files left behind by processes that are gone, as libocgc's
 * ring scan finds and judges them (ocgc/rings.h: the passes, the states,
 * the prune rule).
 *
 * What it owns: its options, the printing (a table sorted by pid then
 * path, or a JSON object a line, every target string escaped) and the act
 * of asking: --prune removes what the library calls removable
 * (ocgc_ring_remove: moved aside, judged again, unlinked or put back), and
 * says on stderr what it removed, and why it kept what looked gone.
 *
 * Other users' processes whose maps we may not read, and their ring
 * folders, are not listed (`ocgc ls` run as root sees them), but not left
 * out silently: one line on stderr says how many of each the library
 * could not look into (ocgc_rings_unseen) and why.  How many rings they
 * hold cannot be told from here, so the line does not pretend to.  A
 * caller with every privilege (root) is told nothing: what even it may not
 * read (a sandbox's init) running as root would not change. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "json.h"

#define MAX_DIRS 64

static void note_rc(int *rc, int code)
{
  if (*rc == 0) *rc = code;
}

/* A --dir that cannot be read (ocgc_rings_opts.dir_error). */
static void on_dir_error(const char *dir, int err, void *ctx)
{
  char esc[TOOL_ESC_SIZE(PATH_MAX)];
  tool_say("%s: %s", tool_esc(dir, esc, sizeof esc), strerror(-err));
  note_rc(ctx, err == -ENOENT || err == -ENOTDIR ? TOOL_EXIT_NOTFOUND
              : err == -EACCES ? TOOL_EXIT_DENIED : TOOL_EXIT_ERROR);
}

/* ---- --prune -------------------------------------------------------------------- */

/* Say why an entry that looked gone is kept. */
static void say_kept(const struct ocgc_ring *e)
{
  char path[TOOL_ESC_SIZE(PATH_MAX)];
  tool_esc(e->path, path, sizeof path);
  if (e->kept == OCGC_KEPT_MEMFD)
    tool_say("keeping %s: process %d maps the memory ring ocgc:%d.events "
             "(pid %d of another pid namespace?)",
             path, e->mapped_by, e->pid, e->pid);
  else
    tool_say("keeping %s: process %d maps %s", path, e->mapped_by,
             e->link ? "what it leads to" : "it");
}

/* Prune what the scan calls removable; [removed] marks what is gone. */
static void prune(const struct ocgc_rings *r, char *removed, int *rc)
{
  char path[TOOL_ESC_SIZE(PATH_MAX)]; /* e->path, escaped, for messages */
  char aside[PATH_MAX];
  size_t i;
  int herr;
  /* Unless every process's maps was read, any file may be in use. */
  if (!ocgc_rings_host_complete(r, &herr)) {
    if (herr != 0)
      tool_say("not pruning: cannot read the memory maps in /proc: %s", strerror(-herr));
    else
      tool_say("not pruning: the memory maps of this host are too many to "
               "read them all, so any file may be in use");
    note_rc(rc, TOOL_EXIT_ERROR);
    return;
  }
  for (i = 0; i < ocgc_rings_count(r); i++) {
    const struct ocgc_ring *e = ocgc_rings_get(r, i);
    int err;
    if (e->looks_gone && e->kept != OCGC_KEPT_NO) say_kept(e);
    if (e->looks_gone && e->kept == OCGC_KEPT_NO && e->uid != (int64_t)getuid())
      tool_say("not removing %s: it belongs to uid %" PRId64 ", not to you",
               tool_esc(e->path, path, sizeof path), e->uid);
    if (!e->removable) continue;
    if ((err = ocgc_ring_remove(e, aside, sizeof aside)) == 0) {
      tool_say("removed %s (process %d, %s)", tool_esc(e->path, path, sizeof path), e->pid,
               ocgc_ring_state_name(e->state));
      removed[i] = 1;
    } else if (err == 2) {
      char esc2[TOOL_ESC_SIZE(PATH_MAX)];
      tool_say("%s: a new file took the name while pruning; it is now %s",
               tool_esc(e->path, path, sizeof path), tool_esc(aside, esc2, sizeof esc2));
    } else if (err < 0) {
      tool_say("cannot remove %s: %s", tool_esc(e->path, path, sizeof path), strerror(-err));
      note_rc(rc, err == -EACCES || err == -EPERM ? TOOL_EXIT_DENIED : TOOL_EXIT_ERROR);
    }
  }
}

/* ---- what could not be seen ------------------------------------------------------ */

/* One line on stderr: what the scan could not look into, and why. */
static void say_unseen(const struct ocgc_rings *r)
{
  struct ocgc_rings_unseen u = OCGC_OPTS_INIT(struct ocgc_rings_unseen);
  const char *ps;
  if (ocgc_rings_unseen(r, &u) != 0 || (u.processes == 0 && u.folders == 0)) return;
  ps = u.processes == 1 ? "" : "es";
  /* Root's own limits (a process of another user namespace, a sandbox's
   * init) are not the user's to lift: root is told nothing, as before. */
  if (u.folders == 0 && ocgc_sees_every_user()) return;
  if (u.folders == 0)
    tool_say("rings of other users, if any, not shown: the memory map%s of %" PRIu64
             " process%s %s private (run as root to see them)",
             u.processes == 1 ? "" : "s", u.processes, ps, u.processes == 1 ? "is" : "are");
  else if (u.processes == 0)
    tool_say("rings of other users not shown: %" PRIu64 " ring folder%s of theirs %s private "
             "(run as root to see them)",
             u.folders, u.folders == 1 ? "" : "s", u.folders == 1 ? "is" : "are");
  else
    tool_say("rings of other users not shown: %" PRIu64 " ring folder%s of theirs %s private, "
             "and so %s of %" PRIu64 " process%s (run as root to see them)",
             u.folders, u.folders == 1 ? "" : "s", u.folders == 1 ? "is" : "are",
             u.processes == 1 ? "is the memory map" : "are the memory maps", u.processes, ps);
}

/* ---- printing --------------------------------------------------------------------- */

static void print_table(const struct ocgc_rings *r, const char *removed)
{
  size_t i;
  printf("%7s %-16s %-7s %-7s %8s %12s %-7s %s\n", "PID", "PROGRAM", "OCAML", "OCGC",
         "RING_KiB", "WRITTEN", "STATE", "PATH");
  for (i = 0; i < ocgc_rings_count(r); i++) {
    const struct ocgc_ring *e = ocgc_rings_get(r, i);
    char pid[16], ring[24], written[24];
    char program[TOOL_ESC_SIZE(sizeof e->program)], ocaml[TOOL_ESC_SIZE(sizeof e->ocaml)];
    char ocgc[TOOL_ESC_SIZE(sizeof e->ocgc)], path[TOOL_ESC_SIZE(PATH_MAX)];
    if (removed[i]) continue;
    if (e->pid > 0) snprintf(pid, sizeof pid, "%d", e->pid);
    else snprintf(pid, sizeof pid, "-");
    if (e->has_info) snprintf(ring, sizeof ring, "%" PRIu64, e->ring_bytes / 1024);
    else snprintf(ring, sizeof ring, "-");
    if (e->have_written) snprintf(written, sizeof written, "%" PRIu64, e->written);
    else snprintf(written, sizeof written, "-");
    printf("%7s %-16s %-7s %-7s %8s %12s %-7s %s\n", pid,
           tool_esc(e->program, program, sizeof program), tool_esc(e->ocaml, ocaml, sizeof ocaml),
           tool_esc(e->ocgc, ocgc, sizeof ocgc), ring, written, ocgc_ring_state_name(e->state),
           tool_esc(e->path, path, sizeof path));
  }
}

/* A string field, or null for "-" (unknown). */
static void str_or_null(struct json *j, const char *key, const char *s)
{
  json_kv_str(j, key, strcmp(s, "-") == 0 ? NULL : s);
}

/* One JSON object a line and an entry. */
static void print_json(const struct ocgc_rings *r, const char *removed)
{
  struct json j;
  size_t i;
  json_init_file(&j, stdout, 0);
  for (i = 0; i < ocgc_rings_count(r); i++) {
    const struct ocgc_ring *e = ocgc_rings_get(r, i);
    if (removed[i]) continue;
    json_obj(&j, JSON_INLINE);
    json_kv_u64_or_null(&j, "pid", e->pid > 0, (uint64_t)e->pid);
    str_or_null(&j, "program", e->program);
    str_or_null(&j, "ocaml", e->ocaml);
    str_or_null(&j, "ocgc", e->ocgc);
    json_kv_u64_or_null(&j, "ring_bytes", e->has_info, e->ring_bytes);
    json_kv_u64_or_null(&j, "written", e->have_written, e->written);
    json_kv_str(&j, "state", ocgc_ring_state_name(e->state));
    json_kv_str(&j, "code", !e->has_ext ? NULL : e->native ? "native" : "bytecode");
    json_kv_bool(&j, "mapped", e->mapped || e->kept == OCGC_KEPT_FILE);
    json_kv_u64_or_null(&j, "mapped_by", e->mapped_by > 0, (uint64_t)e->mapped_by);
    json_kv_u64_or_null(&j, "uid", e->uid >= 0, (uint64_t)e->uid);
    json_kv_str(&j, "path", e->path);
    json_obj_end(&j);
    json_raw(&j, "\n");
  }
}

static void ls_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc ls [--json] [--prune] [--dir DIR]... [--no-default-dirs]\n\n"
          "List the processes on this host that ocgc can attach to (those whose\n"
          "memory map holds a ring, in any folder), and the ring files that\n"
          "processes which are gone left in the ring folders: yours by default\n"
          "($XDG_RUNTIME_DIR/ocgc, /dev/shm/ocgc-UID, /tmp/ocgc-UID) and each --dir.\n"
          "With --no-default-dirs, only what the --dir folders hold: their files,\n"
          "and the live processes whose ring is one of them.\n"
          "Other users' processes are listed only when you may read their memory\n"
          "map (as root); else one line on stderr says how many processes and\n"
          "ring folders of other users could not be looked into.\n\n"
          "Columns: PID, PROGRAM, OCAML (the producer's OCaml version; 5 for a\n"
          "stock OCaml 5 file), OCGC (the producer's ocgc version, - for stock\n"
          "files), RING_KiB (ring size), WRITTEN (events written so far), STATE, PATH.\n"
          "STATE is running (attachable), exited (it exited; the file was kept),\n"
          "stale (killed, or its pid now names another process), stock (an OCaml 5\n"
          "file no live process maps: it says nothing of its process), mapped (its\n"
          "pid says gone, but a process maps the file, or what the link leads to:\n"
          "a reader, or a producer in another pid namespace), foreign (a link\n"
          "PID.events that leads nowhere from here while a process maps the memory\n"
          "ring ocgc:PID.events: a producer whose pid PID is another namespace's),\n"
          "corrupt or denied (the file cannot be read).\n\n"
          "  --json             one JSON object per line and per file instead\n"
          "  --prune            remove the exited and stale files that belong to you,\n"
          "                     and your links that lead nowhere (never a file any\n"
          "                     process on the host maps, whatever its pid says,\n"
          "                     never a mapped or foreign entry, never a stock\n"
          "                     file); says on stderr what it removed and kept\n"
          "  --dir DIR          look in DIR too (OCAML_RUNTIME_EVENTS_DIR); repeatable\n"
          "  --no-default-dirs  list only the rings in the --dir folders (live\n"
          "                     processes whose ring is elsewhere are left out)\n"
          "  --help             this text\n\n"
          "Exit status 0, also when nothing is found (then the table has only its\n"
          "header); 5 when --prune removed nothing because it could not read the\n"
          "memory maps of the host (all of them, within its bounds).\n");
}

struct ls_opts {
  int json, prune, no_defaults;
  const char *dirs[MAX_DIRS];
  unsigned ndirs;
};

/* The options into *o: 0, or the exit code. */
static int parse_args(int argc, char **argv, struct ls_opts *o)
{
  static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"prune", no_argument, NULL, 'p'},
    {"dir", required_argument, NULL, 'd'},
    {"no-default-dirs", no_argument, NULL, 'n'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt;
  memset(o, 0, sizeof *o);
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'j': o->json = 1; break;
    case 'p': o->prune = 1; break;
    case 'n': o->no_defaults = 1; break;
    case 'd':
      if (o->ndirs == MAX_DIRS) return tool_usage_error("at most %d --dir", MAX_DIRS);
      o->dirs[o->ndirs++] = optarg;
      break;
    case 'h': ls_usage(stdout); exit(0);
    default: ls_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (optind != argc)
    return tool_usage_error("takes no operand ('%s'); 'ocgc ls --help' tells more",
                            argv[optind]);
  if (o->no_defaults && o->ndirs == 0)
    return tool_usage_error("--no-default-dirs lists only the --dir folders: name one with "
                            "--dir DIR");
  return 0;
}

int cmd_ls(int argc, char **argv)
{
  struct ocgc_rings_opts ro = OCGC_OPTS_INIT(struct ocgc_rings_opts);
  struct ls_opts o;
  struct ocgc_rings *r = NULL;
  char *removed = NULL;
  int err, rc = 0;
  if ((err = parse_args(argc, argv, &o)) != 0) return err;
  ro.dirs = o.dirs;
  ro.ndirs = o.ndirs;
  ro.no_default_dirs = o.no_defaults;
  ro.dir_error = on_dir_error;
  ro.ctx = &rc;
  if ((err = ocgc_rings_scan(&ro, &r)) == 0 &&
      (removed = calloc(ocgc_rings_count(r) + 1, 1)) == NULL)
    err = -ENOMEM;
  if (err != 0) {
    tool_say("%s", strerror(-err));
    note_rc(&rc, TOOL_EXIT_ERROR);
  } else {
    if ((err = ocgc_rings_proc_error(r)) != 0) {
      tool_say("/proc: %s (is /proc mounted?)", strerror(-err));
      note_rc(&rc, TOOL_EXIT_ERROR);
    }
    say_unseen(r);
    if (o.prune) prune(r, removed, &rc);
    if (o.json) print_json(r, removed);
    else print_table(r, removed);
    fflush(stdout);
    if (ferror(stdout)) note_rc(&rc, TOOL_EXIT_ERROR);
  }
  free(removed);
  ocgc_rings_free(r);
  return rc;
}
