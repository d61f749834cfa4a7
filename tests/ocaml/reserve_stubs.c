/* reserve_stubs.c - the C stub of reserve.ml: the largest contiguous
 * address-space reservation the process can make now, as a program that
 * reserves a big arena (a garbage collector, a database) would: mmap(NULL,
 * len, PROT_NONE) of the largest len that succeeds, found by halving the
 * step (each try unmapped at once).  PROT_NONE private memory is not
 * committed, so no overcommit setting refuses it for its size. */

#define CAML_NAME_SPACE
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <caml/alloc.h>
#include <caml/mlvalues.h>

value ocgc_test_largest_reservation(value unit);

static int can_reserve(uint64_t len)
{
  void *p = mmap(NULL, (size_t)len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 0;
  munmap(p, (size_t)len);
  return 1;
}

/* In pages: the largest n with can_reserve(n pages), up to 2^52 bytes. */
value ocgc_test_largest_reservation(value unit)
{
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), n = 0, step;
  (void)unit;
  for (step = (UINT64_C(1) << 52) / page; step > 0; step /= 2)
    if (can_reserve((n + step) * page)) n += step;
  return caml_copy_int64((int64_t)(n * page));
}
