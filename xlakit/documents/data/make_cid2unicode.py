"""Rebuild cid2unicode.bin from Adobe's cmap-resources (github.com/adobe-type-tools/cmap-resources,
BSD-3-Clause, see LICENSE-cmap-resources.md next to this file).

Why a table of our own: a Type0 font with an Identity-H/V encoding and no ToUnicode map draws
CIDs of a registered character collection (Adobe-GB1, -CNS1, -Japan1, -Korea1); only the
collection's CID -> Unicode table turns them back into text. Each ``cid2code.txt`` lists, per
CID, the Unicode value in the UniXX-UCS2 and UniXX-UTF32 columns.

Format (all integers little-endian): b"XCU1", then per ordering: name length (1 byte), name
(ASCII), byte count of its blob (4 bytes), blob = zlib of ``count`` (4 bytes) followed by
``count`` code points of 3 bytes each (CID order, 0 = no Unicode value). The loader
(``cid_unicode``) inflates only the ordering a font asks for.

Run: python3 xlakit/documents/data/make_cid2unicode.py /path/to/cmap-resources-checkout
"""
import os
import struct
import sys
import zlib

ORDERINGS = (("GB1", "Adobe-GB1-6", "UniGB"), ("CNS1", "Adobe-CNS1-7", "UniCNS"),
             ("Japan1", "Adobe-Japan1-7", "UniJIS"), ("Korea1", "Adobe-Korea1-2", "UniKS"))


# taken last: radicals and compatibility ideographs, private use, the deprecated angle brackets
# (U+3008/3009 are the CJK ones) and the no-break space (CID 1 is the ordinary space)
LAST = ((0x2E80, 0x2FDF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F), (0xE000, 0xF8FF), (0x2329, 0x232A),
        (0xA0, 0xA0))


def _pick(ucs2, utf32):
    """One code point for a CID. Several values are listed where a glyph also stands for a
    Kangxi radical or a compatibility ideograph ("2f08,4eba" for 人): the unified ideograph is
    what a reader searches for, so those forms are taken only when nothing else is listed, as are
    vertical-only forms ('v' suffix). UTF-32 first (its first value is the common one: "·" is
    U+00B7 as in GB 18030, not the katakana middle dot), then UCS-2."""
    def ranked(column):
        values = [v for v in column.split(",") if v and v != "*"]
        return sorted(values, key=lambda v: (v.endswith("v"),
                                             any(a <= int(v.rstrip("v"), 16) <= b for a, b in LAST)))
    for column in (utf32, ucs2):
        values = ranked(column)
        if values:
            return _upright(int(values[0].rstrip("v"), 16))
    return 0


def _upright(point):
    """Vertical presentation forms (U+FE10-FE19, FE30-FE4F: the glyphs of 。、「」（） turned for
    vertical writing) as the characters they stand for (full-width where that is an ASCII sign):
    text is searched and quoted upright."""
    import unicodedata
    if 0xFE10 <= point <= 0xFE19 or 0xFE30 <= point <= 0xFE4F:
        plain = unicodedata.normalize("NFKC", chr(point))
        if len(plain) == 1:
            # ASCII ( , ! ? → their full-width forms, as CJK text writes them
            return ord(plain) + 0xFEE0 if 0x21 <= ord(plain) <= 0x7E else ord(plain)
    return point


def _latin(columns):
    """Half-width and proportional Latin CIDs have no Unicode column, only one-byte codes in the
    legacy CMaps, and those bytes are ASCII."""
    for column in columns:
        for v in column.split(","):
            v = v.rstrip("v")
            if len(v) == 2 and 0x20 <= int(v, 16) <= 0x7E:
                return int(v, 16)
    return 0


def table(text, prefix):
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    head = rows[0]
    i2, i32 = head.index(prefix + "-UCS2"), head.index(prefix + "-UTF32")
    points = {}
    for row in rows[1:]:
        points[int(row[0])] = _pick(row[i2], row[i32]) or _latin(row[1:])
    count = max(points) + 1
    return [points.get(cid, 0) for cid in range(count)]


def main(root):
    out = bytearray(b"XCU1")
    for name, folder, prefix in ORDERINGS:
        with open(os.path.join(root, folder, "cid2code.txt"), encoding="utf-8") as fh:
            cps = table(fh.read(), prefix)
        raw = struct.pack("<I", len(cps)) + b"".join(struct.pack("<I", cp)[:3] for cp in cps)
        blob = zlib.compress(raw, 9)
        out += bytes([len(name)]) + name.encode("ascii") + struct.pack("<I", len(blob)) + blob
        print(name, len(cps), "CIDs,", len(blob), "bytes")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cid2unicode.bin"), "wb") as fh:
        fh.write(bytes(out))


if __name__ == "__main__":
    main(sys.argv[1])
