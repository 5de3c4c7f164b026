"""Fake bold removed glyph by glyph, before pypdf reads the page.

Why: PDF printers without a bold face fake it by drawing each glyph (or each line) again, shifted
by a fraction of a point. When the copies are separate pieces of text, ``pdf_text`` drops them
from pypdf's pieces; but pypdf joins what is drawn on one line into one piece, so a glyph drawn
twice inside one TJ array (``[(省) 985 (省) (人) 985 (人)] TJ``) or a line drawn twice after a
tiny Td ("本科学历本科学历") reaches us as one piece and cannot be told apart from real text.

So the page's content is walked the way a viewer places glyphs: the text matrix (Tm, Td, TD, T*,
TL), the CTM (cm, q/Q), the font and size (Tf), character and word spacing (Tc, Tw), horizontal
scale (Tz), TJ adjustments, and each glyph's advance from the font's widths. A glyph whose code
(in the same font) was drawn among the last few glyphs at (almost) the same spot, closer than a
fraction of the font size, is a copy: the earlier drawing is taken out of the content pypdf
reads (the last copy is where the line goes on, so pypdf's spacing stays right). Text that
really repeats ("哈哈哈哈", a row of dashes) moves along the line by a glyph's width each time and
is kept. Pages without a repeated string in their content are not walked at all (a cheap test
on the raw bytes), and the page's content is changed only in memory, only when copies were found.
"""
import re

LOOK_BACK = 12          # the copies of a glyph follow within a few glyphs
CLOSE = 0.15            # a copy lies within this fraction of the font size of the first drawing
MIN_CLOSE = 0.4         # ... and at least this many points (tiny fonts, rounding)
STRINGS = re.compile(rb"\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]*>")


_BETWEEN = re.compile(rb"(-?\d*\.?\d+)\s+(-?\d*\.?\d+)\s+T[dD]\b|\bTm\b|(?<![\d.])(\d{3,4}(?:\.\d*)?)(?![\d.])")


def _suspect(data):
    """Is some string drawn again right after itself with only a small move between (a Td of a
    point or two, a new Tm, a TJ adjustment that moves back by most of a glyph)? Fake bold always
    is; most pages never are, and are then left alone without parsing their content."""
    last, end = None, 0
    for match in STRINGS.finditer(data):
        token = match.group(0)
        if token == last:
            for move in _BETWEEN.finditer(data, end, match.start()):
                if move.group(3) is not None:
                    if float(move.group(3)) >= 300:
                        return True
                elif move.group(1) is None or (abs(float(move.group(1))) < 3 and abs(float(move.group(2))) < 3):
                    return True
        last, end = token, match.end()
    return False


def _mul(a, b):
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


class _Font(object):
    """What placing glyphs needs from a font: bytes per code and each code's advance (1/1000 em)."""

    def __init__(self, font):
        self.two = False
        self.widths = {}
        self.default = 1000.0 if font is not None and font.get("/Subtype") == "/Type0" else 500.0
        self.single = set()
        if font is None:
            return
        try:
            if font.get("/Subtype") == "/Type0":
                encoding = str(font.get("/Encoding", ""))
                self.two = True
                if not ("Identity" in encoding or "UCS2" in encoding or "UTF16" in encoding):
                    self.single = set(range(0x80))     # GBK-EUC-H and kin: ASCII is one byte
                descendant = font["/DescendantFonts"].get_object()[0].get_object()
                self.default = float(descendant.get("/DW", 1000))
                w = descendant.get("/W")
                w = list(w.get_object()) if w is not None else []
                i = 0
                while i + 1 < len(w):
                    first = int(w[i])
                    nxt = w[i + 1].get_object() if hasattr(w[i + 1], "get_object") else w[i + 1]
                    if isinstance(nxt, list):
                        for k, width in enumerate(nxt):
                            self.widths[first + k] = float(width)
                        i += 2
                    else:
                        if i + 2 >= len(w):
                            break
                        for code in range(first, int(nxt) + 1):
                            self.widths[code] = float(w[i + 2])
                        i += 3
            else:
                first = int(font.get("/FirstChar", 0))
                widths = font.get("/Widths")
                for k, width in enumerate(widths.get_object() if widths is not None else []):
                    self.widths[first + k] = float(width)
        except Exception:  # noqa: BLE001 - unusual widths: the defaults place glyphs well enough
            pass

    def codes(self, raw):
        """(code, bytes) for each glyph of a shown string."""
        i = 0
        while i < len(raw):
            if self.two and raw[i] not in self.single and i + 1 < len(raw):
                yield raw[i] << 8 | raw[i + 1], raw[i:i + 2]
                i += 2
            else:
                yield raw[i], raw[i:i + 1]
                i += 1

    def width(self, code):
        return self.widths.get(code, self.default)


def _raw(value):
    if isinstance(value, bytes):
        return value
    try:
        return value.original_bytes
    except AttributeError:
        return str(value).encode("latin-1", "replace")


def strip_copies(page):
    """Take fake-bold copies out of the page's content (in memory); True when any were found."""
    try:
        contents = page.get_contents()
        if contents is None or not _suspect(contents.get_data()):
            return False
        return _strip(page, contents)
    except Exception:  # noqa: BLE001 - an unusual content stream is read as it is
        return False


def _strip(page, contents):
    from pypdf.generic import DecodedStreamObject, NameObject
    resources = page.get("/Resources")
    fonts = {}
    try:
        fonts = resources.get_object().get("/Font").get_object() if resources is not None else {}
    except AttributeError:
        fonts = {}
    cache = {}
    ctm = [1.0, 0, 0, 1.0, 0, 0]
    stack = []
    tm = tlm = [1.0, 0, 0, 1.0, 0, 0]
    font, size, tc, tw, th, tl = _Font(None), 12.0, 0.0, 0.0, 1.0, 0.0
    recent = []          # (font name, code bytes, x, y, where) of the last glyphs drawn
    name = None
    copies = set()       # (operation, item, byte offset) of each glyph that is a copy
    fonts_at = {}        # operation -> font name, for the rewrite
    operations = contents.operations
    for index, (operands, op) in enumerate(operations):
        if op == b"q":
            stack.append((ctm, font, name, size, tc, tw, th, tl))
        elif op == b"Q" and stack:
            ctm, font, name, size, tc, tw, th, tl = stack.pop()
        elif op == b"cm" and len(operands) == 6:
            ctm = _mul([float(v) for v in operands], ctm)
        elif op == b"BT":
            tm = tlm = [1.0, 0, 0, 1.0, 0, 0]
        elif op == b"Tf" and len(operands) == 2:
            name = str(operands[0])
            if name not in cache:
                try:
                    cache[name] = _Font(fonts[name].get_object())
                except Exception:  # noqa: BLE001
                    cache[name] = _Font(None)
            font, size = cache[name], float(operands[1])
        elif op == b"Tc" and operands:
            tc = float(operands[0])
        elif op == b"Tw" and operands:
            tw = float(operands[0])
        elif op == b"Tz" and operands:
            th = float(operands[0]) / 100.0
        elif op == b"TL" and operands:
            tl = float(operands[0])
        elif op in (b"Td", b"TD") and len(operands) == 2:
            if op == b"TD":
                tl = -float(operands[1])
            tm = tlm = _mul([1, 0, 0, 1, float(operands[0]), float(operands[1])], tlm)
        elif op == b"Tm" and len(operands) == 6:
            tm = tlm = [float(v) for v in operands]
        elif op == b"T*":
            tm = tlm = _mul([1, 0, 0, 1, 0, -tl], tlm)
        elif op in (b"Tj", b"TJ", b"'", b'"'):
            fonts_at[index] = name
            if op in (b"'", b'"'):
                if op == b'"' and len(operands) == 3:
                    tw, tc = float(operands[0]), float(operands[1])
                tm = tlm = _mul([1, 0, 0, 1, 0, -tl], tlm)
            items = operands[0] if op == b"TJ" else operands[-1:]
            for number, item in enumerate(items):
                if isinstance(item, (int, float)) or type(item).__name__ in ("NumberObject", "FloatObject"):
                    tm = _mul([1, 0, 0, 1, -float(item) / 1000.0 * size * th, 0], tm)
                    continue
                if isinstance(item, NameObject):
                    continue
                at = 0
                for code, chunk in font.codes(_raw(item)):
                    full = _mul(tm, ctm)
                    x, y = full[4], full[5]
                    tol = max(MIN_CLOSE, CLOSE * abs(size) * max(abs(v) for v in full[:4]))
                    glyph = (name, chunk, x, y, (index, number, at))
                    for k, (f, c, px, py, where) in enumerate(recent):
                        # two glyphs of one string always move apart (whatever widths the font
                        # claims): only a glyph drawn by another string or TJ item can be a copy
                        if where[:2] == (index, number):
                            continue
                        if f == name and c == chunk and abs(px - x) <= tol and abs(py - y) <= tol:
                            # the earlier drawing goes: the last copy is where the line goes on
                            copies.add(where)
                            del recent[k]
                            break
                    recent = (recent + [glyph])[-LOOK_BACK:]
                    at += len(chunk)
                    advance = (font.width(code) / 1000.0 * size + tc + (tw if chunk == b" " else 0)) * th
                    tm = _mul([1, 0, 0, 1, advance, 0], tm)
    if not copies:
        return False
    _rewrite(operations, copies, cache, fonts_at)
    contents.operations = [o for o in operations if o is not None]   # the setter makes pypdf write it anew
    stream = DecodedStreamObject()
    stream.set_data(contents.get_data())
    page[NameObject("/Contents")] = stream   # in memory only (pypdf 7 has no replace_contents for read pages)
    return True


def _rewrite(operations, copies, cache, fonts_at):
    """The show operations holding copies, without them (in place; None for one left empty)."""
    from pypdf.generic import ArrayObject, ByteStringObject, NameObject
    for index in sorted({where[0] for where in copies}):
        operands, op = operations[index]
        items = operands[0] if op == b"TJ" else operands[-1:]
        kept = []
        for number, item in enumerate(items):
            if isinstance(item, (str, bytes)) and not isinstance(item, NameObject):
                raw = _raw(item)
                font = cache.get(fonts_at[index], _Font(None))
                out, at = bytearray(), 0
                for _code, chunk in font.codes(raw):
                    if (index, number, at) not in copies:
                        out += chunk
                    at += len(chunk)
                if out:
                    kept.append(item if len(out) == len(raw) else ByteStringObject(bytes(out)))
            else:
                kept.append(item)
        if not any(isinstance(k, (str, bytes)) and not isinstance(k, NameObject) for k in kept):
            # nothing left to show: as if never drawn (a ' or " still moves to the next line)
            operations[index] = ([], b"T*") if op in (b"'", b'"') else None
        elif op == b"TJ":
            operations[index] = ([ArrayObject(kept)], op)
        else:
            operations[index] = (list(operands[:-1]) + kept, op)
