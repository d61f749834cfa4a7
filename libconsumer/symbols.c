/* symbols.c - names for a process's return addresses (ocgc/symbols.h):
 * its executable mappings, read once from /proc/PID/maps, and the ELF
 * file behind each, read (elfimage.c) when an address in it is first
 * asked for.
 *
 * Invariants:
 * - the maps are hostile text, parsed by mapsline.c; nothing they name is
 *   opened: a file is opened only as /proc/PID/exe (the kernel's link to
 *   what the process runs; it is the mapping's file when the kernel gives
 *   both the same device and inode, or the same path, both of its own
 *   writing) or /proc/PID/map_files/START-END (the kernel's link to that
 *   very mapping's file; root only), and opened for reading only once
 *   proved a regular file through an O_PATH descriptor (open_regular);
 * - a file read is kept only if the process is still the one asked for
 *   (pid and start time) when the reading ends: a pid reused by an exec'd
 *   or new program during the read cannot lend us its names;
 * - bounded: at most MAX_MAPPINGS mappings, MAX_IMAGES files, each read
 *   within the bounds of ocgc_symbols_opts, all within max_ns from the
 *   start of the first file's reading (not from the open: a report opens
 *   its names when its window begins and may read them when it ends), and
 *   all its images together holding at most max_process_bytes; a file
 *   that failed is not tried again. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "clock.h"
#include "elfimage.h"
#include "mapsline.h"
#include "ocgc/symbols.h"
#include "opts.h"
#include "procfs.h"
#include "symbols_files.h"

#define MAX_MAPPINGS 4096u
#define MAX_IMAGES 64u
#define MAX_PATH_BYTES 4096u

struct mapping {
  struct ocgc_symbols_mapping pub;
  uint64_t dev, ino;
  unsigned image; /* index in images, or OCGC_SYMBOLS_NONE */
  int tried;
};

struct ocgc_symbols {
  int pid; /* 0: a file of ocgc_symbols_open_elf */
  uint64_t start_time;
  struct elf_bounds b;  /* deadline_ns 0: no file read yet */
  uint64_t max_ns;      /* the time all its files may take, from the first */
  uint64_t max_process_bytes; /* what all its images may hold */
  uint64_t paths_bytes;       /* the mappings' path copies */
  struct mapping *maps;
  size_t nmaps;
  struct ocgc_symbols_mapping *pub; /* the copy ocgc_symbols_mappings returns */
  struct elf_image images[MAX_IMAGES];
  size_t nimages;
  char exe_path[MAX_PATH_BYTES];
  uint64_t exe_dev, exe_ino;
  int exe_known;
};

static int bounds_of(const struct ocgc_symbols_opts *in, struct elf_bounds *b,
                     uint64_t *max_ns, uint64_t *max_process)
{
  struct ocgc_symbols_opts o;
  int err = opts_read(&o, sizeof o, in);
  if (err != 0) return err;
  b->max_file_bytes = o.max_file_bytes ? o.max_file_bytes : UINT64_C(4) << 30;
  b->max_read_bytes = o.max_read_bytes ? o.max_read_bytes : UINT64_C(64) << 20;
  b->max_symbols = o.max_symbols ? o.max_symbols : UINT64_C(1) << 20;
  b->max_lines = o.max_lines ? o.max_lines : UINT64_C(4) << 20;
  b->max_hold_bytes = o.max_names_bytes ? o.max_names_bytes : UINT64_C(48) << 20;
  b->deadline_ns = 0; /* set when the first file is read (start_clock) */
  *max_ns = o.max_ns ? o.max_ns : UINT64_C(10000000000);
  b->no_lines = o.no_lines;
  *max_process = o.max_process_bytes ? o.max_process_bytes : UINT64_C(64) << 20;
  return 0;
}

static int read_now_of(const struct ocgc_symbols_opts *in)
{
  struct ocgc_symbols_opts o;
  return opts_read(&o, sizeof o, in) == 0 && o.read_now;
}

struct maps_ctx {
  struct ocgc_symbols *s;
  int err;
};

static int keep_line(char *line, void *arg)
{
  struct maps_ctx *c = arg;
  struct ocgc_symbols *s = c->s;
  struct ocgc_maps_line l;
  struct mapping *m;
  char *path;
  unsigned long off = 0;
  /* mapsline.c keeps no file offset: the third field, read before the
   * line is split in place. */
  if (sscanf(line, "%*x-%*x %*s %lx", &off) != 1) return 0;
  if (ocgc_maps_parse_line(line, &l) != 0 || l.perms[2] != 'x' || l.path == NULL ||
      l.path[0] != '/' || l.inode == 0)
    return 0;
  if (s->nmaps >= MAX_MAPPINGS) return 1;
  if ((path = strndup(l.path, MAX_PATH_BYTES - 1)) == NULL) {
    c->err = -ENOMEM;
    return 1;
  }
  s->paths_bytes += strlen(path) + 1;
  m = &s->maps[s->nmaps++];
  memset(m, 0, sizeof *m);
  m->pub.start = l.start;
  m->pub.limit = l.end;
  m->pub.path = path;
  m->pub.build_id = "";
  m->dev = makedev(l.dev_major, l.dev_minor);
  m->ino = l.inode;
  m->image = OCGC_SYMBOLS_NONE;
  m->pub.offset = off;
  return 0;
}

static void load(struct ocgc_symbols *s, struct mapping *m);

static void exe_identity(struct ocgc_symbols *s)
{
  char path[64];
  struct stat st;
  ssize_t n;
  snprintf(path, sizeof path, "/proc/%d/exe", s->pid);
  if (stat(path, &st) == 0) {
    s->exe_dev = st.st_dev;
    s->exe_ino = st.st_ino;
    s->exe_known = 1;
  }
  n = readlink(path, s->exe_path, sizeof s->exe_path - 1);
  s->exe_path[n > 0 ? n : 0] = '\0';
}

int ocgc_symbols_open_pid(int pid, uint64_t start_time, const struct ocgc_symbols_opts *opts,
                          struct ocgc_symbols **out)
{
  struct ocgc_symbols *s;
  struct maps_ctx c;
  struct ocgc_proc_ident id;
  size_t i;
  int err;
  if (out == NULL || pid <= 0) return -EINVAL;
  *out = NULL;
  if ((s = calloc(1, sizeof *s)) == NULL) return -ENOMEM;
  if ((err = bounds_of(opts, &s->b, &s->max_ns, &s->max_process_bytes)) != 0) goto fail;
  s->pid = pid;
  s->start_time = start_time;
  if ((s->maps = calloc(MAX_MAPPINGS, sizeof *s->maps)) == NULL) { err = -ENOMEM; goto fail; }
  c.s = s;
  c.err = 0;
  err = ocgc_proc_maps_each(pid, keep_line, &c);
  if (err > 0) err = 0;
  if (err == 0) err = c.err;
  if (err != 0) goto fail;
  exe_identity(s);
  for (i = 0; i < s->nmaps; i++) {
    struct mapping *m = &s->maps[i];
    m->pub.is_main = (s->exe_known && m->dev == s->exe_dev && m->ino == s->exe_ino) ||
                     (s->exe_path[0] != '\0' && strcmp(m->pub.path, s->exe_path) == 0);
  }
  if (start_time != 0 && (ocgc_proc_ident(pid, &id) != 0 || id.start_time != start_time)) {
    err = OCGC_E_STALE;
    goto fail;
  }
  if (read_now_of(opts))
    for (i = 0; i < s->nmaps; i++)
      if (!s->maps[i].tried) load(s, &s->maps[i]);
  *out = s;
  return 0;
fail:
  ocgc_symbols_close(s);
  return err;
}

int ocgc_symbols_open_elf(int fd, const char *name, const struct ocgc_symbols_opts *opts,
                          struct ocgc_symbols **out)
{
  struct ocgc_symbols *s;
  struct mapping *m;
  int err;
  if (out == NULL) return -EINVAL;
  *out = NULL;
  if ((s = calloc(1, sizeof *s)) == NULL) return -ENOMEM;
  if ((err = bounds_of(opts, &s->b, &s->max_ns, &s->max_process_bytes)) != 0) goto fail;
  s->b.deadline_ns = cm_mono_ns() + s->max_ns;
  if ((s->maps = calloc(1, sizeof *s->maps)) == NULL) { err = -ENOMEM; goto fail; }
  if ((err = elf_image_read(fd, &s->b, &s->images[0])) != 0) goto fail;
  s->nimages = 1;
  s->nmaps = 1;
  m = &s->maps[0];
  m->pub.start = 0;
  m->pub.limit = UINT64_MAX;
  m->pub.offset = 0;
  if ((m->pub.path = strdup(name ? name : "")) == NULL) { err = -ENOMEM; goto fail; }
  m->pub.build_id = s->images[0].build_id;
  m->pub.read = 1;
  m->pub.has_functions = s->images[0].nfuncs > 0;
  m->pub.has_lines = s->images[0].nlines > 0;
  m->pub.is_main = 1;
  m->image = 0;
  m->tried = 1;
  *out = s;
  return 0;
fail:
  ocgc_symbols_close(s);
  return err;
}

/* [path] (a kernel link of /proc) opened for reading only once it is
 * proved a regular file: O_PATH first (it opens nothing: no driver's open,
 * no FIFO's wait), fstat(), and only then a real open through
 * /proc/self/fd of that very file, checked to be it.  A device, FIFO or
 * socket a target mapped is never opened. */
static int open_regular(const char *path)
{
  char self[64];
  struct stat a, b;
  int pfd = open(path, O_PATH | O_CLOEXEC), fd = -1;
  if (pfd < 0) return -1;
  if (fstat(pfd, &a) == 0 && S_ISREG(a.st_mode)) {
    snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
    fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0 && (fstat(fd, &b) != 0 || !S_ISREG(b.st_mode) || b.st_dev != a.st_dev ||
                    b.st_ino != a.st_ino)) {
      close(fd);
      fd = -1;
    }
  }
  close(pfd);
  return fd;
}

/* Open the file of mapping [m] as the kernel names it, never by its path. */
static int open_mapped(struct ocgc_symbols *s, const struct mapping *m)
{
  char path[96];
  if (m->pub.is_main) {
    snprintf(path, sizeof path, "/proc/%d/exe", s->pid);
    int fd = open_regular(path);
    if (fd >= 0) return fd;
  }
  snprintf(path, sizeof path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, s->pid, m->pub.start,
           m->pub.limit);
  return open_regular(path);
}

int ocgc_symbols_open_mapping(struct ocgc_symbols *s, unsigned index)
{
  if (s == NULL || s->pid == 0 || index >= s->nmaps) return -1;
  return open_mapped(s, &s->maps[index]);
}

int ocgc_symbols_pid(const struct ocgc_symbols *s, uint64_t *start_time)
{
  *start_time = s->start_time;
  return s->pid;
}

/* Read mapping [m]'s file, or find it read for another mapping. */
static void load(struct ocgc_symbols *s, struct mapping *m)
{
  struct ocgc_proc_ident id;
  struct elf_image *img;
  size_t i;
  int fd, err;
  m->tried = 1;
  for (i = 0; i < s->nmaps; i++) {
    struct mapping *o = &s->maps[i];
    if (o != m && o->image != OCGC_SYMBOLS_NONE && o->dev == m->dev && o->ino == m->ino) {
      m->image = o->image;
      break;
    }
  }
  if (m->image == OCGC_SYMBOLS_NONE) {
    struct elf_bounds b = s->b;
    uint64_t held = 0;
    for (i = 0; i < s->nimages; i++) held += s->images[i].held;
    if (s->b.deadline_ns == 0) s->b.deadline_ns = b.deadline_ns = cm_mono_ns() + s->max_ns;
    if (s->nimages >= MAX_IMAGES || cm_mono_ns() > s->b.deadline_ns || held >= s->max_process_bytes)
      return;
    /* what this file may hold: its own bound, within what the process has left */
    if (b.max_hold_bytes > s->max_process_bytes - held)
      b.max_hold_bytes = s->max_process_bytes - held;
    if ((fd = open_mapped(s, m)) < 0) return;
    img = &s->images[s->nimages];
    err = elf_image_read(fd, &b, img);
    close(fd);
    if (err != 0) return;
    if (s->start_time != 0 && (ocgc_proc_ident(s->pid, &id) != 0 || id.start_time != s->start_time)) {
      elf_image_free(img);
      return;
    }
    m->image = (unsigned)s->nimages++;
  }
  img = &s->images[m->image];
  m->pub.read = 1;
  m->pub.build_id = img->build_id;
  m->pub.has_functions = img->nfuncs > 0;
  m->pub.has_lines = img->nlines > 0;
}

int ocgc_symbols_lookup(struct ocgc_symbols *s, uint64_t addr, int return_address,
                        struct ocgc_symbol *out)
{
  size_t lo = 0, hi;
  struct mapping *m;
  const struct elf_image *img;
  const struct elf_func *f;
  const struct elf_line *l;
  uint64_t vaddr;
  if (out == NULL) return 0;
  memset(out, 0, sizeof *out);
  out->mapping = OCGC_SYMBOLS_NONE;
  if (s == NULL) return 0;
  hi = s->nmaps;
  while (lo < hi) { /* the first mapping that ends above addr */
    size_t mid = lo + (hi - lo) / 2;
    if (s->maps[mid].pub.limit <= addr) lo = mid + 1; else hi = mid;
  }
  if (lo == s->nmaps || s->maps[lo].pub.start > addr) return 0;
  m = &s->maps[lo];
  out->mapping = (unsigned)lo;
  if (!m->tried) load(s, m);
  if (m->image == OCGC_SYMBOLS_NONE) return 0;
  img = &s->images[m->image];
  if (s->pid == 0) vaddr = addr;
  else if (elf_image_vaddr(img, addr - m->pub.start + m->pub.offset, &vaddr) != 0) return 0;
  if (return_address && vaddr > 0) vaddr--;
  if ((l = elf_image_line(img, vaddr)) != NULL) {
    out->file = img->pool + l->file;
    out->line = l->line;
  }
  if ((f = elf_image_func(img, vaddr)) == NULL) return 0;
  out->symbol = img->pool + f->name;
  out->function = f->demangled != UINT32_MAX ? img->pool + f->demangled : out->symbol;
  out->symbol_start = addr - (vaddr + (return_address ? 1 : 0) - f->addr);
  return 1;
}

size_t ocgc_symbols_mappings(struct ocgc_symbols *s, const struct ocgc_symbols_mapping **out)
{
  size_t i;
  if (out != NULL) *out = NULL;
  if (s == NULL || out == NULL || s->nmaps == 0) return 0;
  free(s->pub);
  if ((s->pub = calloc(s->nmaps, sizeof *s->pub)) == NULL) return 0;
  for (i = 0; i < s->nmaps; i++) s->pub[i] = s->maps[i].pub;
  *out = s->pub;
  return s->nmaps;
}

uint64_t ocgc_symbols_memory(const struct ocgc_symbols *s)
{
  uint64_t n;
  size_t i;
  if (s == NULL) return 0;
  n = sizeof *s + s->paths_bytes + (s->pid != 0 ? MAX_MAPPINGS : 1) * sizeof *s->maps;
  if (s->pub != NULL) n += s->nmaps * sizeof *s->pub;
  for (i = 0; i < s->nimages; i++) n += s->images[i].held;
  return n;
}

void ocgc_symbols_close(struct ocgc_symbols *s)
{
  size_t i;
  if (s == NULL) return;
  for (i = 0; i < s->nmaps; i++) free((char *)s->maps[i].pub.path);
  for (i = 0; i < s->nimages; i++) elf_image_free(&s->images[i]);
  free(s->maps);
  free(s->pub);
  free(s);
}
