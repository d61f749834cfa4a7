#!/usr/bin/env python3
"""elf_hostile.py - a runnable executable made hostile to a symbolizer:
the kernel runs a program by its program headers, so its section headers
may claim what a crafted file would (elfgen.c's shapes, on a real
program):
  sections  4 Mi sections (extended numbering), the table sparse
  lines     its .debug_line replaced by one zlib-compressed table of 16 Mi rows
  notes     8000 more note sections over one 64 KiB region
  names     its symbol table replaced by 512 Ki functions sharing a 1 KiB name
Usage: elf_hostile.py SHAPE IN OUT (ELF64 little-endian)."""
import os
import struct
import sys
import zlib


def shdr(b, i, off, ent):
    return list(struct.unpack_from('<IIQQQQIIQQ', b, off + i * ent))


def main():
    shape, src, dst = sys.argv[1:4]
    data = bytearray(open(src, 'rb').read())
    shoff, = struct.unpack_from('<Q', data, 0x28)
    ent, nsec, strndx = struct.unpack_from('<HHH', data, 0x3a)
    secs = [shdr(data, i, shoff, ent) for i in range(nsec)]
    strs = secs[strndx]
    def name(s):
        o = strs[4] + s[0]
        return bytes(data[o:data.index(b'\0', o)]).decode('latin-1')
    def blob(b):
        while len(data) % 64:
            data.append(0)
        at = len(data)
        data.extend(b)
        return at
    extra = []
    total = None
    if shape == 'lines':
        head = bytes([4, 0, 0, 0, 0, 0, 1, 1, 1, 0xfb, 14, 13,
                      0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0]) + b'a.ml\0\0\0\0' + b'\0'
        head = head[:2] + struct.pack('<I', len(head) - 6) + head[6:]
        text = next(s for s in secs if name(s) == '.text')
        rows = 16 << 20
        prog = b'\0\x09\x02' + struct.pack('<Q', text[3]) + bytes([33]) * rows + b'\0\x01\x01'
        body = head + prog
        table = struct.pack('<I', len(body)) + body
        z = struct.pack('<IIQQ', 1, 0, len(table), 1) + zlib.compress(table, 9)
        at = blob(z)
        line = [s for s in secs if name(s) == '.debug_line']
        if not line:
            sys.exit('no .debug_line: compile with -g')
        s = line[0]
        s[2] |= 0x800
        s[4], s[5] = at, len(z)
    elif shape == 'notes':
        at = blob(bytes(65536))
        extra = [[0, 7, 2, 0, at, 65536, 0, 0, 4, 0] for _ in range(8000)]
    elif shape == 'names':
        symtab = next(s for s in secs if s[1] == 2)
        text_i = next(i for i, s in enumerate(secs) if name(s) == '.text')
        text = secs[text_i]
        nm = b'camlHostile__' + b'f' * 1008 + b'_1'
        str_at = blob(b'\0' + nm + b'\0')
        n = 512 << 10
        syms = bytearray(24 * (n + 1))
        for i in range(n):
            struct.pack_into('<IBBHQQ', syms, 24 * (i + 1), 1, 0x12, 0, text_i,
                             text[3] + (16 * i) % max(text[5], 16), 16)
        sym_at = blob(bytes(syms))
        extra = [[0, 3, 0, 0, str_at, len(nm) + 2, 0, 0, 1, 0]]
        symtab[4], symtab[5], symtab[6] = sym_at, len(syms), nsec
    elif shape == 'sections':
        total = 4 << 20
        secs[0][5] = total
    else:
        sys.exit('shape: sections, lines, notes or names')
    allsecs = secs + extra
    while len(data) % 64:
        data.append(0)
    new_off = len(data)
    for s in allsecs:
        data.extend(struct.pack('<IIQQQQIIQQ', *s))
    count = total if total is not None else len(allsecs)
    struct.pack_into('<Q', data, 0x28, new_off)
    struct.pack_into('<H', data, 0x3c, count if count < 0xff00 else 0)
    with open(dst, 'wb') as f:
        f.write(data)
        if total is not None:
            f.truncate(new_off + total * ent)
    os.chmod(dst, 0o755)


main()
