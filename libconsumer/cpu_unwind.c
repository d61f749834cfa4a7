/* cpu_unwind.c - a CPU sample's call stack from its registers and stack
 * copy (ocgc/unwind.h), by libdwfl's unwinder over the CFI of the
 * process's files, with our own callbacks: the modules are ours (each
 * file read by elf_load, the symbolizer's checks, and given to libdwfl as
 * an Elf of that private copy by find_elf), and so is every memory read
 * (the sample's stack copy only, memory_read).
 *
 * Invariants:
 * - libdwfl sees no byte of a file but the copy elf_load made after its
 *   checks (headers, symbol tables, .eh_frame/.eh_frame_hdr/.debug_frame,
 *   within max_read_bytes; no DWARF debug info: no_lines), nor any memory
 *   but [sp, sp + stack_size) of the sample: an address outside it fails
 *   the read, and the frame that needed it ends the stack (LOST);
 * - at most MAX_MODULES files, read at the open, and those the process
 *   maps later (a dlopen) when a stack meets an address of no module: the
 *   maps read again (at most MAX_MAPS_LINES lines) no more than once every
 *   RESCAN_NS, and only while fewer than MAX_MODULES are read; a mapping
 *   is tried once (MAX_MODULES tried at most after the open); modules
 *   never overlap (one that would is left out: its addresses have no
 *   CFI), and none is removed (a file unmapped keeps its CFI); a file
 *   mapped later is opened by its range in /proc/PID/map_files (the
 *   mapped file; the path the maps name is never opened);
 * - a stack holds at most max_depth frames, and each frame's stack
 *   pointer is above the one before (else LOOP): the walk ends, whatever
 *   the copy holds;
 * - the copies (struct elf_loaded) outlive the Dwfl that reads them: freed
 *   after dwfl_end().  An Elf given to libdwfl by find_elf is libdwfl's
 *   (it calls elf_end), one never asked for is ours. */

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi_check.h"
#include "elfimage.h"
#include "elfload.h"
#include "mapsline.h"
#include "ocgc/unwind.h"
#include "opts.h"
#include "procfs.h"
#include "symbols_files.h"

#define MAX_MODULES 64u
#define MAX_MAPS_LINES 65536u
#define RESCAN_NS UINT64_C(100000000) /* 100 ms: at most 10 maps reads a second */

struct module {
  struct elf_loaded ld;
  Elf *elf;
  int given; /* find_elf handed elf to libdwfl */
  uint64_t low, high;
};

struct ocgc_unwind {
  Dwfl *dwfl;
  int pid;
  uint64_t start_time;  /* the process's (0: not checked) */
  struct elf_bounds b;  /* each file's */
  uint64_t last_scan_ns; /* the maps' latest reading */
  struct { uint64_t start, end; } tried[MAX_MODULES]; /* mappings tried after the open */
  unsigned ntried;
  unsigned max_depth;
  struct module mods[MAX_MODULES];
  unsigned nmods;
  int attached;
  /* the sample being unwound, and the walk's state */
  const struct ocgc_cpu_sample *cur;
  struct ocgc_unwind_stack *out;
  uint64_t last_sp;
};

static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                    char **file_name, Elf **elfp)
{
  struct module *m = *userdata;
  (void)mod;
  (void)name;
  (void)base;
  *file_name = NULL;
  *elfp = NULL;
  if (m == NULL || m->elf == NULL || m->given) return -1;
  m->given = 1;
  *elfp = m->elf;
  return -1;
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                          GElf_Addr base, const char *file_name, const char *debuglink_file,
                          GElf_Word debuglink_crc, char **debuginfo_file_name)
{
  (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
  (void)debuglink_file, (void)debuglink_crc;
  *debuginfo_file_name = NULL;
  return -1; /* no other file is opened */
}

static const Dwfl_Callbacks dwfl_cbs = {
    .find_elf = find_elf,
    .find_debuginfo = find_debuginfo,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
  struct ocgc_unwind *u = arg;
  (void)dwfl;
  if (*thread_argp != NULL || u->cur == NULL) return 0;
  *thread_argp = u;
  return u->cur->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
  struct ocgc_unwind *u = arg;
  (void)dwfl;
  if (u->cur == NULL || tid != u->cur->tid) return false;
  *thread_argp = u;
  return true;
}

/* Only the sample's stack copy: the live process is never read. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
  struct ocgc_unwind *u = arg;
  const struct ocgc_cpu_sample *s = u->cur;
  uint64_t sp;
  (void)dwfl;
  if (s == NULL || s->stack == NULL) return false;
  sp = s->regs[OCGC_CPU_REG_SP];
  if (addr < sp || addr - sp > s->stack_size || s->stack_size - (addr - sp) < sizeof *result)
    return false;
  memcpy(result, s->stack + (addr - sp), sizeof *result);
  return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
  struct ocgc_unwind *u = arg;
  Dwarf_Word regs[OCGC_CPU_NREGS];
  unsigned i;
  for (i = 0; i < OCGC_CPU_NREGS; i++) regs[i] = u->cur->regs[i];
  if (!dwfl_thread_state_registers(thread, 0, OCGC_CPU_NREGS, regs)) return false;
  dwfl_thread_state_register_pc(thread, u->cur->regs[OCGC_CPU_REG_IP]);
  return true;
}

static const Dwfl_Thread_Callbacks thread_cbs = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/* Make the copy's CFI what libdw may read: libdw finds an .eh_frame
 * through PT_GNU_EH_FRAME (whose table may name any offset as an FDE) or
 * else by section name, with .eh_frame_hdr's table (idem).  So the
 * program header is made PT_NULL and .eh_frame_hdr SHT_NOBITS (libdw then
 * reads the .eh_frame in order, the entries cfi_check walked), and if a
 * section named .eh_frame or .debug_frame fails cfi_check, every one of
 * them is made SHT_NOBITS: the file has no CFI (all or none).  -1: a file
 * this cannot make safe (not ELF64 little-endian, more than 8 such
 * sections): left out. */
static int cfi_sanitize(struct elf_loaded *ld)
{
  Elf *e = elf_memory((char *)ld->image, ld->size);
  GElf_Ehdr eh;
  GElf_Shdr sh;
  GElf_Phdr ph;
  Elf_Scn *scn = NULL;
  size_t shstrndx, nph, i;
  uint64_t cfi_secs[8];
  unsigned ncfi = 0, bad = 0;
  if (e == NULL) return -1;
  if (gelf_getehdr(e, &eh) == NULL || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || elf_getshdrstrndx(e, &shstrndx) != 0 ||
      elf_getphdrnum(e, &nph) != 0) {
    elf_end(e);
    return -1;
  }
  for (i = 0; i < nph; i++)
    if (gelf_getphdr(e, (int)i, &ph) != NULL && ph.p_type == PT_GNU_EH_FRAME &&
        eh.e_phoff + (i + 1) * eh.e_phentsize <= ld->size) {
      uint32_t null = PT_NULL;
      memcpy(ld->image + eh.e_phoff + i * eh.e_phentsize, &null, 4);
    }
  while ((scn = elf_nextscn(e, scn)) != NULL) {
    const char *name;
    int is_eh;
    if (gelf_getshdr(scn, &sh) == NULL || (name = elf_strptr(e, shstrndx, sh.sh_name)) == NULL)
      continue;
    is_eh = strcmp(name, ".eh_frame") == 0;
    if (!is_eh && strcmp(name, ".eh_frame_hdr") != 0 && strcmp(name, ".debug_frame") != 0) continue;
    if (ncfi == sizeof cfi_secs / sizeof cfi_secs[0]) {
      elf_end(e);
      return -1;
    }
    cfi_secs[ncfi++] = elf_ndxscn(scn);
    if (name[1] == 'e' && !is_eh) continue; /* the table: dropped below */
    if (sh.sh_type != SHT_NOBITS &&
        (sh.sh_offset > ld->size || sh.sh_size > ld->size - sh.sh_offset ||
         cfi_check(ld->image + sh.sh_offset, (size_t)sh.sh_size, is_eh) != 0))
      bad = 1;
  }
  /* the section headers' sh_type fields, in the image (elf_load checked
   * the table is within it) */
  for (i = 0; i < ncfi; i++) {
    uint32_t nobits = SHT_NOBITS;
    const char *name;
    if ((scn = elf_getscn(e, cfi_secs[i])) == NULL || gelf_getshdr(scn, &sh) == NULL ||
        (name = elf_strptr(e, shstrndx, sh.sh_name)) == NULL)
      continue;
    if ((bad || strcmp(name, ".eh_frame_hdr") == 0) &&
        eh.e_shoff + (cfi_secs[i] + 1) * eh.e_shentsize <= ld->size)
      memcpy(ld->image + eh.e_shoff + cfi_secs[i] * eh.e_shentsize + 4, &nobits, 4);
  }
  elf_end(e);
  return 0;
}

/* Read the file [fd] (closed here) and report it to libdwfl, the mapping
 * [map_start, +off) telling where its loadable segments are; single: the
 * file at its own addresses.  0, or -1: left out (no CFI there). */
static int add_module(struct ocgc_unwind *u, int fd, const struct elf_bounds *b, const char *name,
                      uint64_t map_start, uint64_t map_offset, int single)
{
  struct module *m = &u->mods[u->nmods];
  GElf_Phdr ph;
  size_t nph, i;
  uint64_t bias = 0, low = UINT64_MAX, high = 0;
  int found = single;
  Dwfl_Module *dm;
  void **ud;
  int err = elf_load(fd, b, &m->ld);
  close(fd);
  if (err != 0) return -1;
  if (cfi_sanitize(&m->ld) != 0) {
    elf_unload(&m->ld);
    memset(m, 0, sizeof *m);
    return -1;
  }
  if ((m->elf = elf_memory((char *)m->ld.image, m->ld.size)) == NULL ||
      elf_getphdrnum(m->elf, &nph) != 0)
    goto out;
  for (i = 0; i < nph; i++) {
    if (gelf_getphdr(m->elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD) continue;
    if (!found && map_offset >= ph.p_offset && map_offset - ph.p_offset < ph.p_filesz) {
      bias = map_start - ph.p_vaddr - (map_offset - ph.p_offset);
      found = 1;
    }
    /* libdwfl takes the module's first address as its first segment's,
     * aligned down (its bias is low_addr minus that) */
    if (low == UINT64_MAX)
      low = ph.p_align > 1 && (ph.p_align & (ph.p_align - 1)) == 0 ? ph.p_vaddr & -ph.p_align
                                                                     : ph.p_vaddr;
    if (ph.p_vaddr + ph.p_memsz > high && ph.p_vaddr + ph.p_memsz >= ph.p_vaddr)
      high = ph.p_vaddr + ph.p_memsz;
  }
  if (!found || low == UINT64_MAX || high <= low) goto out;
  m->low = low + bias;
  m->high = high + bias;
  if (m->high <= m->low) goto out;
  for (i = 0; i < u->nmods; i++)
    if (m->low < u->mods[i].high && u->mods[i].low < m->high) goto out;
  if ((dm = dwfl_report_module(u->dwfl, name, m->low, m->high)) == NULL) goto out;
  dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
  *ud = m;
  u->nmods++;
  return 0;
out:
  if (m->elf != NULL) elf_end(m->elf);
  elf_unload(&m->ld);
  memset(m, 0, sizeof *m);
  return -1;
}

int ocgc_unwind_open(struct ocgc_symbols *names, int fd, const struct ocgc_unwind_opts *opts,
                     struct ocgc_unwind **out)
{
  struct ocgc_unwind_opts o;
  struct ocgc_unwind *u;
  struct elf_bounds b;
  const struct ocgc_symbols_mapping *maps;
  uint64_t start_time;
  size_t n, i;
  int err;
  *out = NULL;
  if ((err = opts_read(&o, sizeof o, opts)) != 0) return err;
#if !defined(__x86_64__)
  (void)names;
  (void)fd;
  return -ENOTSUP;
#else
  if (names == NULL || o.max_depth > OCGC_UNWIND_MAX_DEPTH) return -EINVAL;
  if ((u = calloc(1, sizeof *u)) == NULL) return -ENOMEM;
  u->max_depth = o.max_depth ? o.max_depth : OCGC_UNWIND_MAX_DEPTH;
  memset(&b, 0, sizeof b);
  b.max_file_bytes = o.max_file_bytes ? o.max_file_bytes : UINT64_C(4) << 30;
  b.max_read_bytes = o.max_read_bytes ? o.max_read_bytes : UINT64_C(64) << 20;
  b.max_symbols = UINT64_C(1) << 20;
  b.no_lines = 1;
  b.cfi = 1;
  elf_version(EV_CURRENT);
  if ((u->dwfl = dwfl_begin(&dwfl_cbs)) == NULL) {
    free(u);
    return -ENOMEM;
  }
  u->pid = ocgc_symbols_pid(names, &start_time);
  u->start_time = start_time;
  u->b = b;
  dwfl_report_begin(u->dwfl);
  n = ocgc_symbols_mappings(names, &maps);
  if (u->pid == 0) {
    int dfd = fd >= 0 ? dup(fd) : -1;
    if (dfd >= 0) add_module(u, dfd, &b, n > 0 ? maps[0].path : "file", 0, 0, 1);
  } else {
    for (i = 0; i < n && u->nmods < MAX_MODULES; i++) {
      int mfd;
      unsigned j, dup_of = 0;
      for (j = 0; j < u->nmods; j++)
        if (maps[i].start >= u->mods[j].low && maps[i].start < u->mods[j].high) dup_of = 1;
      if (dup_of || (mfd = ocgc_symbols_open_mapping(names, (unsigned)i)) < 0) continue;
      add_module(u, mfd, &b, maps[i].path, maps[i].start, maps[i].offset, 0);
    }
  }
  dwfl_report_end(u->dwfl, NULL, NULL);
  *out = u;
  return 0;
#endif
}

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An executable file mapping of the process that no module covers. */
struct new_map {
  uint64_t start, end, offset;
};

struct scan_ctx {
  struct ocgc_unwind *u;
  struct new_map found[MAX_MODULES];
  unsigned nfound, lines;
};

static int new_line(char *line, void *arg)
{
  struct scan_ctx *c = arg;
  struct ocgc_maps_line l;
  unsigned long off = 0;
  unsigned i;
  if (++c->lines > MAX_MAPS_LINES) return 1;
  /* the offset, read before mapsline.c splits the line in place */
  if (sscanf(line, "%*x-%*x %*s %lx", &off) != 1) return 0;
  if (ocgc_maps_parse_line(line, &l) != 0 || l.perms[2] != 'x' || l.path == NULL ||
      l.path[0] != '/' || l.inode == 0 || l.end <= l.start)
    return 0;
  for (i = 0; i < c->u->nmods; i++)
    if (l.start < c->u->mods[i].high && c->u->mods[i].low < l.end) return 0;
  for (i = 0; i < c->u->ntried; i++)
    if (l.start == c->u->tried[i].start && l.end == c->u->tried[i].end) return 0;
  if (c->nfound + c->u->nmods >= MAX_MODULES || c->nfound + c->u->ntried >= MAX_MODULES) return 1;
  c->found[c->nfound].start = l.start;
  c->found[c->nfound].end = l.end;
  c->found[c->nfound].offset = off;
  c->nfound++;
  return 0;
}

/* Report the files the process mapped since the modules were read (a
 * dlopen), each opened as the symbolizer opens them (map_files: the
 * mapped file, never a path; elf_load's checks).  Returns how many were
 * added. */
static unsigned rescan(struct ocgc_unwind *u)
{
  struct scan_ctx c;
  struct ocgc_proc_ident id;
  char path[96];
  unsigned i, before = u->nmods;
  uint64_t now = mono_ns();
  if (u->pid == 0 || u->nmods >= MAX_MODULES || u->ntried >= MAX_MODULES ||
      (u->last_scan_ns != 0 && now - u->last_scan_ns < RESCAN_NS))
    return 0;
  u->last_scan_ns = now;
  /* the process opened, not another at its pid */
  if (ocgc_proc_ident(u->pid, &id) != 0 || (u->start_time != 0 && id.start_time != u->start_time))
    return 0;
  memset(&c, 0, sizeof c);
  c.u = u;
  if (ocgc_proc_maps_each(u->pid, new_line, &c) < 0 || c.nfound == 0) return 0;
  dwfl_report_begin_add(u->dwfl);
  for (i = 0; i < c.nfound && u->nmods < MAX_MODULES; i++) {
    int fd;
    u->tried[u->ntried].start = c.found[i].start;
    u->tried[u->ntried++].end = c.found[i].end;
    snprintf(path, sizeof path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, u->pid,
             c.found[i].start, c.found[i].end);
    if ((fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) < 0) continue;
    add_module(u, fd, &u->b, path, c.found[i].start, c.found[i].offset, 0);
  }
  dwfl_report_end(u->dwfl, NULL, NULL);
  return u->nmods - before;
}

/* Whether a frame of [st] is at an address of no module. */
static int meets_unknown(struct ocgc_unwind *u, const struct ocgc_unwind_stack *st)
{
  unsigned i;
  for (i = 0; i < st->depth; i++)
    if (dwfl_addrmodule(u->dwfl, st->frames[i] - (i > 0)) == NULL) return 1;
  return 0;
}

static int frame_cb(Dwfl_Frame *f, void *arg)
{
  struct ocgc_unwind *u = arg;
  struct ocgc_unwind_stack *st = u->out;
  Dwarf_Addr pc;
  Dwarf_Word sp;
  bool act;
  if (!dwfl_frame_pc(f, &pc, &act)) {
    st->end = OCGC_UNWIND_LOST;
    return DWARF_CB_ABORT;
  }
  /* a frame's stack pointer is its caller's CFA: it grows, or we loop */
  if (dwfl_frame_reg(f, OCGC_CPU_REG_SP, &sp) == 0) {
    if (st->depth > 0 && sp <= u->last_sp) {
      st->end = OCGC_UNWIND_LOOP;
      return DWARF_CB_ABORT;
    }
    u->last_sp = sp;
  }
  if (st->depth >= u->max_depth) {
    st->end = OCGC_UNWIND_DEPTH;
    return DWARF_CB_ABORT;
  }
  st->frames[st->depth++] = pc;
  return DWARF_CB_OK;
}

/* Whether the CFI of [pc] says its caller's return address is undefined:
 * the outermost frame (_start, clone3).  libdwfl also ends a walk without
 * an error where its fallback (frame pointers) finds a zero frame pointer
 * or a return address it cannot read: that is a stack cut short, not a
 * whole one. */
static int cfi_says_outermost(struct ocgc_unwind *u, Dwarf_Addr pc)
{
  Dwfl_Module *m = dwfl_addrmodule(u->dwfl, pc);
  Dwarf_Addr bias;
  Dwarf_CFI *cfi;
  Dwarf_Frame *fr;
  Dwarf_Op mem[3], *ops;
  size_t nops;
  int ra, yes;
  if (m == NULL) return 0;
  if ((cfi = dwfl_module_eh_cfi(m, &bias)) == NULL && (cfi = dwfl_module_dwarf_cfi(m, &bias)) == NULL)
    return 0;
  if (dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0) return 0;
  ra = dwarf_frame_info(fr, NULL, NULL, NULL);
  yes = ra >= 0 && dwarf_frame_register(fr, ra, mem, &ops, &nops) == 0 && nops == 0 && ops == mem;
  free(fr);
  return yes;
}

static int walk(struct ocgc_unwind *u, const struct ocgc_cpu_sample *s,
                struct ocgc_unwind_stack *out);

int ocgc_unwind_sample(struct ocgc_unwind *u, const struct ocgc_cpu_sample *s,
                       struct ocgc_unwind_stack *out)
{
  int d = walk(u, s, out);
  /* a stack cut at an address no module covers: a file mapped since?
   * (once more at most, and the maps read at most every RESCAN_NS) */
  if (u != NULL && u->attached && out->end == OCGC_UNWIND_LOST && meets_unknown(u, out) &&
      rescan(u) > 0)
    d = walk(u, s, out);
  return d;
}

static int walk(struct ocgc_unwind *u, const struct ocgc_cpu_sample *s,
                struct ocgc_unwind_stack *out)
{
  int rc;
  memset(out, 0, sizeof *out);
  if (u == NULL || s == NULL || !s->regs_known) {
    out->end = OCGC_UNWIND_NO_REGS;
    return 0;
  }
  out->end = OCGC_UNWIND_LOST;
  if (!u->attached) {
    if (u->nmods == 0 || !dwfl_attach_state(u->dwfl, NULL, u->pid ? u->pid : s->pid, &thread_cbs, u)) {
      out->frames[0] = s->regs[OCGC_CPU_REG_IP];
      out->depth = 1;
      return 1;
    }
    u->attached = 1;
  }
  u->cur = s;
  u->out = out;
  u->last_sp = 0;
  out->end = OCGC_UNWIND_OUTERMOST;
  rc = dwfl_getthread_frames(u->dwfl, s->tid, frame_cb, u);
  if (rc == -1 && out->end == OCGC_UNWIND_OUTERMOST) out->end = OCGC_UNWIND_LOST;
  if (out->end == OCGC_UNWIND_OUTERMOST && out->depth > 0 &&
      !cfi_says_outermost(u, out->frames[out->depth - 1] - (out->depth > 1)))
    out->end = OCGC_UNWIND_LOST;
  if (out->depth == 0) {
    out->frames[0] = s->regs[OCGC_CPU_REG_IP];
    out->depth = 1;
    if (out->end == OCGC_UNWIND_OUTERMOST) out->end = OCGC_UNWIND_LOST;
  }
  u->cur = NULL;
  u->out = NULL;
  return (int)out->depth;
}

const char *ocgc_unwind_end_name(enum ocgc_unwind_end end)
{
  switch (end) {
  case OCGC_UNWIND_OUTERMOST: return "outermost";
  case OCGC_UNWIND_LOST: return "lost";
  case OCGC_UNWIND_LOOP: return "loop";
  case OCGC_UNWIND_DEPTH: return "depth";
  case OCGC_UNWIND_NO_REGS: return "no-regs";
  }
  return "unknown";
}

void ocgc_unwind_close(struct ocgc_unwind *u)
{
  unsigned i;
  if (u == NULL) return;
  dwfl_end(u->dwfl);
  for (i = 0; i < u->nmods; i++) {
    if (u->mods[i].elf != NULL && !u->mods[i].given) elf_end(u->mods[i].elf);
    elf_unload(&u->mods[i].ld);
  }
  free(u);
}
