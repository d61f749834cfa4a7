/* cfi_check.c - the checks of cfi_check.h, over CFI bytes a target's file
 * holds (hostile): a few bytes of CFI may name register 2^28 (libdw then
 * allocates a table of that many rules: gigabytes, found by fuzz_unwind)
 * or remember the state a million times (a copy of the table each), or
 * hold an expression that loops (libdwfl leaks at each).
 *
 * Invariants: every read is within [p, p + n) and within the entry being
 * read (an entry that overruns the section is refused); each entry is
 * read once, plus its CIE's header (at most MAX_AUG bytes of augmentation
 * string) for an FDE: time linear in n; nothing is allocated. */

#include <stdint.h>
#include <string.h>

#include "cfi_check.h"

#define MAX_AUG 16u

struct rd {
  const unsigned char *p;
  size_t at, end; /* end: the entry's */
};

static int u8(struct rd *r, unsigned *v)
{
  if (r->at >= r->end) return -1;
  *v = r->p[r->at++];
  return 0;
}

static int skip(struct rd *r, uint64_t k)
{
  if (k > r->end - r->at) return -1;
  r->at += (size_t)k;
  return 0;
}

static int uleb(struct rd *r, uint64_t *v)
{
  unsigned b, shift = 0;
  *v = 0;
  do {
    if (u8(r, &b) != 0) return -1;
    if (shift < 64) *v |= (uint64_t)(b & 0x7f) << shift;
    else if ((b & 0x7f) != 0) *v = UINT64_MAX; /* too large: refused by the caller */
    shift += 7;
  } while (b & 0x80);
  return 0;
}

static int reg(struct rd *r)
{
  uint64_t v;
  return uleb(r, &v) == 0 && v <= CFI_MAX_REG ? 0 : -1;
}

/* The size of a pointer of encoding [enc] (DW_EH_PE_*), 0 for a LEB128,
 * -1 unknown. */
static int enc_size(unsigned enc)
{
  if (enc == 0xff) return -1; /* omit: no address where one is needed */
  switch (enc & 0x0f) {
  case 0x00: return 8; /* absptr (64-bit files) */
  case 0x01: case 0x09: return 0;
  case 0x02: case 0x0a: return 2;
  case 0x03: case 0x0b: return 4;
  case 0x04: case 0x0c: return 8;
  default: return -1;
  }
}

static int pointer(struct rd *r, int size)
{
  uint64_t v;
  if (size < 0) return -1;
  return size == 0 ? uleb(r, &v) : skip(r, (uint64_t)size);
}

/* A DWARF expression of [len] bytes at r->at, as a CFI rule holds one:
 * only the operations whose operands this knows, and no branch (DW_OP_bra,
 * DW_OP_skip): libdwfl's evaluator, on an expression that jumps back onto
 * itself, gives up and leaks its stack (found by fuzz_unwind). */
static int expression(struct rd *r, uint64_t len)
{
  struct rd e;
  unsigned op;
  uint64_t v;
  if (len > r->end - r->at) return -1;
  e.p = r->p;
  e.at = r->at;
  e.end = r->at + (size_t)len;
  r->at = e.end;
  while (e.at < e.end) {
    if (u8(&e, &op) != 0) return -1;
    if ((op >= 0x12 && op <= 0x27 && op != 0x15 && op != 0x23) || (op >= 0x29 && op <= 0x2e) ||
        (op >= 0x30 && op <= 0x6f) || op == 0x06 || op == 0x96 || op == 0x9c || op == 0x9f)
      continue; /* no operand */
    if (op >= 0x70 && op <= 0x8f) { /* bregN: sleb */
      if (uleb(&e, &v) != 0) return -1;
      continue;
    }
    switch (op) {
    case 0x08: case 0x09: case 0x15: case 0x94: if (skip(&e, 1) != 0) return -1; break;
    case 0x0a: case 0x0b: if (skip(&e, 2) != 0) return -1; break;
    case 0x0c: case 0x0d: if (skip(&e, 4) != 0) return -1; break;
    case 0x03: case 0x0e: case 0x0f: if (skip(&e, 8) != 0) return -1; break;
    case 0x10: case 0x11: case 0x23: case 0x90: case 0x91:
      if (uleb(&e, &v) != 0) return -1;
      break;
    case 0x92: if (uleb(&e, &v) != 0 || uleb(&e, &v) != 0) return -1; break; /* bregx */
    default: return -1; /* branches, calls, pieces, vendor operations */
    }
  }
  return 0;
}

/* The instructions [r->at, r->end); [addr] the size of an address. */
static int instructions(struct rd *r, int addr)
{
  unsigned op, states = 0, remembered = 0;
  uint64_t v;
  while (r->at < r->end) {
    if (u8(r, &op) != 0) return -1;
    switch (op & 0xc0) {
    case 0x40: continue;                  /* advance_loc */
    case 0x80: if (uleb(r, &v) != 0) return -1; continue; /* offset: reg < 64 */
    case 0xc0: continue;                  /* restore: reg < 64 */
    default: break;
    }
    switch (op) {
    case 0x00: case 0x2d: break;                       /* nop, GNU_window_save */
    case 0x01: if (pointer(r, addr) != 0) return -1; break; /* set_loc */
    case 0x02: if (skip(r, 1) != 0) return -1; break;
    case 0x03: if (skip(r, 2) != 0) return -1; break;
    case 0x04: if (skip(r, 4) != 0) return -1; break;
    case 0x1d: if (skip(r, 8) != 0) return -1; break; /* MIPS_advance_loc8 */
    case 0x05: case 0x11: case 0x14: case 0x15: case 0x2f: /* reg, (s)uleb */
    case 0x0c: case 0x12:                              /* def_cfa(_sf): reg, (s)uleb */
      if (reg(r) != 0 || uleb(r, &v) != 0) return -1;
      break;
    case 0x06: case 0x07: case 0x08: case 0x0d: /* restore_ext, undefined, same_value, def_cfa_register */
      if (reg(r) != 0) return -1;
      break;
    case 0x09: if (reg(r) != 0 || reg(r) != 0) return -1; break; /* register */
    case 0x0a: /* remember_state: a copy of the rules, at each lookup */
      if (++states > CFI_MAX_STATES || ++remembered > CFI_MAX_REMEMBERED) return -1;
      break;
    case 0x0b: if (states > 0) states--; break;                  /* restore_state */
    case 0x0e: case 0x13: case 0x2e: if (uleb(r, &v) != 0) return -1; break;
    case 0x0f: if (uleb(r, &v) != 0 || expression(r, v) != 0) return -1; break; /* def_cfa_expression */
    case 0x10: case 0x16:                                        /* (val_)expression */
      if (reg(r) != 0 || uleb(r, &v) != 0 || expression(r, v) != 0) return -1;
      break;
    default: return -1;
    }
  }
  return 0;
}

/* Read an entry's length and id at [*at]: its bounds in r.  1 at the end
 * of the section (a zero length), 0, -1. */
static int entry(const unsigned char *p, size_t n, size_t at, struct rd *r, uint64_t *id,
                 size_t *id_at, int *wide)
{
  uint32_t l32;
  uint64_t len;
  if (n - at < 4) return n == at ? 1 : -1;
  memcpy(&l32, p + at, 4);
  at += 4;
  *wide = l32 == 0xffffffffu;
  if (l32 == 0) return 1;
  if (*wide) {
    if (n - at < 8) return -1;
    memcpy(&len, p + at, 8);
    at += 8;
  } else {
    len = l32;
  }
  if (len > n - at || len < (*wide ? 8u : 4u) || len > CFI_MAX_ENTRY) return -1;
  r->p = p;
  r->at = at;
  r->end = at + (size_t)len;
  *id_at = at;
  if (*wide) {
    memcpy(id, p + at, 8);
    r->at += 8;
  } else {
    uint32_t i32;
    memcpy(&i32, p + at, 4);
    *id = i32;
    r->at += 4;
  }
  return 0;
}

struct cie {
  int fde_enc; /* size of an FDE's addresses, as enc_size */
  int z;       /* an augmentation data length precedes an FDE's instructions */
};

/* The CIE whose fields start at r->at (after its id): up to its
 * instructions (r->at then points at them). */
static int cie_head(struct rd *r, int eh, struct cie *c)
{
  char aug[MAX_AUG + 1];
  unsigned version, b, i = 0;
  uint64_t v;
  c->fde_enc = 8;
  c->z = 0;
  if (u8(r, &version) != 0 || (version != 1 && version != 3 && version != 4)) return -1;
  do {
    if (u8(r, &b) != 0 || i >= MAX_AUG) return -1;
    aug[i++] = (char)b;
  } while (b != 0);
  if (version == 4) { /* address and segment selector sizes */
    unsigned as, ss;
    if (u8(r, &as) != 0 || u8(r, &ss) != 0 || (as != 4 && as != 8) || ss != 0) return -1;
    c->fde_enc = (int)as;
  }
  if (uleb(r, &v) != 0 || uleb(r, &v) != 0) return -1; /* code and data alignment */
  if (version == 1) {
    if (u8(r, &b) != 0 || b > CFI_MAX_REG) return -1;
  } else if (reg(r) != 0) {
    return -1;
  }
  if (aug[0] == '\0') return 0;
  if (aug[0] != 'z' || !eh) return -1; /* without 'z' the instructions cannot be found */
  c->z = 1;
  if (uleb(r, &v) != 0 || v > r->end - r->at) return -1;
  {
    struct rd d = {r->p, r->at, r->at + (size_t)v};
    for (i = 1; aug[i] != '\0'; i++) {
      unsigned e;
      switch (aug[i]) {
      case 'R':
        if (u8(&d, &e) != 0 || enc_size(e) < 0) return -1;
        c->fde_enc = enc_size(e);
        break;
      case 'P':
        if (u8(&d, &e) != 0 || pointer(&d, enc_size(e)) != 0) return -1;
        break;
      case 'L':
        if (u8(&d, &e) != 0) return -1;
        break;
      case 'S': case 'B': break;
      default: return -1;
      }
    }
  }
  r->at += (size_t)v;
  return 0;
}

int cfi_check(const unsigned char *p, size_t n, int eh)
{
  size_t at = 0;
  for (;;) {
    struct rd r;
    struct cie c;
    uint64_t id, v;
    size_t id_at;
    int wide, e = entry(p, n, at, &r, &id, &id_at, &wide);
    if (e == 1) return 0;
    if (e != 0) return -1;
    at = r.end;
    if (eh ? id == 0 : id == (wide ? UINT64_MAX : 0xffffffffu)) {
      if (cie_head(&r, eh, &c) != 0 || instructions(&r, c.fde_enc) != 0) return -1;
      continue;
    }
    /* an FDE: its CIE, at id_at - id (.eh_frame) or at id (.debug_frame) */
    {
      struct rd cr;
      uint64_t cid;
      size_t cid_at, cie_at;
      int cwide;
      if (eh ? id > id_at : id >= n) return -1;
      cie_at = eh ? id_at - (size_t)id : (size_t)id;
      if (entry(p, n, cie_at, &cr, &cid, &cid_at, &cwide) != 0 ||
          (eh ? cid != 0 : cid != (cwide ? UINT64_MAX : 0xffffffffu)) ||
          cie_head(&cr, eh, &c) != 0)
        return -1;
    }
    if (pointer(&r, c.fde_enc) != 0 || pointer(&r, c.fde_enc) != 0) return -1;
    if (c.z && (uleb(&r, &v) != 0 || skip(&r, v) != 0)) return -1;
    if (instructions(&r, c.fde_enc) != 0) return -1;
  }
}
