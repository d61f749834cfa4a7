/* serve_privs.c - `ocgc serve --run-as USER` (serve.h): once the listening
 * socket is bound and before any target is read, the process becomes
 * USER (its group and supplementary groups too) keeping, of all its
 * capabilities, only the two that reading other users' rings needs, and
 * can never gain any back.
 *
 * Invariants, once serve_privs_drop() returned 0 (and checked there, from
 * the kernel's own view, before it returns):
 * - real, effective, saved and file-system uid and gid are USER's, the
 *   supplementary groups USER's (initgroups);
 * - the permitted and effective sets are SERVE_PRIVS_KEEP, less any of
 *   the two the process did not hold to begin with; the inheritable and
 *   ambient sets are empty, so nothing passes to a child;
 * - the bounding set is SERVE_PRIVS_KEEP where the process could lower
 *   it (CAP_SETPCAP; a service manager that gives less has lowered it
 *   itself), and PR_SET_NO_NEW_PRIVS is set: no execve (a set-user-ID
 *   program, file capabilities) gives anything back;
 * - it runs on the only thread there is (capabilities are per thread:
 *   every thread serve starts later inherits these).
 *
 * Why these two (tried as uid 65534 on Linux 6.18 against a root
 * process holding a 0600 memfd mapped shared, as ocgc's runtime does; and
 * tests/serve/serve_unit.sh, serve_runas.sh): /proc/PID/maps wants
 * CAP_SYS_PTRACE (the ptrace access check); listing /proc/PID/fd wants
 * CAP_DAC_READ_SEARCH (the folder is 0500 root's), opening the ring
 * through /proc/PID/fd/N wants both (the link's ptrace check, the file's
 * 0600 mode), as do OCaml 5's 0600 rings in 0700 folders.
 * /proc/PID/map_files wants CAP_SYS_ADMIN (CAP_CHECKPOINT_RESTORE) on top:
 * not kept, libocgc falls back to /proc/PID/fd.  CAP_DAC_OVERRIDE adds
 * nothing to reads, and nothing of theirs is written.  libcap is not used: the raw
 * capget/capset system calls, with <linux/capability.h>. */

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "serve.h"

#define CAP_BIT(c) (UINT64_C(1) << (c))
#define SERVE_PRIVS_KEEP (CAP_BIT(CAP_SYS_PTRACE) | CAP_BIT(CAP_DAC_READ_SEARCH))

int serve_privs_parse(const char *user, struct serve_privs *p)
{
  struct passwd pw, *got = NULL;
  char buf[4096], *end;
  unsigned long v;
  memset(p, 0, sizeof *p);
  if (getpwnam_r(user, &pw, buf, sizeof buf, &got) == 0 && got != NULL) {
    p->uid = (unsigned)pw.pw_uid;
    p->gid = (unsigned)pw.pw_gid;
    snprintf(p->name, sizeof p->name, "%s", pw.pw_name);
    p->named = 1;
    p->given = 1;
    return 0;
  }
  /* A number with no entry: its own number as group, no other groups. */
  v = strtoul(user, &end, 10);
  if (*user < '0' || *user > '9' || *end != '\0' || v == 0 || v > 0x7fffffffu) return -1;
  p->uid = p->gid = (unsigned)v;
  snprintf(p->name, sizeof p->name, "%s", user);
  p->given = 1;
  return 0;
}

/* The process's capability sets (version 3: 64 bits each). */
struct caps { uint64_t eff, prm, inh; };

static int caps_get(struct caps *c)
{
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof d);
  if (syscall(SYS_capget, &h, d) != 0) return -errno;
  c->eff = (uint64_t)d[1].effective << 32 | d[0].effective;
  c->prm = (uint64_t)d[1].permitted << 32 | d[0].permitted;
  c->inh = (uint64_t)d[1].inheritable << 32 | d[0].inheritable;
  return 0;
}

static int caps_set(const struct caps *c)
{
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  d[0].effective = (uint32_t)c->eff;
  d[1].effective = (uint32_t)(c->eff >> 32);
  d[0].permitted = (uint32_t)c->prm;
  d[1].permitted = (uint32_t)(c->prm >> 32);
  d[0].inheritable = (uint32_t)c->inh;
  d[1].inheritable = (uint32_t)(c->inh >> 32);
  return syscall(SYS_capset, &h, d) == 0 ? 0 : -errno;
}

/* Lower the bounding set to [keep], where it may (CAP_SETPCAP): 0, or -1
 * if a capability outside [keep] stays in it for want of CAP_SETPCAP
 * (harmless under PR_SET_NO_NEW_PRIVS, which is set after). */
static int bound_to(uint64_t keep)
{
  int c, rest = 0;
  for (c = 0; c <= 63; c++) {
    int in = prctl(PR_CAPBSET_READ, (unsigned long)c, 0, 0, 0);
    if (in < 0) break; /* past the last capability this kernel knows */
    if (in == 0 || (keep & CAP_BIT(c))) continue;
    if (prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) != 0) rest = -1;
  }
  return rest;
}

/* The kernel's view of what serve_privs_drop() did: 0, or -1 after a line. */
static int check(const struct serve_privs *p, uint64_t keep)
{
  struct caps now;
  uid_t r, e, s;
  gid_t gr, ge, gs;
  if (getresuid(&r, &e, &s) != 0 || r != p->uid || e != p->uid || s != p->uid ||
      getresgid(&gr, &ge, &gs) != 0 || gr != p->gid || ge != p->gid || gs != p->gid) {
    tool_say("--run-as %s: the user or group did not change", p->name);
    return -1;
  }
  if (caps_get(&now) != 0 || now.eff != keep || now.prm != keep || now.inh != 0) {
    tool_say("--run-as %s: capabilities other than CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH remain",
             p->name);
    return -1;
  }
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
    tool_say("--run-as %s: no_new_privs is not set", p->name);
    return -1;
  }
  /* The last word: uid 0 cannot be had back (unless USER is root). */
  if (p->uid != 0 && setuid(0) == 0) {
    tool_say("--run-as %s: uid 0 could be taken back", p->name);
    return -1;
  }
  return 0;
}

int serve_privs_drop(const struct serve_privs *p)
{
  struct caps had, want;
  uint64_t keep;
  int err;
  if ((err = caps_get(&had)) != 0) {
    tool_say("--run-as %s: cannot read this process's capabilities: %s", p->name, strerror(-err));
    return -1;
  }
  /* Only what it held: one of the two that is missing stays missing (and
   * ocgc_serve_sees_every_user says so). */
  keep = had.prm & SERVE_PRIVS_KEEP;
  (void)bound_to(keep);
  /* Keep the permitted set across the change of uid (which would empty
   * it), and pass nothing to children. */
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 ||
      prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    tool_say("--run-as %s: cannot keep capabilities across the change of user: %m", p->name);
    return -1;
  }
  if ((p->named ? initgroups(p->name, (gid_t)p->gid) : setgroups(0, NULL)) != 0 ||
      setresgid((gid_t)p->gid, (gid_t)p->gid, (gid_t)p->gid) != 0 ||
      setresuid((uid_t)p->uid, (uid_t)p->uid, (uid_t)p->uid) != 0) {
    tool_say("--run-as %s: cannot become that user: %m (it needs root, or CAP_SETUID "
             "and CAP_SETGID)", p->name);
    return -1;
  }
  want.eff = want.prm = keep;
  want.inh = 0;
  if ((err = caps_set(&want)) != 0 || prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0 ||
      prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    tool_say("--run-as %s: cannot lower the capabilities: %s", p->name,
             strerror(err ? -err : errno));
    return -1;
  }
  return check(p, keep);
}
