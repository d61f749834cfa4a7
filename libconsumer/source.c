/* source.c - open, validate and describe a ring file: its layout, its
 * producer's identity and settings (ocgc_source_info, _gc_config,
 * _written), its user-event names and its id numbering.
 *
 * Invariants: the layout is validated once, from one copy of the header;
 * every byte is read through words.c (a sealed file from its mapping, any
 * other by copy: no read can fault), the only file that reads one; strings
 * are copied out (bounded) before anyone uses them; an unsealed file's
 * size is checked before each read, so that one that shrank is reported as
 * truncated even where it still reads.  It calls nothing above it: the
 * classifier fills its tables itself (classify.c), the totals are
 * totals.c's, and whether the producer lives is attach.c's. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opts.h"
#include "exever.h"
#include "source.h"

int ocgc_source_open_path(const char *path, const struct ocgc_open_opts *opts,
                          struct ocgc_source **out)
{
  int fd;
  if (path == NULL || out == NULL) return -EINVAL;
  /* O_NONBLOCK: a FIFO planted under a ring's name must not hang us (it is
   * then rejected as not a regular file); O_NOCTTY: nor may a terminal
   * become ours. */
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -errno;
  return ocgc_source_open_fd(fd, opts, out);
}

int ocgc_source_open_fd(int fd, const struct ocgc_open_opts *opts, struct ocgc_source **out)
{
  struct ocgc_open_opts o;
  struct ocgc_source *s;
  struct stat st;
  uint64_t head[OCGC_LAYOUT_PARSE_BYTES / 8];
  int err;

  if (opts_read(&o, sizeof o, opts) != 0) {
    close(fd);
    return -EINVAL;
  }
  if (fstat(fd, &st) != 0) { err = -errno; close(fd); return err; }
  if (!S_ISREG(st.st_mode)) { close(fd); return OCGC_E_CORRUPT; }
  if ((uint64_t)st.st_size < OCGC_WIRE_HEADER_SIZE) { close(fd); return OCGC_E_CORRUPT; }
  s = calloc(1, sizeof *s);
  if (s == NULL) { close(fd); return -ENOMEM; }
  s->size = (uint64_t)st.st_size;
  s->fd = fd;
  s->dev = (uint64_t)st.st_dev;
  s->ino = (uint64_t)st.st_ino;
  if ((err = src_words_open(s)) != 0) { ocgc_source_close(s); return err; }
  memset(head, 0, sizeof head);
  err = src_copy(s, 0, head, s->size < sizeof head ? s->size & ~(uint64_t)7 : sizeof head);
  if (err == 0) err = ocgc_layout_parse(head, s->size, &s->l);
  if (err) { ocgc_source_close(s); return err; }
  /* An ocgc file says which numbering it holds (any other value than 5.3:
   * 5.2, as every file before the field); a stock file cannot, and the
   * caller may say (OCGC_IDS_AUTO: 5.2). */
  s->ids = s->l.has_ext && s->l.ext_ids == OCGC_EXT_IDS_53 ? OCGC_IDS_53 : OCGC_IDS_52;
  s->ids_origin = s->l.has_ext ? OCGC_IDS_FROM_EXT : OCGC_IDS_ASSUMED;
  if (o.ids != OCGC_IDS_AUTO && !s->l.has_ext) {
    s->ids = o.ids == OCGC_IDS_53 || o.ids == OCGC_IDS_54 ? o.ids : OCGC_IDS_52;
    s->ids_origin = OCGC_IDS_FROM_CALLER;
  }
  *out = s;
  return 0;
}

void ocgc_source_close(struct ocgc_source *s)
{
  unsigned i;
  if (s == NULL) return;
  for (i = 0; i < NAME_PAGES; i++) {
    unsigned k;
    if (s->names[i] == NULL) continue;
    for (k = 0; k < NAME_PAGE; k++) free(s->names[i]->name[k]);
    free(s->names[i]);
  }
  slotmap_free(&s->user_meaning);
  src_words_close(s);
  free(s);
}

/* Copy a field of n bytes, NUL-terminated unless cut, out of a private
 * copy into dst (as many bytes). */
static void copy_field(char *dst, size_t n, const char *src)
{
  size_t len = strnlen(src, n - 1);
  memcpy(dst, src, len);
  dst[len] = '\0';
}

/* ocgc_source_info() into our own whole struct. */
static int info_fill(const struct ocgc_source *s, struct ocgc_source_info *info)
{
  struct ocgc_wire_ext x;
  uint64_t state;
  int err;
  if ((err = ocgc_source_check_size(s)) != 0) return err;
  memset(info, 0, sizeof *info);
  info->sz = sizeof *info;
  info->max_domains = s->l.max_domains;
  info->ring_words = s->l.ring_words;
  info->file_size = s->size;
  info->has_ext = s->l.has_ext;
  info->ids = s->ids;
  if (!s->l.has_ext) return 0;
  /* Acquire: pairs with the producer's release store of state at exit,
   * after exited_ns. */
  if ((err = src_word_acquire(s, OCGC_WIRE_HEADER_SIZE + offsetof(struct ocgc_wire_ext, state),
                              &state)) != 0 ||
      (err = src_copy(s, OCGC_WIRE_HEADER_SIZE, &x, sizeof x)) != 0)
    return err;
  info->state = state;
  info->exited_ns = x.exited_ns;
  info->pid = x.pid;
  info->start_time = x.start_time;
  info->realtime_offset_ns = x.realtime_offset_ns;
  info->created_ns = x.created_ns;
  info->flags = x.flags;
  copy_field(info->boot_id, sizeof info->boot_id, x.boot_id);
  copy_field(info->ocaml_version, sizeof info->ocaml_version, x.ocaml_version);
  copy_field(info->ocgc_version, sizeof info->ocgc_version, x.ocgc_version);
  copy_field(info->program, sizeof info->program, x.program);
  return 0;
}

int ocgc_source_info(const struct ocgc_source *s, struct ocgc_source_info *out)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  int err;
  if (s == NULL || out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  if ((err = info_fill(s, &info)) != 0) return err;
  return opts_write(out, &info, sizeof info);
}

static int read_config(const struct ocgc_source *s, struct ocgc_gc_config *out)
{
  struct ocgc_wire_totals t;
  struct ocgc_gc_config c;
  int err;
  if ((err = src_copy(s, s->l.totals_offset, &t, offsetof(struct ocgc_wire_totals, by_cause))) != 0)
    return err;
  memset(&c, 0, sizeof c);
#define COPY_WORD(field) c.field = t.field;
  OCGC_CONFIG_WORDS(COPY_WORD)
#undef COPY_WORD
  /* Only the fields both structs have (the caller's may be older or newer). */
  memcpy((char *)out + sizeof out->sz, (const char *)&c + sizeof c.sz,
         (out->sz < sizeof c ? out->sz : sizeof c) - sizeof out->sz);
  return 0;
}

int ocgc_source_gc_config(const struct ocgc_source *s, struct ocgc_gc_config *out)
{
  int err;
  if (s == NULL || out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  if (!s->l.has_ext || s->l.ext_version < 2) return -ENODATA;
  if ((err = ocgc_source_check_size(s)) != 0) return err;
  return read_config(s, out);
}

int ocgc_source_written(const struct ocgc_source *s, unsigned ring, uint64_t *out)
{
  int err;
  if (s == NULL || out == NULL || ring >= s->l.max_domains) return -EINVAL;
  if (!s->l.has_ext) return -ENODATA;
  if ((err = ocgc_source_check_size(s)) != 0) return err;
  return src_copy(s, src_ext_ring(s, ring) + offsetof(struct ocgc_wire_ext_ring, written_events),
                  out, 8);
}

const char *ocgc_source_user_name(const struct ocgc_source *s, unsigned id)
{
  struct ocgc_source *m = (struct ocgc_source *)s; /* the cache is not state */
  char buf[OCGC_WIRE_USER_NAME_LEN];
  size_t len;
  struct name_page *pg;
  unsigned k;
  if (s == NULL || id >= OCGC_WIRE_USER_EVENTS) return NULL;
  /* A page of slots is made when one of them is first asked for: a
   * program names a handful of slots, and a table of all 8,192 cost every
   * watched process 96 KiB (a thousand of them, 96 MiB). */
  if ((pg = m->names[id / NAME_PAGE]) == NULL &&
      (pg = m->names[id / NAME_PAGE] = calloc(1, sizeof *pg)) == NULL)
    return NULL;
  k = id % NAME_PAGE;
  if (pg->name[k] != NULL) return pg->name[k];
  /* An empty slot may be named later (a name is written once, when its
   * event is registered), so it is read again, but during a poll at most
   * once: events of an unnamed slot cost no system call each.  Generation 0 is
   * never a poll's, so a slot is always read the first time. */
  if (m->polling) {
    if (pg->gen[k] == m->poll_gen + 1u) return NULL;
    pg->gen[k] = m->poll_gen + 1u;
  }
  /* pread: a copy that later writes cannot unterminate, and no fault. */
  if (ocgc_source_pread(s, s->l.names_offset + (uint64_t)id * OCGC_WIRE_USER_NAME_LEN, buf,
                        sizeof buf) != 0)
    return NULL;
  len = strnlen(buf, sizeof buf);
  if (len == 0 || len == sizeof buf) return NULL;
  pg->name[k] = strdup(buf);
  return pg->name[k];
}

int ocgc_source_ids_from_exe(struct ocgc_source *s)
{
  char v[sizeof s->exe_version];
  enum ocgc_ids ids;
  int err;
  if (s->l.has_ext || s->ids_origin != OCGC_IDS_ASSUMED) return 0;
  if (!s->pid_start_ok) { s->exe_err = OCGC_E_STALE; return 0; }
  err = ocgc_exe_version_pid(s->pid, s->pid_start, v, sizeof v);
  if (err != 0) { s->exe_err = err; return 0; }
  memcpy(s->exe_version, v, sizeof v);
  /* A release newer than every table: no numbering is guessed for it. */
  if ((ids = ocgc_ids_of_version(v)) == OCGC_IDS_AUTO) return s->exe_err = OCGC_E_IDS_UNKNOWN;
  s->ids = ids;
  s->ids_origin = OCGC_IDS_FROM_EXE;
  s->exe_err = 0;
  return 0;
}

int ocgc_source_ids(const struct ocgc_source *s, struct ocgc_ids_info *out)
{
  struct ocgc_ids_info i;
  if (s == NULL || out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  memset(&i, 0, sizeof i);
  i.sz = out->sz;
  i.ids = s->ids;
  i.origin = s->ids_origin;
  memcpy(i.ocaml_version, s->exe_version, sizeof i.ocaml_version);
  i.exe_err = s->exe_err;
  /* Only the fields both structs have (the caller's may be older or newer). */
  memcpy(out, &i, out->sz < sizeof i ? out->sz : sizeof i);
  return 0;
}
