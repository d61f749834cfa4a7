/* exever.c - which OCaml runs a stock OCaml 5 process, read from its
 * executable: the id numbering of its ring depends on it (each release so
 * far changed the ids while keeping format version 1), and the file does
 * not say.  A release has a numbering only once libocgc has its table
 * (names.c): a newer one maps to none, never to the last one known.
 *
 * What an OCaml 5.x executable reliably holds (runtime/ and stdlib/ of
 * 5.2, 5.3 and trunk, checked against Debian's 5.3 binaries):
 * - the bytecode runtime (ocamlrun, and -custom or -output-complete-exe
 *   programs) prints "The OCaml runtime, version " OCAML_VERSION_STRING
 *   for -version: one C string literal;
 * - a native program holds Sys.ocaml_version, "@VERSION@" in sys.ml.in,
 *   as a static OCaml string block: a header word with String_tag (252) and
 *   a size of one or two words, the bytes, zeros, and the pad byte that
 *   makes the last byte of the block (OCaml's string layout).
 * Invariants (the process is hostile, and so is its executable):
 * - only /proc/PID/exe is opened, the kernel's link to the file the
 *   process runs, never a path the process wrote; it must be a regular
 *   file not on a FUSE mount (a FUSE daemon can hold a read for ever);
 * - at most OCGC_EXE_MAX_BYTES bytes are read, within OCGC_EXE_MAX_NS;
 * - nothing is parsed but the version, whose every byte is checked; two
 *   different versions found of one kind make the answer "none", so no
 *   content can make us pick between two candidates;
 * - the version counts only if the process is still the one attached
 *   (pid and /proc start time) after the read. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "exever.h"
#include "clock.h"
#include "procfs.h"

#define BANNER "The OCaml runtime, version "
#define VERSION_MAX 16u       /* bytes kept, NUL included */
#define CHUNK (UINT64_C(1) << 20)
#define OVERLAP 64u           /* > banner + version, > a two-word block; a multiple of 8 */
#define BUF_BYTES (CHUNK + OVERLAP)
#define STRING_TAG 252u
#define FUSE_SUPER_MAGIC 0x65735546

/* What a scan has found so far, of each kind. */
struct found {
  char banner[VERSION_MAX], native[VERSION_MAX];
  int banner_conflict, native_conflict;
};

/* Whether s[0..len) is a version: DIGITS.DIGITS.DIGITS, then at most a
 * suffix of [+~] and [A-Za-z0-9._+~-], major 5 or more, shorter than
 * VERSION_MAX. */
static int is_version(const char *s, size_t len)
{
  size_t i = 0;
  unsigned part, major = 0;
  if (len == 0 || len >= VERSION_MAX) return 0;
  for (part = 0; part < 3; part++) {
    size_t digits = 0;
    if (part > 0 && (i >= len || s[i++] != '.')) return 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
      if (part == 0) major = major * 10 + (unsigned)(s[i] - '0');
      i++;
      digits++;
    }
    if (digits == 0 || digits > 3) return 0;
  }
  if (i < len && s[i] != '+' && s[i] != '~') return 0;
  for (; i < len; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == '+' || c == '~' || c == '-'))
      return 0;
  }
  return major >= 5;
}

static void keep(char *slot, int *conflict, const char *s, size_t len)
{
  if (slot[0] == '\0') {
    memcpy(slot, s, len);
    slot[len] = '\0';
  } else if (strlen(slot) != len || memcmp(slot, s, len) != 0) {
    *conflict = 1;
  }
}

static void scan_banners(struct found *f, const char *buf, size_t n)
{
  const char *p = buf, *end = buf + n;
  while ((p = memmem(p, (size_t)(end - p), BANNER, sizeof BANNER - 1)) != NULL) {
    const char *v = p + sizeof BANNER - 1;
    const char *nul = memchr(v, '\0', (size_t)(end - v) < VERSION_MAX ? (size_t)(end - v)
                                                                       : VERSION_MAX);
    if (nul != NULL && is_version(v, (size_t)(nul - v)))
      keep(f->banner, &f->banner_conflict, v, (size_t)(nul - v));
    p = v;
  }
}

/* An OCaml string block at buf[i] (8-aligned in the file): 1 or 2 words
 * of bytes, then zeros, the last byte saying how many bytes pad. */
static void try_block(struct found *f, const unsigned char *w, size_t avail)
{
  uint64_t hd;
  size_t bytes, len, k;
  memcpy(&hd, w, 8);
  if ((hd & 0xff) != STRING_TAG || (hd >> 54) != 0) return;
  bytes = (size_t)((hd >> 10) & ((UINT64_C(1) << 44) - 1)) * 8;
  if (bytes != 8 && bytes != 16) return;
  if (8 + bytes > avail) return;
  w += 8;
  if (w[bytes - 1] >= 8) return;
  len = bytes - 1 - w[bytes - 1];
  for (k = len; k + 1 < bytes; k++)
    if (w[k] != 0) return;
  if (is_version((const char *)w, len)) keep(f->native, &f->native_conflict, (const char *)w, len);
}

/* buf starts at a multiple of 8 in the file. */
static void scan_chunk(struct found *f, const char *buf, size_t n)
{
  size_t i;
  scan_banners(f, buf, n);
  for (i = 0; i + 16 <= n; i += 8)
    if ((unsigned char)buf[i] == STRING_TAG) try_block(f, (const unsigned char *)buf + i, n - i);
}

static int answer(const struct found *f, char *out, size_t outn)
{
  const char *v = f->banner[0] && !f->banner_conflict   ? f->banner
                  : f->native[0] && !f->native_conflict ? f->native
                                                        : NULL;
  if (v == NULL) return -ENOENT;
  if (strlen(v) >= outn) return -ENAMETOOLONG;
  memcpy(out, v, strlen(v) + 1);
  return 0;
}

int ocgc_exe_version_scan(const char *buf, size_t n, char *out, size_t outn)
{
  struct found f;
  memset(&f, 0, sizeof f);
  scan_chunk(&f, buf, n);
  return answer(&f, out, outn);
}

/* Read up to [want] bytes at [off]; returns the count (0 at the end). */
static ssize_t read_at(int fd, char *buf, size_t want, uint64_t off)
{
  for (;;) {
    ssize_t got = pread(fd, buf, want, (off_t)off);
    if (got >= 0 || errno != EINTR) return got;
  }
}

int ocgc_exe_version_fd(int fd, char *out, size_t outn)
{
  struct found f;
  struct stat st;
  struct statfs sf;
  uint64_t off = 0, deadline = cm_mono_ns() + OCGC_EXE_MAX_NS;
  size_t have = 0;
  char *buf;
  int err = 0;

  if (fstat(fd, &st) != 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -ENOENT;
  if (fstatfs(fd, &sf) == 0 && sf.f_type == FUSE_SUPER_MAGIC) return -EMEDIUMTYPE;
  if ((buf = malloc(BUF_BYTES)) == NULL) return -ENOMEM;
  memset(&f, 0, sizeof f);
  for (;;) {
    ssize_t got;
    if (off >= OCGC_EXE_MAX_BYTES) { err = -EFBIG; break; }
    if (cm_mono_ns() > deadline) { err = -ETIME; break; }
    /* What the buffer holds after the kept tail: the tail is OVERLAP to
     * OVERLAP + 7 bytes when a read returned a count that is not a
     * multiple of 8 (a file that grows while it is read). */
    got = read_at(fd, buf + have, BUF_BYTES - have, off);
    if (got < 0) { err = -errno; break; }
    if (got == 0) break;
    off += (uint64_t)got;
    have += (size_t)got;
    scan_chunk(&f, buf, have);
    /* Keep the tail, 8-aligned as the file, for what straddles chunks. */
    if (have > OVERLAP) {
      size_t drop = (have - OVERLAP) & ~(size_t)7;
      memmove(buf, buf + drop, have - drop);
      have -= drop;
    }
  }
  free(buf);
  if (err != 0 && answer(&f, out, outn) != 0) return err;
  return answer(&f, out, outn);
}

int ocgc_exe_version_pid(int pid, uint64_t start, char *out, size_t outn)
{
  struct ocgc_proc_ident id;
  char path[64];
  int fd, err;
  snprintf(path, sizeof path, "/proc/%d/exe", pid);
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return errno == ENOENT ? OCGC_E_STALE : -errno;
  err = ocgc_exe_version_fd(fd, out, outn);
  close(fd);
  if (ocgc_proc_ident(pid, &id) != 0 || id.start_time != start) return OCGC_E_STALE;
  return err;
}

enum ocgc_ids ocgc_ids_of_version(const char *v)
{
  unsigned major = 0, minor = 0;
  if (sscanf(v, "%u.%u", &major, &minor) != 2) return OCGC_IDS_52;
  if (major < 5 || (major == 5 && minor <= 2)) return OCGC_IDS_52;
  if (major == 5 && minor == 3) return OCGC_IDS_53;
  if (major == 5 && minor == 4) return OCGC_IDS_54;
  /* Every release so far changed the numbering: a newer one's is not
   * guessed from the last one known. */
  return OCGC_IDS_AUTO;
}
