"""Build data/bitmap24.bin, the embedded fallback font, with this package's own rasterizer.

Run from the repository root (needs the Debian package fonts-wqy-microhei):
    python3 -m xlakit.raster.build_bitmap_font [/path/to/wqy-microhei.ttc]

Source: WenQuanYi Micro Hei, used under the Apache-2.0 option of its dual licence, so the derived
bitmaps can ship in this project (notice in data/BITMAP-FONT-NOTICE.txt). Each glyph is rendered at
a 24-pixel em with the baseline 20 pixels below the cell top; a pixel is set when the outline covers
at least half of it. Layout of the zlib-compressed file:
    b"XLB1", u16 ascii count, u16 cell count,
    ascii advances (1 byte each, pixels), ascii bitmaps (24 rows x 16 bits),
    GB2312 bitmaps (24 rows x 24 bits) for typeset.gb2312_cells() in order.
Why 1 bit: 3,755 hanzi at 4 bits would be 525 KB compressed; 1 bit is ~140 KB, and the drawing code
scales the runs with anti-aliasing, which reads well at chart sizes.
"""
import os
import struct
import sys
import zlib

from . import canvas as cv
from .fonts import Font
from .typeset import ASCII, BASELINE, BITMAP_PATH, CELL, gb2312_cells

SOURCE = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"


def render(font, ch, width):
    gid = font.glyph_id(ch)
    rows = [0] * CELL
    if not gid:
        return rows
    s = CELL / float(font.units_per_em)
    polys = cv.flatten(font.outline(gid), (s, 0, 0, -s, 0, BASELINE), tol=0.05)
    for row, full, partial in cv.rasterize(polys, width, CELL, S=8):
        bits = 0
        for f0, f1 in full:
            for x in range(f0, f1):
                bits |= 1 << (width - 1 - x)
        for x, c in partial.items():
            if c >= 0.5 and 0 <= x < width:
                bits |= 1 << (width - 1 - x)
        rows[row] = bits
    return rows


def build(source=SOURCE, out=BITMAP_PATH):
    font = Font(source, index=0)
    adv, asc_bits, cells = bytearray(), bytearray(), bytearray()
    for ch in ASCII:
        gid = font.glyph_id(ch)
        adv.append(min(255, int(round(font.advance(gid) * CELL / float(font.units_per_em)))))
        for bits in render(font, ch, 16):
            asc_bits += struct.pack(">H", bits & 0xFFFF)
    chars = gb2312_cells()
    missing = 0
    for ch in chars:
        if not font.has(ch):
            missing += 1
        for bits in render(font, ch, 24):
            cells += bytes([(bits >> 16) & 255, (bits >> 8) & 255, bits & 255])
    raw = b"XLB1" + struct.pack(">HH", len(ASCII), len(chars)) + bytes(adv) + bytes(asc_bits) + bytes(cells)
    data = zlib.compress(raw, 9)
    with open(out, "wb") as f:
        f.write(data)
    return len(chars), missing, len(data)


if __name__ == "__main__":
    n, missing, size = build(*(sys.argv[1:2] or [SOURCE]))
    print("%d cells (%d not in the source font), %d bytes -> %s" % (n, missing, size, BITMAP_PATH))
