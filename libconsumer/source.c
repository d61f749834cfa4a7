/* source.c - open, map, validate and describe a ring file.
 *
 * Invariants: the mapping is read-only and covers the whole file as it was
 * at open; the layout is validated once, from one read of each header
 * field; strings and totals are copied out of the mapping (bounded, and
 * under the producer's seqlock for totals) before anyone uses them. */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "shm.h"
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
  struct ocgc_source *s;
  struct stat st;
  void *map;
  int err;

  if (fstat(fd, &st) != 0) { err = -errno; close(fd); return err; }
  if (!S_ISREG(st.st_mode)) { close(fd); return OCGC_E_CORRUPT; }
  if ((uint64_t)st.st_size < OCGC_WIRE_HEADER_SIZE) { close(fd); return OCGC_E_CORRUPT; }
  map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) { err = -errno; close(fd); return err; }
  s = calloc(1, sizeof *s);
  if (s == NULL) { munmap(map, (size_t)st.st_size); close(fd); return -ENOMEM; }
  s->map = map;
  s->size = (uint64_t)st.st_size;
  s->fd = fd;
  if ((err = ocgc_guard_install()) != 0) { ocgc_source_close(s); return err; }
  OCGC_GUARDED(map, s->size, err, ocgc_layout_parse(map, s->size, &s->l));
  if (err) { ocgc_source_close(s); return err; }
  s->ids = OCGC_IDS_52;
  if (opts != NULL && opts->sz >= offsetof(struct ocgc_open_opts, ids) + sizeof opts->ids &&
      opts->ids != OCGC_IDS_AUTO && !s->l.has_ext)
    s->ids = opts->ids == OCGC_IDS_53 ? OCGC_IDS_53 : OCGC_IDS_52;
  ocgc_classify_init(s);
  *out = s;
  return 0;
}

void ocgc_source_close(struct ocgc_source *s)
{
  unsigned i;
  if (s == NULL) return;
  if (s->names != NULL) {
    for (i = 0; i < OCGC_WIRE_USER_EVENTS; i++) free(s->names[i]);
    free(s->names);
  }
  free(s->user_cause);
  if (s->map != NULL) munmap((void *)s->map, (size_t)s->size);
  if (s->fd >= 0) close(s->fd);
  free(s);
}

int ocgc_source_check_size(const struct ocgc_source *s)
{
  struct stat st;
  if (fstat(s->fd, &st) != 0) return -errno;
  return (uint64_t)st.st_size < s->size ? OCGC_E_TRUNCATED : 0;
}

/* Copy a NUL-terminated field of at most n bytes out of the mapping (each
 * byte read once).  Returns 0 if the field had no NUL (dst is then cut). */
static int copy_field(char *dst, size_t n, const char *src)
{
  size_t i;
  for (i = 0; i < n; i++) {
    char c = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    if (c == '\0') { dst[i] = '\0'; return 1; }
    if (i + 1 < n) dst[i] = c;
  }
  dst[n - 1] = '\0';
  return 0;
}

static int read_info(const struct ocgc_source *s, struct ocgc_source_info *info);

int ocgc_source_info(const struct ocgc_source *s, struct ocgc_source_info *info)
{
  int err;
  if (s == NULL || info == NULL) return -EINVAL;
  if ((err = ocgc_source_check_size(s)) != 0) return err;
  OCGC_GUARDED(s->map, s->size, err, read_info(s, info));
  return err;
}

static int read_info(const struct ocgc_source *s, struct ocgc_source_info *info)
{
  const struct ocgc_wire_ext *x;
  memset(info, 0, sizeof *info);
  info->max_domains = s->l.max_domains;
  info->ring_words = s->l.ring_words;
  info->file_size = s->size;
  info->has_ext = s->l.has_ext;
  info->ids = s->ids;
  if (!s->l.has_ext) return 0;
  x = (const struct ocgc_wire_ext *)(s->map + OCGC_WIRE_HEADER_SIZE);
  /* Acquire: pairs with the producer's release store of state at exit. */
  info->state = shm_load_acquire(&x->state);
  info->exited_ns = shm_load(&x->exited_ns);
  info->pid = shm_load(&x->pid);
  info->start_time = shm_load(&x->start_time);
  info->realtime_offset_ns = (int64_t)shm_load((const uint64_t *)&x->realtime_offset_ns);
  info->created_ns = shm_load(&x->created_ns);
  info->flags = shm_load(&x->flags);
  copy_field(info->boot_id, sizeof info->boot_id, x->boot_id);
  copy_field(info->ocaml_version, sizeof info->ocaml_version, x->ocaml_version);
  copy_field(info->ocgc_version, sizeof info->ocgc_version, x->ocgc_version);
  copy_field(info->program, sizeof info->program, x->program);
  return 0;
}

static int read_totals(const struct ocgc_source *s, struct ocgc_totals *out);

int ocgc_source_totals(const struct ocgc_source *s, struct ocgc_totals *out)
{
  int err;
  if (s == NULL || out == NULL) return -EINVAL;
  if (!s->l.has_ext) return -ENODATA;
  if ((err = ocgc_source_check_size(s)) != 0) return err;
  OCGC_GUARDED(s->map, s->size, err, read_totals(s, out));
  if (err == -EAGAIN && ocgc_source_seq_stuck((struct ocgc_source *)s)) /* gone: not state */
    OCGC_GUARDED(s->map, s->size, err, read_totals(s, out));
  return err;
}

int ocgc_source_seq_stuck(struct ocgc_source *s)
{
  if (!s->gone && s->l.has_ext && ocgc_source_check_alive(s) == OCGC_E_STALE) s->gone = 1;
  return s->gone;
}

static int read_totals(const struct ocgc_source *s, struct ocgc_totals *out)
{
  const uint64_t *t = (const uint64_t *)(s->map + s->l.totals_offset);
  unsigned tries, k, c;
  for (tries = 0; tries < 10000; tries++) {
    /* Seqlock read.  Acquire: pairs with the producer's release store of
     * the even seq that ends an update. */
    uint64_t s1 = shm_load_acquire(&t[0]), s2;
    const uint64_t *bc = t + offsetof(struct ocgc_wire_totals, by_cause) / 8;
    if ((s1 & 1) && !s->gone) {
      if (tries > 100) sched_yield();
      continue;
    }
    out->minor_collections = shm_load(&t[1]);
    out->major_collections = shm_load(&t[2]);
    out->compactions = shm_load(&t[3]);
    out->forced_major_collections = shm_load(&t[4]);
    out->major_slices = shm_load(&t[5]);
    out->minor_words = shm_load(&t[6]);
    out->promoted_words = shm_load(&t[7]);
    out->major_words = shm_load(&t[8]);
    out->direct_major_words = shm_load(&t[9]);
    out->heap_words = shm_load(&t[10]);
    out->top_heap_words = shm_load(&t[11]);
    out->heap_chunks = shm_load(&t[12]);
    out->gc_time_ns = shm_load(&t[13]);
    for (k = 0; k < OCGC_KIND_COUNT; k++) out->kind_time_ns[k] = shm_load(&t[14 + k]);
    out->updated_ns = shm_load(&t[18]);
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      for (c = 0; c < OCGC_CAUSE_SLOTS; c++)
        out->by_cause[k][c] = c < s->l.cause_slots ? shm_load(&bc[k * s->l.cause_slots + c]) : 0;
    /* Acquire fence: the loads above complete before seq is re-read (pairs
     * with the producer's release fence after it makes seq odd). */
    shm_fence_acquire();
    s2 = shm_load(&t[0]);
    if (s1 == s2 || s->gone) return 0;
  }
  return -EAGAIN;
}

static int read_written(const struct ocgc_source *s, unsigned ring, uint64_t *out)
{
  *out = shm_load(src_ext_ring(s, ring) + offsetof(struct ocgc_wire_ext_ring, written_events) / 8);
  return 0;
}

int ocgc_source_written(const struct ocgc_source *s, unsigned ring, uint64_t *out)
{
  int err;
  if (s == NULL || out == NULL || ring >= s->l.max_domains) return -EINVAL;
  if (!s->l.has_ext) return -ENODATA;
  if ((err = ocgc_source_check_size(s)) != 0) return err;
  OCGC_GUARDED(s->map, s->size, err, read_written(s, ring, out));
  return err;
}

const char *ocgc_source_user_name(const struct ocgc_source *s, unsigned id)
{
  struct ocgc_source *m = (struct ocgc_source *)s; /* the cache is not state */
  char buf[OCGC_WIRE_USER_NAME_LEN];
  const char *p;
  int terminated;
  if (s == NULL || id >= OCGC_WIRE_USER_EVENTS) return NULL;
  if (m->names == NULL) {
    m->names = calloc(OCGC_WIRE_USER_EVENTS, sizeof *m->names);
    if (m->names == NULL) return NULL;
  }
  if (m->names[id] != NULL) return m->names[id];
  /* Names are written once, when an event is registered; copy the slot so
   * later writes to the mapping cannot unterminate what the caller holds. */
  if (ocgc_source_check_size(s) != 0) return NULL;
  p = s->map + s->l.names_offset + (uint64_t)id * OCGC_WIRE_USER_NAME_LEN;
  OCGC_GUARDED(s->map, s->size, terminated, copy_field(buf, sizeof buf, p));
  if (terminated != 1 || buf[0] == '\0') return NULL;
  m->names[id] = strdup(buf);
  return m->names[id];
}
