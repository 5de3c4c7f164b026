"""Character codes -> Unicode from an embedded TrueType font's own cmap table.

Why: Word, WPS and many PDF printers embed a TrueType font (whole or a subset) as a Type0 font
with Identity-H encoding: the codes in the page are glyph numbers of that font. The ToUnicode
map that should say which character each glyph is may be missing, or wrong (mapping each code to
itself, which is the glyph number again). pypdf then hands back the glyph numbers as if they
were Unicode: a subset font's "Peněžní prostředky" comes out as "3HQČåQtSURVWĜHGN", a full
embedded Chinese font's 黎荣 as 哾㦓 and ： as ˖. The font itself knows better: its cmap table
maps Unicode to glyphs, and read backwards (as pdfminer does) it names the character of every
glyph the page draws.

When the table is used (``lookup``):
- no ToUnicode map and a font whose codes are glyph numbers (the collection is not one of
  Adobe's, which ``cid_unicode`` reads from Adobe's tables): always;
- a ToUnicode map that maps codes to implausible text (characters no Chinese, Japanese or
  European code page has: rare CJK extensions, modifier letters, control pictures) while the
  font's table gives plausible text for the same codes: the font's table wins.
"""
import re
import struct


def _cmap_table(data):
    """Unicode code point -> glyph id from a TrueType font file's cmap (formats 4 and 12)."""
    if len(data) < 12:
        return {}
    count = struct.unpack_from(">H", data, 4)[0]
    where = None
    for i in range(count):
        tag, _sum, offset, length = struct.unpack_from(">4sIII", data, 12 + 16 * i)
        if tag == b"cmap":
            where = offset
    if where is None:
        return {}
    n = struct.unpack_from(">H", data, where + 2)[0]
    subtables = []
    for i in range(n):
        platform, encoding, offset = struct.unpack_from(">HHI", data, where + 4 + 8 * i)
        rank = {(3, 10): 0, (0, 4): 1, (3, 1): 2, (0, 3): 3}.get((platform, encoding), 9 if platform != 0 else 4)
        if platform == 3 and encoding == 0:
            continue                      # a symbol font: its codes are not Unicode
        subtables.append((rank, where + offset))
    result = {}
    for _rank, start in sorted(subtables, reverse=True):      # best last, so it wins
        fmt = struct.unpack_from(">H", data, start)[0]
        if fmt == 4:
            _format4(data, start, result)
        elif fmt == 12:
            groups = struct.unpack_from(">I", data, start + 12)[0]
            for g in range(groups):
                first, last, glyph = struct.unpack_from(">III", data, start + 16 + 12 * g)
                for cp in range(first, min(last, first + 0x10000) + 1):
                    result[cp] = glyph + cp - first
    return result


def _format4(data, start, result):
    segs = struct.unpack_from(">H", data, start + 6)[0] // 2
    ends = struct.unpack_from(">%dH" % segs, data, start + 14)
    starts = struct.unpack_from(">%dH" % segs, data, start + 16 + 2 * segs)
    deltas = struct.unpack_from(">%dh" % segs, data, start + 16 + 4 * segs)
    ranges_at = start + 16 + 6 * segs
    ranges = struct.unpack_from(">%dH" % segs, data, ranges_at)
    for s in range(segs):
        if starts[s] == 0xFFFF:
            continue
        for cp in range(starts[s], ends[s] + 1):
            if ranges[s] == 0:
                glyph = (cp + deltas[s]) & 0xFFFF
            else:
                at = ranges_at + 2 * s + ranges[s] + 2 * (cp - starts[s])
                if at + 2 > len(data):
                    continue
                glyph = struct.unpack_from(">H", data, at)[0]
                if glyph:
                    glyph = (glyph + deltas[s]) & 0xFFFF
            if glyph:
                result[cp] = glyph


def _worse(cp):
    """Order for several characters on one glyph: ordinary ones before private-use and
    compatibility ideographs (U+F900..., which share glyphs with the unified ones)."""
    return (0xE000 <= cp <= 0xF8FF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F, cp)


def glyph_chars(data):
    """Glyph id -> character, the cmap read backwards."""
    chars = {}
    for cp, glyph in sorted(_cmap_table(data).items(), key=lambda kv: _worse(kv[0]), reverse=True):
        chars[glyph] = chr(cp)
    return chars


CODE_PAGES = ("gb2312", "big5", "cp932", "cp949", "cp1252", "cp1250", "cp1251")


def plausible(chars):
    """Share of the characters that some common code page has (what real Chinese, Japanese,
    Korean or European text is made of); glyph numbers read as Unicode rarely are."""
    chars = [c for c in chars if not c.isspace()]
    if not chars:
        return 1.0
    good = 0
    for c in chars:
        for page in CODE_PAGES:
            try:
                c.encode(page)
                good += 1
                break
            except UnicodeEncodeError:
                continue
    return good / float(len(chars))


def _font_file(font):
    """(descendant font, font file stream) for a Type0 font with an embedded TrueType, else None."""
    if font.get("/Subtype") != "/Type0" or font.get("/Encoding") not in ("/Identity-H", "/Identity-V"):
        return None
    descendant = font["/DescendantFonts"].get_object()[0].get_object()
    if descendant.get("/Subtype") != "/CIDFontType2":
        return None
    descriptor = descendant.get("/FontDescriptor")
    if descriptor is None or "/FontFile2" not in descriptor.get_object():
        return None
    return descendant, descriptor.get_object()["/FontFile2"].get_object()   # inflated only when needed


def _to_gid(descendant):
    mapping = descendant.get("/CIDToGIDMap")
    if mapping is None or not hasattr(mapping.get_object(), "get_data"):
        return None                        # Identity (or absent, which means the same)
    data = mapping.get_object().get_data()
    return lambda cid: struct.unpack_from(">H", data, 2 * cid)[0] if 2 * cid + 2 <= len(data) else 0


def _to_unicode(font):
    """The font's own ToUnicode map, code -> text (bfchar and bfrange, two-byte codes)."""
    data = font["/ToUnicode"].get_object().get_data()
    out = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", data, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]*)>", block):
            out[int(src, 16)] = _utf16(dst)
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", data, re.S):
        for low, high, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            low, high, base = int(low, 16), int(high, 16), int(dst, 16)
            for k in range(min(high - low, 0xFFFF) + 1):
                try:
                    out[low + k] = chr(base + k)
                except (ValueError, OverflowError):
                    break
    return out


def _utf16(hexed):
    try:
        return bytes.fromhex(hexed.decode("ascii")).decode("utf-16-be")
    except (ValueError, UnicodeDecodeError):
        return ""


def lookup(font, codes):
    """code -> character for the codes the page draws, from the embedded TrueType font, when
    the font needs it (see the module's docstring); None otherwise. What is learnt about a font
    is kept on its dictionary (in memory), so later pages pay nothing for ordinary fonts."""
    state = getattr(font, "xla_fontmap", None)
    if state is False:
        return None
    try:
        if state is None:
            found = _font_file(font)
            if found is None:
                font.xla_fontmap = False
                return None
            descendant, data = found
            info = descendant.get("/CIDSystemInfo")
            ordering = str(info.get_object().get("/Ordering")) if info is not None else "Identity"
            if "/ToUnicode" not in font and ordering in ("GB1", "CNS1", "Japan1", "Korea1"):
                font.xla_fontmap = False   # Adobe's collection tables (cid_unicode) read those
                return None
            own = _to_unicode(font) if "/ToUnicode" in font else None
            state = font.xla_fontmap = {"data": data, "descendant": descendant, "own": own, "chars": None}
        own = state["own"]
        if own is not None and state["chars"] is None:
            drawn = "".join(own.get(c, "") for c in codes)
            if plausible(drawn) >= 0.9:
                return None                # a believable map: most pages of most files stop here
        if state["chars"] is None:
            state["chars"] = glyph_chars(state["data"].get_data())
        chars, to_gid = state["chars"], _to_gid(state["descendant"])
        table = {}
        for code in codes:
            char = chars.get(to_gid(code) if to_gid else code)
            if char:
                table[code] = char
        if not table:
            return None
        if own is not None:
            drawn = [c for c in codes if c in table]
            before = plausible("".join(own.get(c, "") for c in drawn))
            after = plausible("".join(table[c] for c in drawn))
            if not (after >= 0.9 and after - before >= 0.2):
                return None
        return table
    except Exception:  # noqa: BLE001 - a damaged or unusual font file: pypdf's reading stands
        font.xla_fontmap = False
        return None


def _odd(c):
    """A character that real text almost never holds but glyph numbers read as Unicode often
    land on: private use, control characters and control pictures, U+FFFD, Latin Extended-B /
    IPA / modifier letters, Syriac to Mandaic, CJK Extension A, Yi, and ideographs no Chinese,
    Japanese or Korean code page has."""
    o = ord(c)
    if o < 0x20 or 0x7F <= o < 0xA0 or 0xE000 <= o <= 0xF8FF or o >= 0xF0000 or o == 0xFFFD:
        return True
    if 0x180 <= o <= 0x2FF or 0x700 <= o <= 0x8FF or 0x2400 <= o <= 0x243F:
        return True
    if 0x3400 <= o <= 0x4DBF or 0xA000 <= o <= 0xA4CF:
        return True
    if 0x4E00 <= o <= 0x9FFF:
        for page in ("gbk", "big5", "cp932", "cp949"):
            try:
                c.encode(page)
                return False
            except UnicodeEncodeError:
                continue
        return True
    return False


COMMON_SCRIPTS = {"LATIN", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "FULLWIDTH", "HALFWIDTH", "CIRCLED",
                  "PARENTHESIZED", "DIGIT", "IDEOGRAPHIC", "BOPOMOFO"}


def garbled(text):
    """Does a page's text read like glyph numbers taken for characters (a font whose map is
    missing or wrong and that nothing here could repair)? Then the text must not be shown as if
    it were right. Two signs: many characters real text almost never holds (``_odd``), or
    letters of three or more scripts besides Latin and CJK (real pages use one or two: a Thai,
    Hindi or Arabic page is one script; glyph numbers land all over the plane). Latin letters
    decoded through the wrong table are judged by ``latin_garble`` (too few vowels, capitals in
    mid-word, digits between letters)."""
    import unicodedata
    from .latin_garble import garbled as latin_garbled
    chars = [c for c in text if not c.isspace()]
    if len(chars) < 10:
        return False
    if latin_garbled(text):
        return True
    if sum(1 for c in chars if _odd(c)) >= 0.3 * len(chars):
        return True
    scripts, other = set(), 0
    for c in chars:
        if not c.isalpha():
            continue
        script = unicodedata.name(c, "?").split(" ")[0]
        if script not in COMMON_SCRIPTS:
            scripts.add(script)
            other += 1
    return len(scripts) >= 3 and other >= 0.2 * len(chars)
