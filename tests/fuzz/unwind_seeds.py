#!/usr/bin/env python3
# unwind_seeds.py - writes the seeds of fuzz_unwind's corpus (the input
# layout is fuzz_unwind.c's) into the folder given: CFI a compiler emits
# (a frame-pointer prologue, a leaf, the outermost frame with its return
# address undefined), a CFI loop, DWARF expressions and saved states, with
# and without an .eh_frame_hdr, stack copies that walk through them, one
# of garbage, and a whole ELF file (raw mode) from the elf corpus.
import os
import struct
import sys

TEXT, EH = 0x401000, 0x402000
SP = 0x7FFD0000


def uleb(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out


def sleb(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out += bytes([b | (0 if done else 0x80)])
        if done:
            return out


def pad4(body):
    return body + b"\0" * (-(len(body) + 4) % 8)


def cie():
    body = struct.pack("<I", 0) + b"\x01zR\0" + uleb(1) + sleb(-8) + b"\x10" + uleb(1) + b"\x1b"
    body += b"\x0c\x07\x08" + b"\x90\x01"  # cfa = rsp + 8; rip at cfa - 8
    body = pad4(body)
    return struct.pack("<I", len(body)) + body


# (start offset, length, instructions)
FUNCS = [
    (0x000, 0x40, b"\x41\x0e\x10\x86\x02\x43\x0d\x06"),  # push rbp; mov rsp, rbp
    (0x040, 0x40, b""),  # a leaf
    (0x080, 0x40, b"\x07\x10"),  # outermost: return address undefined
    (0x0C0, 0x40, b"\x0c\x07\x00\x90\x00"),  # cfa = rsp; rip at cfa: a loop
    (0x100, 0x40,  # expressions, saved and restored state
     b"\x0f\x02\x77\x10"  # cfa = DW_OP_breg7 16
     b"\x10\x06\x02\x77\x00"  # rbp at DW_OP_breg7 0
     b"\x16\x03\x01\x31"  # rbx = DW_OP_lit1
     b"\x0a\x41\x0e\x20\x0b"),  # remember; advance; cfa offset 32; restore
    (0x140, 0xEC0, b"\x41\x0e\x28"),  # a frame of 40 bytes, the rest of the text
]


def eh_frame():
    out = cie()
    fdes = []
    for off, ln, ins in FUNCS:
        at = len(out)
        body = struct.pack("<I", at + 4)  # back to the CIE
        body += struct.pack("<i", TEXT + off - (EH + at + 8))
        body += struct.pack("<i", ln) + uleb(0) + ins
        body = pad4(body)
        out += struct.pack("<I", len(body)) + body
        fdes.append((TEXT + off, EH + at))
    return out + b"\0\0\0\0", fdes


def eh_frame_hdr(eh_len, fdes):
    hdr = (EH + eh_len + 7) & ~7
    out = b"\x01\x1b\x03\x3b" + struct.pack("<i", EH - (hdr + 4)) + struct.pack("<I", len(fdes))
    for loc, fde in fdes:
        out += struct.pack("<ii", loc - hdr, fde - hdr)
    return out


def regs(ip_off, sp=SP, **kw):
    r = [0] * 17
    r[7], r[16] = sp, ip_off
    for k, v in kw.items():
        r[{"rbx": 3, "rbp": 6}[k]] = v
    return b"".join(struct.pack("<Q", v & (2**64 - 1)) for v in r)


def stack(words, size=None):
    b = b"".join(struct.pack("<Q", w) for w in words)
    if size is not None:
        b = b.ljust(size, b"\0")
    return struct.pack("<H", len(b)) + b


def seed(mode, rg, stk, with_hdr=True, eh=None):
    e, fdes = eh_frame()
    if eh is not None:
        e = eh
    h = eh_frame_hdr(len(e), fdes) if with_hdr else b""
    return bytes([mode]) + rg + stk + struct.pack("<H", len(e)) + e + h


def main(dest):
    os.makedirs(dest, exist_ok=True)
    # A (after its prologue) -> B -> C, the outermost
    walk = [0, 0, 0, 0, SP + 0x60, TEXT + 0x50, TEXT + 0x90]
    seeds = {
        "seed-walk": seed(0, regs(0x10, rbp=SP + 0x20), stack(walk, 256)),
        "seed-walk-nohdr": seed(0, regs(0x10, rbp=SP + 0x20), stack(walk, 256), False),
        "seed-walk-depth1": seed(4, regs(0x10, rbp=SP + 0x20), stack(walk, 256)),
        "seed-walk-depth3": seed(8, regs(0x10, rbp=SP + 0x20), stack(walk, 256)),
        "seed-loop": seed(0, regs(0xC4), stack([TEXT + 0xC4] * 8)),
        "seed-expr": seed(0, regs(0x104), stack([SP + 0x40, TEXT + 0x90, 0, 0])),
        "seed-big": seed(12, regs(0x150), stack([TEXT + 0x150] * 64)),
        "seed-garbage": seed(0, regs(0x10, rbp=SP + 8),
                             stack([0xDEADBEEF, SP + 8, TEXT + 0x11, SP - 8, 2**64 - 8,
                                    TEXT + 0x1000, TEXT - 1] * 8)),
        "seed-nostack": seed(2, regs(TEXT + 0x90), struct.pack("<H", 0)),
        "seed-empty-cfi": seed(0, regs(0x10), stack(walk), False, b""),
    }
    # DWARF expressions that jump back onto themselves (DW_OP_skip -3): the
    # CFA's, then the return address's
    for name, ins in (("seed-expr-skip-loop", b"\x0f\x03\x2f\xfd\xff"),
                      ("seed-expr-skip-loop-rip", b"\x10\x10\x03\x2f\xfd\xff")):
        FUNCS[4] = (0x100, 0x40, ins)
        seeds[name] = seed(0, regs(0x104), stack([SP + 0x40, TEXT + 0x90, 0, 0]), False)
    elf_seed = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "elf", "seed-tiny")
    if os.path.exists(elf_seed):
        with open(elf_seed, "rb") as f:
            seeds["seed-raw-elf"] = bytes([3]) + regs(0x40010C) + stack([0x400110] * 4) + f.read()
    for name, data in seeds.items():
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
