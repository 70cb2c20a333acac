#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Is a PNG screenshot blank? Decodes 8-bit RGB/RGBA non-interlaced PNGs (what headless Chromium
writes) with zlib only (no PIL) and prints: width height nonwhite_fraction colours stddev.
usage: png_stats.py FILE.png [--min-nonwhite F] [--min-colours N]  (exit 1 when below)"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        ln, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + ln]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        if typ == b"IDAT":
            idat += body
        pos += 12 + ln
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, rows = bytearray(stride), []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main(argv):
    w, h, bpp, rows = decode(argv[1])
    min_nonwhite = float(argv[argv.index("--min-nonwhite") + 1]) if "--min-nonwhite" in argv else 0.03
    min_colours = int(argv[argv.index("--min-colours") + 1]) if "--min-colours" in argv else 20
    colours, nonwhite, n, s, s2 = {}, 0, 0, 0.0, 0.0
    for y in range(0, h, 4):
        for x in range(0, w, 4):
            px = rows[y][x * bpp:x * bpp + 3]
            colours[px] = colours.get(px, 0) + 1
            nonwhite += px != b"\xff\xff\xff"
            v = sum(px) / 3.0
            n += 1
            s += v
            s2 += v * v
    frac = nonwhite / n
    std = (s2 / n - (s / n) ** 2) ** 0.5
    print(f"{w} {h} nonwhite={frac:.3f} colours={len(colours)} stddev={std:.1f}")
    return 0 if frac >= min_nonwhite and len(colours) >= min_colours and std > 1.0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
