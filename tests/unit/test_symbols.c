/* test_symbols.c - libocgc's symbolizer (symbols.c, elfimage.c,
 * demangle.c) on the ELF fixtures of tests/fixtures/elf and on hostile
 * versions of them made here:
 * - OCaml names demangled, other names left alone, escapes decoded to
 *   printable ASCII only, nothing written past the buffer;
 * - a real file's functions, source lines (plain and zlib-compressed
 *   DWARF), build id, and addresses past or between functions unnamed;
 * - the bounds hold: one symbol kept when one is allowed, no lines when
 *   the DWARF would take more than max_read_bytes, a compressed section
 *   claiming 1 TiB not inflated;
 * - every truncation, and every byte of the file set to 0x00, 0xff and
 *   0x80, is read or refused cleanly (under the sanitizers: no crash, no
 *   leak, no read out of bounds), and an address is never named outside
 *   the function symbols of the file;
 * - what is not a regular file (a FIFO, /dev/zero, a folder) is refused
 *   without a read that could block;
 * - a process's files are read within max_ns of the first reading, not
 *   of the open;
 * - elfgen.c's hostile shapes, small: a section count past the bound
 *   refused before libelf, note sections searched within their bound,
 *   symbols sharing a name held once (ocgc_symbols_memory), and what a
 *   file's names hold within max_names_bytes (symbols_hostile.sh reads
 *   them at full size, with the peak memory). */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfgen.h"
#include "ocgc/consumer.h"
#include "testutil.h"

#define ADDR_G UINT64_C(0x40010c)
#define ADDR_F UINT64_C(0x40011e)
#define ADDR_START UINT64_C(0x400138)

static unsigned char *load(const char *name, size_t *len)
{
  char path[4096];
  const char *src = tu_srcdir();
  FILE *f;
  unsigned char *buf;
  long n;
  ck_assert_msg(src != NULL, "OCGC_SRCDIR is not set (make check sets it)");
  snprintf(path, sizeof path, "%s/tests/fixtures/elf/%s", src, name);
  f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  rewind(f);
  buf = malloc((size_t)n);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* A file of [n] bytes [b], open for reading. */
static int memfile(const unsigned char *b, size_t n)
{
  char tmpl[] = "/tmp/ocgc-test-symbols-XXXXXX";
  int fd = mkstemp(tmpl);
  ck_assert_int_ge(fd, 0);
  unlink(tmpl);
  ck_assert_int_eq((int)write(fd, b, n), (int)n);
  return fd;
}

static int open_bytes(const unsigned char *b, size_t n, const struct ocgc_symbols_opts *o,
                      struct ocgc_symbols **s)
{
  int fd = memfile(b, n), err = ocgc_symbols_open_elf(fd, "x", o, s);
  close(fd);
  return err;
}

START_TEST(demangle)
{
  static const char *const cases[][2] = {
      {"camlStdlib__List__map_295", "Stdlib.List.map"},
      {"camlMain__fun_1234", "Main.fun"},
      {"camlA__entry", "A.entry"},
      {"camlStdlib__$40_187", "Stdlib.@"},
      {"camlStdlib__$5e_136", "Stdlib.^"},
      {"camlDune__exe__Main__f_7", "Dune.exe.Main.f"},
      {"camlStdlib.List.map_295", "Stdlib.List.map"}, /* OCaml 5.1's separator */
      {"camlX__a$01b_3", "X.a$01b"},                   /* not printable: kept */
      {"camlX__f", "X.f"},
      {"camlX__f_", "X.f_"},
      {"camlX__g_12x", "X.g_12x"},
  };
  static const char *const not_ocaml[] = {"caml_alloc_shr", "main", "camlx__f_1", "caml", ""};
  char out[64];
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ck_assert_uint_eq(ocgc_ocaml_demangle(cases[i][0], out, sizeof out), strlen(cases[i][1]));
    ck_assert_str_eq(out, cases[i][1]);
  }
  for (i = 0; i < sizeof not_ocaml / sizeof not_ocaml[0]; i++)
    ck_assert_uint_eq(ocgc_ocaml_demangle(not_ocaml[i], out, sizeof out), 0);
  /* Too small a buffer: 0, and nothing past it. */
  memset(out, 'z', sizeof out);
  ck_assert_uint_eq(ocgc_ocaml_demangle("camlStdlib__List__map_295", out, 8), 0);
  ck_assert_int_eq(out[8], 'z');
  ck_assert_uint_eq(ocgc_ocaml_demangle(NULL, out, sizeof out), 0);
}
END_TEST

static void check_names(const char *fixture)
{
  struct ocgc_symbols *s = NULL;
  struct ocgc_symbol sym;
  const struct ocgc_symbols_mapping *m;
  size_t n;
  unsigned char *b = load(fixture, &n);
  ck_assert_int_eq(open_bytes(b, n, NULL, &s), 0);
  /* The return address one past a call: named by the call's line. */
  ck_assert_int_eq(ocgc_symbols_lookup(s, ADDR_F + 4, 0, &sym), 1);
  ck_assert_str_eq(sym.function, "f");
  ck_assert_str_eq(sym.symbol, "f");
  ck_assert_uint_eq(sym.symbol_start, ADDR_F);
  ck_assert_ptr_nonnull(sym.file);
  ck_assert_msg(strlen(sym.file) >= 6 && strcmp(sym.file + strlen(sym.file) - 6, "tiny.c") == 0,
                "file %s", sym.file);
  ck_assert_uint_eq(sym.line, 3);
  ck_assert_int_eq(ocgc_symbols_lookup(s, ADDR_G + 1, 1, &sym), 1);
  ck_assert_str_eq(sym.function, "g");
  ck_assert_uint_eq(sym.line, 2);
  ck_assert_int_eq(ocgc_symbols_lookup(s, ADDR_START + 2, 1, &sym), 1);
  ck_assert_str_eq(sym.function, "_start");
  ck_assert_uint_eq(sym.line, 4);
  /* Below the first function, past the last one's size: not named. */
  ck_assert_int_eq(ocgc_symbols_lookup(s, 0x400000, 0, &sym), 0);
  ck_assert_ptr_null(sym.function);
  ck_assert_int_eq(ocgc_symbols_lookup(s, 0x500000, 0, &sym), 0);
  n = ocgc_symbols_mappings(s, &m);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(strlen(m[0].build_id), 40);
  ck_assert_int_eq(m[0].has_functions, 1);
  ck_assert_int_eq(m[0].has_lines, 1);
  ocgc_symbols_close(s);
  free(b);
}

START_TEST(names_and_lines)
{
  check_names("tiny.elf");
  check_names("tiny-zlib.elf");
}
END_TEST

START_TEST(bounds)
{
  struct ocgc_symbols_opts o = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  struct ocgc_symbols *s = NULL;
  struct ocgc_symbol sym;
  size_t n;
  unsigned char *b = load("tiny.elf", &n);
  unsigned named = 0;
  o.max_symbols = 1;
  ck_assert_int_eq(open_bytes(b, n, &o, &s), 0);
  named += (unsigned)ocgc_symbols_lookup(s, ADDR_G + 1, 0, &sym);
  named += (unsigned)ocgc_symbols_lookup(s, ADDR_F + 1, 0, &sym);
  named += (unsigned)ocgc_symbols_lookup(s, ADDR_START + 1, 0, &sym);
  ck_assert_uint_eq(named, 1);
  ocgc_symbols_close(s);
  /* DWARF larger than what may be read: functions, no lines. */
  o.max_symbols = 0;
  o.max_read_bytes = 400;
  ck_assert_int_eq(open_bytes(b, n, &o, &s), 0);
  ck_assert_int_eq(ocgc_symbols_lookup(s, ADDR_F + 1, 0, &sym), 1);
  ck_assert_uint_eq(sym.line, 0);
  ocgc_symbols_close(s);
  o.max_read_bytes = 0;
  o.no_lines = 1;
  ck_assert_int_eq(open_bytes(b, n, &o, &s), 0);
  ck_assert_int_eq(ocgc_symbols_lookup(s, ADDR_F + 1, 0, &sym), 1);
  ck_assert_ptr_null(sym.file);
  ocgc_symbols_close(s);
  o.no_lines = 0;
  o.max_file_bytes = 100;
  ck_assert_int_eq(open_bytes(b, n, &o, &s), -EFBIG);
  ck_assert_ptr_null(s);
  free(b);
}
END_TEST

/* The compressed file with each compressed section's ch_size (the
 * Elf64_Chdr at its start: type, reserved, size) made 1 TiB: refused
 * before anything is inflated, functions still named. */
START_TEST(compressed_bomb)
{
  struct ocgc_symbols *s = NULL;
  struct ocgc_symbol sym;
  size_t n, i, shoff, shnum, hits = 0;
  unsigned char *b = load("tiny-zlib.elf", &n);
  memcpy(&shoff, b + 0x28, 8);
  shnum = (size_t)b[0x3c] | (size_t)b[0x3d] << 8;
  ck_assert_uint_le(shoff + shnum * 64, n);
  for (i = 0; i < shnum; i++) {
    const unsigned char *sh = b + shoff + i * 64;
    uint64_t flags, off, tib = UINT64_C(1) << 40;
    memcpy(&flags, sh + 8, 8);
    memcpy(&off, sh + 24, 8);
    if (!(flags & 0x800) || off + 24 > n) continue; /* SHF_COMPRESSED */
    memcpy(b + off + 8, &tib, 8);
    hits++;
  }
  ck_assert_uint_gt(hits, 0);
  ck_assert_int_eq(open_bytes(b, n, NULL, &s), 0);
  ck_assert_int_eq(ocgc_symbols_lookup(s, ADDR_F + 1, 0, &sym), 1);
  ck_assert_str_eq(sym.function, "f");
  ck_assert_uint_eq(sym.line, 0);
  ocgc_symbols_close(s);
  free(b);
}
END_TEST

/* Whatever the bytes, an address is named only by a function of the
 * file: one of f, g, _start (or none). */
static void read_any(const unsigned char *b, size_t n)
{
  struct ocgc_symbols *s = NULL;
  struct ocgc_symbol sym;
  uint64_t a;
  if (open_bytes(b, n, NULL, &s) != 0) {
    ck_assert_ptr_null(s);
    return;
  }
  for (a = ADDR_G - 4; a < ADDR_START + 0x20; a += 3)
    if (ocgc_symbols_lookup(s, a, 1, &sym) == 1) {
      ck_assert_ptr_nonnull(sym.function);
      ck_assert_ptr_nonnull(sym.symbol);
      ck_assert_uint_lt(strlen(sym.symbol), 1024);
      if (sym.file != NULL) ck_assert_uint_lt(strlen(sym.file), 1024);
    }
  ocgc_symbols_close(s);
}

START_TEST(every_truncation_and_byte)
{
  static const unsigned char values[] = {0x00, 0xff, 0x80};
  const char *fixtures[] = {"tiny.elf", "tiny-zlib.elf"};
  unsigned f;
  for (f = 0; f < 2; f++) {
    size_t n, i, v;
    unsigned char *b = load(fixtures[f], &n);
    for (i = 0; i < n; i += 7) read_any(b, i);
    for (i = 0; i < n; i++) {
      unsigned char keep = b[i];
      for (v = 0; v < sizeof values; v++) {
        b[i] = values[v];
        read_any(b, n);
      }
      b[i] = keep;
    }
    free(b);
  }
}
END_TEST

START_TEST(not_a_regular_file)
{
  struct ocgc_symbols *s = NULL;
  char dir[] = "/tmp/ocgc-test-symbols-XXXXXX", fifo[4096];
  int fd;
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  fd = open(fifo, O_RDWR); /* opened both ways, so the open does not wait */
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ocgc_symbols_open_elf(fd, "fifo", NULL, &s), -EINVAL);
  close(fd);
  unlink(fifo);
  fd = open(dir, O_RDONLY | O_DIRECTORY);
  ck_assert_int_eq(ocgc_symbols_open_elf(fd, "dir", NULL, &s), -EINVAL);
  close(fd);
  rmdir(dir);
  fd = open("/dev/zero", O_RDONLY);
  ck_assert_int_eq(ocgc_symbols_open_elf(fd, "zero", NULL, &s), -EINVAL);
  close(fd);
  ck_assert_ptr_null(s);
}
END_TEST

/* Our own process: its executable's functions by their names, through
 * /proc/self/maps and /proc/self/exe. */
int symbols_probe(int x);
int __attribute__((noinline)) symbols_probe(int x) { return x + 1; }

START_TEST(own_process)
{
  struct ocgc_symbols *s = NULL;
  struct ocgc_symbol sym;
  const struct ocgc_symbols_mapping *m;
  size_t n, i;
  int mains = 0;
  ck_assert_int_eq(ocgc_symbols_open_pid(getpid(), 0, NULL, &s), 0);
  ck_assert_int_eq(ocgc_symbols_lookup(s, (uint64_t)(uintptr_t)&symbols_probe + 1, 0, &sym), 1);
  ck_assert_str_eq(sym.function, "symbols_probe");
  ck_assert_uint_eq(sym.symbol_start, (uint64_t)(uintptr_t)&symbols_probe);
  n = ocgc_symbols_mappings(s, &m);
  for (i = 0; i < n; i++) mains += m[i].is_main;
  ck_assert_int_ge(mains, 1);
  ck_assert_int_eq(ocgc_symbols_lookup(s, 16, 0, &sym), 0);
  ck_assert_uint_eq(sym.mapping, OCGC_SYMBOLS_NONE);
  ocgc_symbols_close(s);
  ck_assert_int_eq(ocgc_symbols_open_pid(0, 0, NULL, &s), -EINVAL);
}
END_TEST

/* max_ns counts from the first file's reading, not from the open: a
 * report opens a process's names when its window begins and may name its
 * frames only when it ends, past max_ns (issue 43: `ocgc report --html`
 * of 10 s or more gave addresses). */
START_TEST(time_from_first_read)
{
  struct ocgc_symbols_opts o = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  struct ocgc_symbols *s = NULL;
  struct ocgc_symbol sym;
  o.max_ns = UINT64_C(50000000); /* 50 ms */
  ck_assert_int_eq(ocgc_symbols_open_pid(getpid(), 0, &o, &s), 0);
  usleep(200000); /* past max_ns since the open */
  ck_assert_int_eq(ocgc_symbols_lookup(s, (uint64_t)(uintptr_t)&symbols_probe + 1, 0, &sym), 1);
  ck_assert_str_eq(sym.function, "symbols_probe");
  ocgc_symbols_close(s);
}
END_TEST

/* A file of [shape], opened with [o]: open_elf's answer. */
static int open_shape(enum elfgen_shape shape, uint64_t n, const struct ocgc_symbols_opts *o,
                      struct ocgc_symbols **s)
{
  char tmpl[] = "/tmp/ocgc-test-symbols-XXXXXX";
  int fd = mkstemp(tmpl), err;
  ck_assert_int_ge(fd, 0);
  unlink(tmpl);
  ck_assert_int_eq(elfgen_write(fd, shape, n, 1), 0);
  err = ocgc_symbols_open_elf(fd, "x", o, s);
  close(fd);
  return err;
}

START_TEST(hostile_shapes)
{
  struct ocgc_symbols_opts o = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  struct ocgc_symbols *s = NULL;
  const struct ocgc_symbols_mapping *m;
  struct ocgc_symbol sym;
  uint64_t held;
  ck_assert_int_eq(open_shape(ELFGEN_SECTIONS, 8193, NULL, &s), OCGC_E_CORRUPT);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(open_shape(ELFGEN_SECTIONS, 8192, NULL, &s), 0); /* at the bound: read */
  ck_assert_int_eq(ocgc_symbols_lookup(s, ELFGEN_FUNC + 1, 1, &sym), 1);
  ocgc_symbols_close(s);
  ck_assert_int_eq(open_shape(ELFGEN_NOTES, 100, NULL, &s), 0);
  ck_assert_int_eq(ocgc_symbols_lookup(s, ELFGEN_FUNC + 1, 1, &sym), 1);
  ck_assert_str_eq(sym.function, "Hostile.f");
  ck_assert_uint_eq(ocgc_symbols_mappings(s, &m), 1);
  ck_assert_str_eq(m[0].build_id, "");
  ocgc_symbols_close(s);
  /* 64 Ki symbols of one 1 KiB name: the name once, not 64 Ki times */
  ck_assert_int_eq(open_shape(ELFGEN_NAMES, 65536, NULL, &s), 0);
  ck_assert_int_eq(ocgc_symbols_lookup(s, ELFGEN_FUNC + 16 * 1000 + 1, 1, &sym), 1);
  ck_assert_uint_eq(strlen(sym.symbol), 1023);
  held = ocgc_symbols_memory(s);
  ck_assert_uint_lt(held, UINT64_C(4) << 20);
  ck_assert_uint_gt(held, 65536 * 24);
  ocgc_symbols_close(s);
  /* what one file's names hold, bounded: some named, the rest not */
  o.max_names_bytes = UINT64_C(1) << 20;
  ck_assert_int_eq(open_shape(ELFGEN_NAMES, 65536, &o, &s), 0);
  ck_assert_uint_le(ocgc_symbols_memory(s), (UINT64_C(1) << 20) + (UINT64_C(64) << 10));
  ck_assert_int_eq(ocgc_symbols_lookup(s, ELFGEN_FUNC + 1, 1, &sym), 1);
  ck_assert_int_eq(ocgc_symbols_lookup(s, ELFGEN_FUNC + 16 * 65535 + 1, 1, &sym), 0);
  ocgc_symbols_close(s);
  ck_assert_uint_eq(ocgc_symbols_memory(NULL), 0);
}
END_TEST

static Suite *symbols_suite(void)
{
  Suite *s = suite_create("symbols");
  TCase *tc = tcase_create("symbols");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, demangle);
  tcase_add_test(tc, names_and_lines);
  tcase_add_test(tc, bounds);
  tcase_add_test(tc, compressed_bomb);
  tcase_add_test(tc, every_truncation_and_byte);
  tcase_add_test(tc, not_a_regular_file);
  tcase_add_test(tc, own_process);
  tcase_add_test(tc, time_from_first_read);
  tcase_add_test(tc, hostile_shapes);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(symbols_suite);
