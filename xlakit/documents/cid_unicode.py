"""CID -> Unicode for Type0 fonts that come without a ToUnicode map.

Why: many Chinese government PDFs (and Japanese/Korean ones) use a CJK font with an Identity-H or
Identity-V encoding, a registered character collection (CIDSystemInfo Adobe-GB1, -CNS1, -Japan1,
-Korea1) and no ToUnicode map. The codes in the page are then CIDs of that collection, and
pypdf, knowing no better, hands them back as if they were Unicode: "安徽" comes out as strange
symbols, even right-to-left "Arabic" that pypdf then reorders. Viewers and pdftotext map the CIDs through the collection's
CID -> Unicode table, and so do we: Adobe's tables (cmap-resources, BSD-3-Clause), compacted by
``data/make_cid2unicode.py`` into ``data/cid2unicode.bin`` (about 185 KB for the four
collections). Only the collection a font asks for is inflated, the first time such a font is
met, so ordinary PDFs pay nothing. ``prepare`` also gives a map to Type0 fonts with an embedded
TrueType whose codes are glyph numbers and whose ToUnicode map is missing or wrong, from the
font's own cmap table (``pdf_fontmap``).
"""
import os
import struct
import zlib

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cid2unicode.bin")
ORDERINGS = ("GB1", "CNS1", "Japan1", "Korea1")
_tables = {}
_blobs = None


def _blob(name):
    global _blobs
    if _blobs is None:
        _blobs = {}
        with open(DATA, "rb") as fh:
            data = fh.read()
        pos = 4
        while pos < len(data):
            size = data[pos]
            key = data[pos + 1:pos + 1 + size].decode("ascii")
            length = struct.unpack_from("<I", data, pos + 1 + size)[0]
            start = pos + 5 + size
            _blobs[key] = data[start:start + length]
            pos = start + length
    return _blobs.get(name)


def table(ordering):
    """The collection's code points by CID (a str, so indexing is cheap), or None."""
    if ordering not in _tables:
        blob = _blob(ordering)
        if blob is None:
            _tables[ordering] = None
        else:
            raw = zlib.decompress(blob)
            count = struct.unpack_from("<I", raw)[0]
            _tables[ordering] = "".join(chr(int.from_bytes(raw[4 + 3 * i:7 + 3 * i], "little"))
                                        for i in range(count))
    return _tables[ordering]


def font_table(font):
    """The CID table for a pypdf font dictionary that needs one: Type0, Identity-H/V, no
    ToUnicode map of its own, an Adobe collection we hold. None for every other font."""
    try:
        if font is None or font.get("/Subtype") != "/Type0":
            return None
        if getattr(font, "xla_cids", None) is not None:      # ours, given on an earlier page
            return font.xla_cids
        if "/ToUnicode" in font or font.get("/Encoding") not in ("/Identity-H", "/Identity-V"):
            return None
        descendant = font["/DescendantFonts"].get_object()[0].get_object()
        info = descendant["/CIDSystemInfo"].get_object()
        if str(info.get("/Registry")) != "Adobe":
            return None
        ordering = str(info.get("/Ordering"))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        return None
    return table(ordering) if ordering in ORDERINGS else None


def prepare(page):
    """Give each such font on the page a ToUnicode map for the codes the page draws, so pypdf
    decodes them as it decodes any font with a map (spacing, line breaks, writing direction).
    Why not the whole table once: pypdf parses a font's map again on every page, and 30,000
    entries a page would cost more than the page itself. The font dictionaries are changed in
    memory only; the file is never written."""
    from .pdf_fontmap import lookup
    try:
        fonts = _fonts(page)
        targets = [(font, cids) for font in fonts for cids in [font_table(font)] if cids]
        others = [font for font in fonts if getattr(font, "xla_fontmap", None) is not False
                  and not any(font is t[0] for t in targets) and font.get("/Subtype") == "/Type0"]
    except Exception:  # noqa: BLE001 - a damaged resource dictionary: read as pypdf would
        return
    if not targets and not others:
        return
    from pypdf.generic import NameObject, StreamObject
    codes = set()
    for data in _streams(page):
        codes.update(_codes(data))
    # embedded TrueType fonts whose codes are glyph numbers with no or a wrong map (pdf_fontmap)
    targets += [(font, table) for font in others for table in [lookup(font, codes)] if table]
    for font, cids in targets:
        if isinstance(cids, str):
            font.xla_cids = cids
        stream = StreamObject()
        stream.set_data(_cmap(codes, cids))
        font[NameObject("/ToUnicode")] = stream


def _fonts(page):
    """The font dictionaries of the page and of its form XObjects."""
    out = []
    for resources in _resources(page):
        fonts = resources.get("/Font")
        if fonts:
            out += [ref.get_object() for ref in fonts.get_object().values()]
    return out


def _resources(page):
    found = []
    first = page.get("/Resources")
    if first is None:
        return found
    found.append(first.get_object())
    for res in list(found):
        xobjects = res.get("/XObject")
        if not xobjects:
            continue
        for ref in xobjects.get_object().values():
            obj = ref.get_object()
            if obj.get("/Subtype") == "/Form" and obj.get("/Resources") is not None:
                found.append(obj["/Resources"].get_object())
    return found


def _streams(page):
    try:
        contents = page.get_contents()
        if contents is not None:
            yield contents.get_data()
        for res in _resources(page):
            for ref in (res.get("/XObject") or {}).values():
                obj = ref.get_object()
                if obj.get("/Subtype") == "/Form":
                    yield obj.get_data()
    except Exception:  # noqa: BLE001 - what could be read is enough
        return


def _codes(data):
    """Every two-byte code in the content's strings (hex and literal; a few too many is harmless)."""
    import re
    for match in re.finditer(rb"(?<!<)<([0-9A-Fa-f\s]+)>(?!>)", data):
        raw = re.sub(rb"\s", b"", match.group(1))
        raw = bytes.fromhex((raw + b"0" * (len(raw) % 2)).decode("ascii"))
        for i in range(0, len(raw) - 1, 2):
            yield raw[i] << 8 | raw[i + 1]
    for raw in _literals(data):
        for i in range(0, len(raw) - 1, 2):
            yield raw[i] << 8 | raw[i + 1]


ESCAPES = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("f"): 12}


def _literals(data):
    """The bytes of each ``( ... )`` string: nested parentheses, backslash and octal escapes."""
    i, n = 0, len(data)
    while True:
        i = data.find(b"(", i)
        if i < 0:
            return
        depth, i, out = 1, i + 1, bytearray()
        while i < n and depth:
            c = data[i]
            if c == 0x5C and i + 1 < n:            # backslash
                nxt = data[i + 1]
                if 0x30 <= nxt <= 0x37:
                    j = i + 1
                    while j < n and j < i + 4 and 0x30 <= data[j] <= 0x37:
                        j += 1
                    out.append(int(data[i + 1:j], 8) & 0xFF)
                    i = j
                    continue
                if nxt in (10, 13):
                    i += 2
                    continue
                out.append(ESCAPES.get(nxt, nxt))
                i += 2
                continue
            if c == 0x28:
                depth += 1
            elif c == 0x29:
                depth -= 1
                if not depth:
                    break
            out.append(c)
            i += 1
        yield bytes(out)
        i += 1


def _cmap(codes, cids):
    entries = []
    for code in sorted(codes):
        if isinstance(cids, dict):
            point = cids.get(code, "\0")
        else:
            point = cids[code] if code < len(cids) else "\0"
        if point != "\0":
            entries.append(b"<%04X> <%s>" % (code, point.encode("utf-16-be").hex().upper().encode()))
    body = [b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /XLA-CID def /CMapType 2 def",
            b"1 begincodespacerange <0000> <FFFF> endcodespacerange"]
    for k in range(0, len(entries), 100):
        chunk = entries[k:k + 100]
        body += [b"%d beginbfchar" % len(chunk)] + chunk + [b"endbfchar"]
    body.append(b"endcmap CMapName currentdict /CMap defineresource pop end end")
    return b"\n".join(body) + b"\n"
