"""Text on the canvas: a chain of fonts (a CJK outline font, then the embedded bitmap font), glyph
masks cached per size and angle, measuring and drawing with anchors and rotation.

Why a chain: no single font is guaranteed to hold every character a user types (Droid Sans
Fallback has no Latin letters; the bitmap font has only GB2312 level 1). Each character is looked
up font by font; one found nowhere is drawn as a visible box and reported, never silently dropped.

Also here: which font to use (``choose_fonts``) in the documented order: the user's configured
file (``XLA_CHART_FONT`` or ``chart_font`` in ``~/.xla/settings.json``), the downloaded Microsoft
YaHei at ``~/.xla/fonts/msyh.ttc``, the system's Chinese fonts, then the bitmap font
(``XLA_CHART_BITMAP=1`` / ``chart_bitmap: true`` jumps straight to it).
"""
import json
import math
import os
import struct
import zlib

from . import canvas as cv
from .fonts import Font, FontError, system_font_candidates

_HERE = os.path.dirname(os.path.abspath(__file__))
BITMAP_PATH = os.path.join(_HERE, "data", "bitmap24.bin")
CELL = 24
BASELINE = 20          # rows above the baseline in a 24-pixel cell
GB_ROWS = (1, 2, 3, 6) + tuple(range(16, 56))


def gb2312_cells():
    """Characters of the GB2312 rows the bitmap font stores, in storage order."""
    out = []
    for row in GB_ROWS:
        for col in range(1, 95):
            try:
                out.append(bytes([0xA0 + row, 0xA0 + col]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return out


ASCII = [chr(c) for c in range(0x21, 0x7F)]
_ALIASES = {"\u2014": "\u2015", "\u00b7": "\u30fb", "\u2027": "\u30fb"}


class BitmapFont(object):
    """The embedded 24x24 1-bit font (rasterised from WenQuanYi Micro Hei, Apache-2.0; see
    data/BITMAP-FONT-NOTICE.txt). Glyphs are turned into run rectangles so scaling and rotation use
    the same anti-aliased rasterizer as outline fonts."""

    kind = "bitmap"
    family = "内嵌点阵字库"
    path = BITMAP_PATH
    index = 0
    units_per_em = CELL
    ascender = BASELINE
    descender = BASELINE - CELL

    def __init__(self, path=BITMAP_PATH):
        with open(path, "rb") as f:
            raw = zlib.decompress(f.read())
        if raw[:4] != b"XLB1":
            raise FontError("内嵌点阵字库损坏")
        n_ascii, n_cells = struct.unpack_from(">HH", raw, 4)
        p = 8
        self._adv = raw[p:p + n_ascii]
        p += n_ascii
        self._ascii = raw[p:p + n_ascii * CELL * 2]
        p += n_ascii * CELL * 2
        self._cells = raw[p:p + n_cells * 72]
        self._index = {}
        for i, ch in enumerate(ASCII[:n_ascii]):
            self._index[ch] = ("a", i)
        for i, ch in enumerate(gb2312_cells()[:n_cells]):
            self._index.setdefault(ch, ("c", i))
        self._cache = {}

    def glyph_id(self, ch):
        ch = _ALIASES.get(ch, ch)
        if ch == " ":
            return ("s", 0)
        if ch == "\u3000":
            return ("s", 1)
        return self._index.get(ch, 0)

    def has(self, ch):
        return self.glyph_id(ch) != 0

    def advance(self, gid):
        kind, i = gid
        if kind == "s":
            return 7 if i == 0 else CELL
        if kind == "a":
            return self._adv[i]
        return CELL

    def rows(self, gid):
        """[(row, x0, x1)] runs of set bits, in cell pixels (y down from the cell top)."""
        kind, i = gid
        runs = []
        if kind == "s":
            return runs
        for y in range(CELL):
            if kind == "a":
                bits = struct.unpack_from(">H", self._ascii, (i * CELL + y) * 2)[0] << 8
            else:
                o = i * 72 + y * 3
                c = self._cells
                bits = (c[o] << 16) | (c[o + 1] << 8) | c[o + 2]
            x = 0
            while bits and x < CELL:
                if bits & (1 << (23 - x)):
                    x0 = x
                    while x < CELL and bits & (1 << (23 - x)):
                        x += 1
                    runs.append((y, x0, x))
                else:
                    x += 1
        return runs

    def outline(self, gid):
        """Rectangles of the runs as contours in 'font units' (y up from the baseline)."""
        got = self._cache.get(gid)
        if got is None:
            got = []
            for y, x0, x1 in self.rows(gid):
                top, bot = BASELINE - y, BASELINE - y - 1
                got.append([(x0, bot), (x1, bot), (x1, top), (x0, top)])
            self._cache[gid] = got
        return got


_BITMAP = None
LAZY_BITMAP = "bitmap"   # placeholder in a chain: the 150 KB font is read only when a character needs it


def bitmap_font():
    global _BITMAP
    if _BITMAP is None:
        _BITMAP = BitmapFont()
    return _BITMAP


def _settings():
    home = os.environ.get("HOME") or os.path.expanduser("~")
    try:
        with open(os.path.join(home, ".xla", "settings.json"), "rb") as f:
            data = json.loads(f.read().decode("utf-8-sig") or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def downloaded_font_path():
    home = os.environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".xla", "fonts", "msyh.ttc")


def choose_fonts(font_path=None, bitmap=None, notes=None):
    """A FontChain in the documented order; ``notes`` (a list) collects why fonts were skipped."""
    notes = notes if notes is not None else []
    settings = _settings()
    if bitmap is None:
        bitmap = os.environ.get("XLA_CHART_BITMAP") == "1" or settings.get("chart_bitmap") is True
    fonts = []
    if not bitmap:
        wanted = font_path or os.environ.get("XLA_CHART_FONT") or settings.get("chart_font")
        tried = []
        if wanted and isinstance(wanted, str):
            tried.append((os.path.expanduser(wanted), None, True))
        tried.append((downloaded_font_path(), "Microsoft YaHei", False))
        primary = None
        for path, face, explicit in tried:
            if not os.path.isfile(path):
                if explicit:
                    notes.append("指定的字体文件 %s 不存在，已改用其他字体" % path)
                continue
            try:
                primary = Font(path, face_name=face)
                break
            except (FontError, OSError, struct.error, IndexError, ValueError) as e:
                notes.append("字体 %s 无法使用（%s），已改用其他字体" % (path, e))
        if primary is None:
            for path, face in system_font_candidates():
                try:
                    f = Font(path, face_name=face)
                except (FontError, OSError, struct.error, IndexError, ValueError):
                    continue
                if f.has("中") and f.has("图"):
                    primary = f
                    break
        if primary is not None:
            fonts.append(primary)
    fonts.append(LAZY_BITMAP)
    return FontChain(fonts)


class FontChain(object):
    """Fonts tried in order per character; measuring and drawing strings."""

    def __init__(self, fonts):
        self.fonts = list(fonts)
        if self.fonts and self.fonts[0] is LAZY_BITMAP:
            self.fonts[0] = bitmap_font()
        self.missing = []
        self._pick = {}
        self._masks = {}

    @property
    def primary(self):
        return self.fonts[0]

    def describe(self):
        f = self.fonts[0]
        if f.kind == "bitmap":
            return "内嵌点阵字库（24×24）"
        return "%s（%s）" % (f.family, f.path)

    def _glyph(self, ch):
        got = self._pick.get(ch)
        if got is None:
            got = (None, None)
            for k, font in enumerate(self.fonts):
                if font is LAZY_BITMAP:
                    font = self.fonts[k] = bitmap_font()
                try:
                    gid = font.glyph_id(ch)
                except (struct.error, IndexError, ValueError):
                    gid = 0
                if gid:
                    got = (font, gid)
                    break
            self._pick[ch] = got
            if got[0] is None and not ch.isspace() and ch not in self.missing:
                self.missing.append(ch)
        return got

    def _advance(self, ch, size):
        font, gid = self._glyph(ch)
        if font is None:
            return size * (0.3 if ch.isspace() else 0.8)
        return font.advance(gid) * size / float(font.units_per_em)

    def width(self, text, size):
        return sum(self._advance(ch, size) for ch in text)

    def metrics(self, size):
        """(ascent, descent) in pixels for a size, from the primary font, CJK-friendly."""
        f = self.fonts[0]
        asc = f.ascender / float(f.units_per_em) if f.ascender else 0.88
        desc = -f.descender / float(f.units_per_em) if f.descender else 0.12
        asc, desc = min(max(asc, 0.75), 1.1), min(max(desc, 0.1), 0.35)
        return asc * size, desc * size

    def _mask(self, ch, size, angle, fx, fy):
        key = (ch, size, angle, fx, fy)
        m = self._masks.get(key)
        if m is not None:
            return m
        font, gid = self._glyph(ch)
        ca, sa = math.cos(angle), math.sin(angle)
        if font is None:   # a visible box for a character no font has
            w, h = size * 0.7, size * 0.75
            box = [[(0.05 * size, 0), (w, 0), (w, h), (0.05 * size, h)],
                   [(0.05 * size + 1.2, 1.2), (0.05 * size + 1.2, h - 1.2), (w - 1.2, h - 1.2), (w - 1.2, 1.2)]]
            polys = [[(fx + x * ca - y * sa, fy - x * sa - y * ca) for x, y in c] for c in box]
        else:
            s = size / float(font.units_per_em)
            # font (x, y up) -> pixels (y down), rotated counter-clockwise by angle on screen
            t = (s * ca, -s * sa, -s * sa, -s * ca, fx, fy)
            polys = cv.flatten(font.outline(gid), t, tol=0.15)
        m = cv.mask_from_polygons(polys, S=5) if polys else []
        self._masks[key] = m
        return m

    def draw(self, canvas, x, y, text, size, color, anchor="left", baseline="middle", angle=0.0):
        """Draw text with its anchor at (x, y): anchor left/center/right along the baseline
        direction, baseline top/middle/bottom/alphabetic. angle in degrees, counter-clockwise."""
        if not text:
            return
        k = getattr(canvas, "scale", 1.0)
        if k != 1.0:            # layout units -> the canvas's pixels (Canvas.scale)
            x, y, size = x * k, y * k, size * k
        rad = math.radians(angle)
        ca, sa = math.cos(rad), math.sin(rad)
        w = self.width(text, size)
        asc, desc = self.metrics(size)
        shift = {"left": 0.0, "center": -w / 2.0, "right": -w}[anchor]
        vshift = {"top": asc, "middle": (asc - desc) / 2.0, "bottom": -desc, "alphabetic": 0.0}[baseline]
        # origin of the baseline in pixels: along (ca, -sa), down-normal (sa, ca)
        ox = x + shift * ca + vshift * sa
        oy = y - shift * sa + vshift * ca
        pen = 0.0
        size_key = round(size * 4) / 4.0
        for ch in text:
            adv = self._advance(ch, size)
            if not ch.isspace():
                px, py = ox + pen * ca, oy - pen * sa
                ix, iy = int(math.floor(px)), int(math.floor(py))
                fx, fy = round((px - ix) * 4) / 4.0, round((py - iy) * 4) / 4.0
                canvas.blit_mask(self._mask(ch, size_key, round(rad, 4), fx, fy), ix, iy, color)
            pen += adv
