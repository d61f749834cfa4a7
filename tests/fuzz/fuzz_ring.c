/* fuzz_ring.c - libFuzzer target: any bytes, taken as a ring file, go
 * through the whole reading path (layout validation, cursor, decoding,
 * classification, aggregation, snapshot, histograms).  The only acceptable
 * outcomes are results and error codes: no crash, no sanitizer report.
 *
 * Built with clang -fsanitize=fuzzer by `make fuzz`; standalone.c replays
 * a corpus through the same function in `make check`. */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ocgc/consumer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  (void)ocgc_phase_name(OCGC_IDS_53, ev->id);
  (void)ocgc_phase_name(OCGC_IDS_54, ev->id);
  (void)ocgc_counter_name(OCGC_IDS_52, ev->id);
  *(uint64_t *)ctx += ev->value + ev->payload_words;
  return 0;
}

static void read_all(const char *path)
{
  struct ocgc_source *src;
  struct ocgc_cursor *cur;
  struct ocgc_agg *agg;
  struct ocgc_snapshot *s;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  uint64_t sink = 0;
  unsigned k;

  if (ocgc_source_open_path(path, NULL, &src) != 0) return;
  (void)ocgc_source_info(src, &info);
  (void)ocgc_source_totals(src, &t);
  for (k = 0; k < 4; k++) (void)ocgc_source_user_name(src, k);
  co.on_event = on_event;
  co.ctx = &sink;
  co.batch_words = 64; /* many batches: more boundaries to get wrong */
  if (ocgc_cursor_new(src, &co, &cur) == 0) {
    while (ocgc_cursor_poll(cur, 1000) > 0) {}
    ocgc_cursor_free(cur);
  }
  if (ocgc_agg_new(src, NULL, &agg) == 0) {
    (void)ocgc_agg_poll(agg);
    if (ocgc_agg_snapshot(agg, &s) == 0) {
      struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
      ocgc_snapshot_counters(s, &c);
      (void)ocgc_hist_percentile(ocgc_snapshot_pauses(s), 99.9);
      ocgc_snapshot_free(s);
    }
    ocgc_agg_free(agg);
  }
  ocgc_source_close(src);
}

/* Mode 1: a file with a valid geometry (one ring of 2^(6..12) words, with
 * or without the ocgc extension block, the names table in place) around
 * fuzzer-chosen contents: head, tail, the ext seqlock and totals, the
 * names of slots 0..3 and the ring words.  This reaches the decoder, the
 * cursor and the aggregator with hostile *contents*, which raw bytes
 * (mode 0) almost never do. */
static int build_file(int fd, const uint8_t *data, size_t size)
{
  struct ocgc_wire_header h;
  int has_ext = data[0] & 2;
  uint64_t ring_words = UINT64_C(1) << (6 + (data[0] >> 2) % 7);
  uint64_t ext_size = has_ext ? ocgc_wire_ext_size(1) : 0;
  uint64_t file_size, w[2];
  size_t i;

  data++;
  size--;
  memset(&h, 0, sizeof h);
  h.version = 1;
  h.max_domains = 1;
  h.ring_header_size_bytes = sizeof(struct ocgc_wire_ring_header);
  h.ring_size_bytes = ring_words * 8;
  h.ring_size_elements = ring_words;
  h.headers_offset = OCGC_WIRE_HEADER_SIZE + ext_size;
  h.data_offset = h.headers_offset + h.ring_header_size_bytes;
  h.custom_events_offset = h.data_offset + h.ring_size_bytes;
  file_size = h.custom_events_offset + (uint64_t)OCGC_WIRE_USER_EVENTS * OCGC_WIRE_USER_NAME_LEN;
  if (ftruncate(fd, (off_t)file_size) != 0) return -1;
  if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) return -1;
  if (has_ext) {
    struct ocgc_wire_ext x;
    uint64_t rec[4] = {0, 0, 0, 0};
    memset(&x, 0, sizeof x);
    x.magic = OCGC_EXT_MAGIC;
    x.ext_version = 1;
    x.ext_size = ext_size;
    x.pid = 1;
    x.state = OCGC_STATE_EXITED;
    x.cause_slots = OCGC_CAUSE_SLOTS;
    x.kind_count = OCGC_KIND_COUNT;
    x.rings_offset = OCGC_WIRE_HEADER_SIZE + sizeof x;
    x.totals_offset = x.rings_offset + sizeof(struct ocgc_wire_ext_ring);
    if (pwrite(fd, &x, sizeof x, OCGC_WIRE_HEADER_SIZE) != (ssize_t)sizeof x) return -1;
    /* seq, head_pos, head_events, written from the input */
    memcpy(rec, data, size < sizeof rec ? size : sizeof rec);
    rec[0] &= ~UINT64_C(1); /* an odd seq only makes readers retry */
    if (pwrite(fd, rec, sizeof rec, (off_t)x.rings_offset) != (ssize_t)sizeof rec) return -1;
    if (size >= 96 && pwrite(fd, data + 32, 64, (off_t)x.totals_offset + 8) != 64) return -1;
  }
  /* head and tail: small, from the input, so that they often make sense */
  w[0] = size > 33 ? data[32] % (2 * ring_words) : 0;
  w[1] = w[0] + (size > 34 ? data[33] % (ring_words + 2) : 0);
  if (pwrite(fd, w, sizeof w, (off_t)h.headers_offset) != (ssize_t)sizeof w) return -1;
  for (i = 0; i < 4; i++) {
    static const char *const names[] = {"ocgc.cause.explicit", "ocgc.major_cycle.end",
                                        "ocgc.heap.grow", "ocgc.major_slice.work"};
    if (pwrite(fd, names[i], strlen(names[i]) + 1,
               (off_t)(h.custom_events_offset + i * OCGC_WIRE_USER_NAME_LEN)) < 0)
      return -1;
  }
  if (size > 34) {
    size_t n = size - 34 < ring_words * 8 ? size - 34 : ring_words * 8;
    if (pwrite(fd, data + 34, n, (off_t)h.data_offset) != (ssize_t)n) return -1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char path[64];
  int fd = memfd_create("ocgc-fuzz", MFD_CLOEXEC), ok;
  if (fd < 0) return 0;
  if (size > 1 && (data[0] & 1))
    ok = build_file(fd, data, size) == 0;
  else
    ok = size == 0 || write(fd, data, size) == (ssize_t)size;
  if (ok) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    read_all(path);
  }
  close(fd);
  return 0;
}
