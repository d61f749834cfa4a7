/* ringgen.c - a test-only ring file writer (see ringgen.h).
 *
 * The write path mirrors runtime_patch/src/ocgc_ring.[ch] step by step, with
 * two generalisations the producer does not need: any number of rings, and
 * events of any length (ALLOC, custom) besides 2 and 3 words.  Stock files
 * follow OCaml 5.2: only the ring header's head is published, no seqlock. */

#include "ringgen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t ext_bytes(int has_ext, unsigned max_domains)
{
  return has_ext ? ocgc_wire_ext_size(max_domains) : 0;
}

uint64_t rg_file_size(int has_ext, unsigned max_domains, uint64_t ring_words)
{
  return OCGC_WIRE_HEADER_SIZE + ext_bytes(has_ext, max_domains) +
         (uint64_t)max_domains * sizeof(struct ocgc_wire_ring_header) +
         (uint64_t)max_domains * ring_words * 8 +
         (uint64_t)OCGC_WIRE_USER_EVENTS * OCGC_WIRE_USER_NAME_LEN;
}

static void put_str(char *dst, size_t n, const char *src)
{
  size_t len = strlen(src);
  if (len >= n) len = n - 1;
  memcpy(dst, src, len);
  dst[len] = '\0';
}

void rg_fill(char *map, int has_ext, unsigned max_domains, uint64_t ring_words)
{
  struct ocgc_wire_header *h = (struct ocgc_wire_header *)map;
  uint64_t ext_size = ext_bytes(has_ext, max_domains);

  h->version = OCGC_WIRE_VERSION;
  (void)ocgc_wire_layout(h, max_domains, ring_words, ext_size);
  if (has_ext) {
    struct ocgc_wire_ext *x = (struct ocgc_wire_ext *)(map + OCGC_WIRE_HEADER_SIZE);
    x->magic = OCGC_EXT_MAGIC;
    x->ext_version = OCGC_EXT_VERSION;
    x->ext_size = ext_size;
    x->flags = OCGC_EXT_NATIVE;
    x->pid = 4242;
    x->start_time = 123456;
    put_str(x->boot_id, sizeof x->boot_id, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
    x->realtime_offset_ns = INT64_C(1700000000000000000);
    x->created_ns = 1000;
    x->state = OCGC_STATE_RUNNING;
    x->exited_ns = 0;
    put_str(x->ocaml_version, sizeof x->ocaml_version, "4.13.1");
    put_str(x->ocgc_version, sizeof x->ocgc_version, "0.1.0");
    put_str(x->program, sizeof x->program, "ringgen");
    x->cause_slots = OCGC_CAUSE_SLOTS;
    x->kind_count = OCGC_KIND_COUNT;
    x->rings_offset = OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext);
    x->totals_offset = x->rings_offset + max_domains * sizeof(struct ocgc_wire_ext_ring);
  }
}

int rg_create(struct rg_file *f, const char *path, int has_ext, unsigned max_domains,
              uint64_t ring_words)
{
  unsigned d;
  int err;

  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->size = rg_file_size(has_ext, max_domains, ring_words);
  f->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (f->fd < 0) return -errno;
  if (ftruncate(f->fd, (off_t)f->size) != 0) goto fail;
  f->map = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
  if (f->map == MAP_FAILED) { f->map = NULL; goto fail; }
  f->rings = calloc(max_domains, sizeof *f->rings);
  if (f->rings == NULL) { errno = ENOMEM; goto fail; }
  rg_fill(f->map, has_ext, max_domains, ring_words);
  f->has_ext = has_ext;
  f->max_domains = max_domains;
  f->ring_words = ring_words;
  f->hdr = (struct ocgc_wire_header *)f->map;
  if (has_ext) {
    f->ext = (struct ocgc_wire_ext *)(f->map + OCGC_WIRE_HEADER_SIZE);
    f->totals = (struct ocgc_wire_totals *)(f->map + f->ext->totals_offset);
  }
  for (d = 0; d < max_domains; d++) {
    struct rg_ring *r = &f->rings[d];
    r->size = ring_words;
    r->mask = ring_words - 1;
    r->rh = (struct ocgc_wire_ring_header *)(f->map + f->hdr->headers_offset +
                                             d * sizeof(struct ocgc_wire_ring_header));
    r->data = (uint64_t *)(f->map + f->hdr->data_offset + d * ring_words * 8);
    if (has_ext)
      r->er = (struct ocgc_wire_ext_ring *)(f->map + f->ext->rings_offset +
                                            d * sizeof(struct ocgc_wire_ext_ring));
  }
  return 0;

fail:
  err = -errno;
  rg_close(f);
  unlink(path);
  return err;
}

void rg_close(struct rg_file *f)
{
  if (f->map != NULL) munmap(f->map, f->size);
  if (f->fd >= 0) close(f->fd);
  free(f->rings);
  f->map = NULL;
  f->fd = -1;
  f->rings = NULL;
}

/* ocgc_ring.c publish_head(); stock files publish head alone, as 5.2. */
static void publish_head(struct rg_ring *r)
{
  if (r->er != NULL) {
    __atomic_store_n(&r->er->seq, r->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&r->er->head_pos, r->head, __ATOMIC_RELAXED);
    __atomic_store_n(&r->er->head_events, r->head_events, __ATOMIC_RELAXED);
  }
  __atomic_store_n(&r->rh->head, r->head, __ATOMIC_RELEASE);
  if (r->er != NULL) {
    r->seq += 2;
    __atomic_store_n(&r->er->seq, r->seq, __ATOMIC_RELEASE);
  }
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

/* ocgc_ring.c caml_ocgc_ring_make_room(). */
static void make_room(struct rg_ring *r, uint64_t len)
{
  uint64_t off = r->tail & r->mask;
  uint64_t pad = off + len > r->size ? r->size - off : 0;
  uint64_t head = r->head;

  while (r->tail + pad + len - head > r->mask) {
    uint64_t h = __atomic_load_n(&r->data[head & r->mask], __ATOMIC_RELAXED);
    uint64_t l = OCGC_EV_LENGTH(h);
    if (l == 0 || l > r->tail - head) {
      head = r->tail;
      r->head_events = r->written;
      break;
    }
    if (OCGC_EV_IS_USER(h) || OCGC_EV_TYPE(h) != OCGC_RT_PADDING) r->head_events++;
    head += l;
  }
  if (head != r->head) {
    r->head = head;
    publish_head(r);
  }
  if (pad) {
    __atomic_store_n(&r->data[off], OCGC_EV_HEADER(pad, 0, OCGC_RT_PADDING, 0),
                     __ATOMIC_RELAXED);
    r->tail += pad;
  }
}

/* ocgc_ring.h caml_ocgc_ring_write(), for any length. */
void rg_write(struct rg_file *f, unsigned d, uint64_t header, uint64_t ts,
              const uint64_t *payload)
{
  struct rg_ring *r = &f->rings[d];
  uint64_t len = OCGC_EV_LENGTH(header), off = r->tail & r->mask, i;
  uint64_t *p;

  /* An event and the padding before it (up to len - 1 words) must fit in
   * the ring together: longer ones are a bug in the test itself. */
  if (len == 0 || 2 * len > r->size) abort();
  if (off + len > r->size || r->tail + len - r->head > r->mask) {
    make_room(r, len);
    off = r->tail & r->mask;
  }
  p = r->data + off;
  __atomic_store_n(&p[0], header, __ATOMIC_RELAXED);
  if (len > 1) __atomic_store_n(&p[1], ts, __ATOMIC_RELAXED);
  for (i = 2; i < len; i++)
    __atomic_store_n(&p[i], payload ? payload[i - 2] : 0, __ATOMIC_RELAXED);
  r->tail += len;
  r->written++;
  if (r->er != NULL) __atomic_store_n(&r->er->written_events, r->written, __ATOMIC_RELAXED);
  __atomic_store_n(&r->rh->tail, r->tail, __ATOMIC_RELEASE);
}

void rg_write1(struct rg_file *f, unsigned d, uint64_t header, uint64_t ts, uint64_t value)
{
  uint64_t payload[OCGC_WIRE_MAX_EVENT_WORDS];
  uint64_t len = OCGC_EV_LENGTH(header), i;
  for (i = 0; i + 2 < len && i < OCGC_WIRE_MAX_EVENT_WORDS; i++) payload[i] = 0;
  payload[0] = value;
  rg_write(f, d, header, ts, payload);
}

void rg_set_name(struct rg_file *f, unsigned slot, const char *name)
{
  char *p = f->map + f->hdr->custom_events_offset + (uint64_t)slot * OCGC_WIRE_USER_NAME_LEN;
  memset(p, 0, OCGC_WIRE_USER_NAME_LEN);
  put_str(p, OCGC_WIRE_USER_NAME_LEN, name);
}
