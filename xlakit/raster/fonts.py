"""Font files read with the standard library only: sfnt/TTC containers, TrueType ``glyf`` outlines
(quadratic, composites), OpenType ``CFF `` outlines (Type 2 charstrings, cubic, local and global
subroutines, CID-keyed fonts with FDArray/FDSelect), ``cmap`` formats 4 and 12, ``hmtx`` metrics and
the ``name`` table, plus discovery of a Chinese system font on Windows, macOS and Linux.

Why our own parser: the tool must draw Chinese text on any machine without Pillow/FreeType. CJK
fonts are big (Noto Sans CJK is 19 MB), so nothing is parsed up front: the file is memory-mapped and
every lookup (cmap group, loca entry, CharStrings INDEX offset, subroutine, FDSelect range) reads
only the bytes it needs. A chart needs perhaps 60 glyphs, so opening a font costs milliseconds.

Outlines come back in font units, y up, as a list of contours; a contour is ``[(x, y), seg, ...]``
where a segment is ``(x, y)`` (line), ``(cx, cy, x, y)`` (quadratic) or ``(c1x, c1y, c2x, c2y, x, y)``
(cubic). Fonts we cannot draw (CFF2/variable collections, Apple's private ``hvgl`` outlines,
bitmap-only faces) raise FontError so the caller moves on to the next font in its list.

The sfnt container, face scoring and font discovery live in ``sfnt``, CFF charstrings in ``cff``;
this module keeps ``Font`` (TrueType ``glyf``, ``cmap``, metrics) and re-exports the rest, so
callers import everything from here as before.
"""
import os
import struct

from .cff import CFF
from .sfnt import (_S16, _U16, _U32, SC_PROBE, FontError, _open_bytes, _tables,  # noqa: F401
                   face_offsets, read_names, score_face, system_font_candidates)


class Font(object):
    """One face of a TrueType/OpenType file: cmap lookup, metrics and outlines (cached)."""

    kind = "outline"

    def __init__(self, path, index=None, face_name=None):
        self.path = path
        try:
            self.data = _open_bytes(path)
        except OSError as e:
            raise FontError("打不开字体文件 %s：%s" % (path, e))
        offsets = face_offsets(self.data)
        self.face_count = len(offsets)
        if index is None:
            index = self._choose_face(offsets, face_name)
        if not 0 <= index < len(offsets):
            raise FontError("字体集合只有 %d 个字体，没有第 %d 个" % (len(offsets), index))
        self.index = index
        self.tables = _tables(self.data, offsets[index])
        self._setup()

    # -- face choice -------------------------------------------------------------------------
    def _choose_face(self, offsets, face_name):
        if len(offsets) == 1:
            return 0
        best, best_score = 0, None
        for i, off in enumerate(offsets):
            tables = _tables(self.data, off)
            names = read_names(self.data, tables)
            if face_name and any(t.lower() == face_name.lower() for (_n, _l, _p, t) in names):
                return i
            if "glyf" not in tables and "CFF " not in tables:
                continue
            covers = False
            try:
                cm = _Cmap(self.data, tables)
                covers = all(cm.lookup(ord(c)) for c in SC_PROBE)
            except FontError:
                continue
            s = score_face(names, covers)
            if best_score is None or s > best_score:
                best, best_score = i, s
        return best

    # -- tables -------------------------------------------------------------------------------
    def _setup(self):
        t, d = self.tables, self.data
        if "CFF2" in t and "CFF " not in t:
            raise FontError("这是 CFF2 可变字体，暂不支持")
        for need in ("head", "hhea", "hmtx", "maxp", "cmap"):
            if need not in t:
                raise FontError("字体缺少 %s 表，无法使用" % need)
        head = t["head"][0]
        self.units_per_em = _U16(d, head + 18)[0] or 1000
        self.loca_format = _S16(d, head + 50)[0]
        hhea = t["hhea"][0]
        self.ascender = _S16(d, hhea + 4)[0]
        self.descender = _S16(d, hhea + 6)[0]
        self.line_gap = _S16(d, hhea + 8)[0]
        self.num_hmetrics = _U16(d, hhea + 34)[0] or 1
        self.num_glyphs = _U16(d, t["maxp"][0] + 4)[0]
        if "OS/2" in t and t["OS/2"][1] >= 74:
            o = t["OS/2"][0]
            asc, desc = _S16(d, o + 68)[0], _S16(d, o + 70)[0]
            if asc > 0 and desc < 0 and not self.ascender:
                self.ascender, self.descender = asc, desc
        self.cmap = _Cmap(d, t)
        self.names = read_names(d, t)
        if "glyf" in t and "loca" in t:
            self.outline_format = "glyf"
            self._glyf = t["glyf"]
            self._loca = t["loca"][0]
            self.cff = None
        elif "CFF " in t:
            self.outline_format = "cff"
            self.cff = CFF(d, t["CFF "][0], t["CFF "][1])
        else:
            raise FontError("字体没有可用的轮廓（glyf/CFF），可能是位图或私有格式")
        self._cache = {}

    @property
    def family(self):
        for want in (16, 1):
            for (nid, lang, p, text) in self.names:
                if nid == want and p == 3 and lang in (0x409, 0x804):
                    return text
        for (nid, _lang, _p, text) in self.names:
            if nid in (16, 1):
                return text
        return os.path.basename(self.path)

    def glyph_id(self, ch):
        return self.cmap.lookup(ord(ch))

    def has(self, ch):
        return self.cmap.lookup(ord(ch)) != 0

    def advance(self, gid):
        d, hmtx = self.data, self.tables["hmtx"][0]
        i = gid if gid < self.num_hmetrics else self.num_hmetrics - 1
        return _U16(d, hmtx + 4 * i)[0]

    def outline(self, gid):
        """Contours of glyph ``gid`` in font units (y up), cached."""
        got = self._cache.get(gid)
        if got is None:
            if self.outline_format == "glyf":
                got = self._glyf_outline(gid, 0)
                shift = self._lsb_shift(gid)
                if shift and got:   # as FreeType/fontTools: hmtx lsb wins over the glyph's xMin
                    got = [[_xf(seg, 1, 0, 0, 1, shift, 0) for seg in c] for c in got]
            else:
                got = self.cff.outline(gid)
            self._cache[gid] = got
        return got

    def _lsb_shift(self, gid):
        rng = self._glyph_range(gid)
        if rng is None:
            return 0
        d, hmtx = self.data, self.tables["hmtx"][0]
        if gid < self.num_hmetrics:
            lsb = _S16(d, hmtx + 4 * gid + 2)[0]
        else:
            lsb = _S16(d, hmtx + 4 * self.num_hmetrics + 2 * (gid - self.num_hmetrics))[0]
        return lsb - _S16(d, rng[0] + 2)[0]

    # -- TrueType glyf -----------------------------------------------------------------------------
    def _glyph_range(self, gid):
        if gid >= self.num_glyphs:
            return None
        d, loca = self.data, self._loca
        if self.loca_format == 0:
            a, b = _U16(d, loca + 2 * gid)[0] * 2, _U16(d, loca + 2 * gid + 2)[0] * 2
        else:
            a, b = struct.unpack_from(">II", d, loca + 4 * gid)
        if b <= a or b > self._glyf[1] + 4:
            return None
        return self._glyf[0] + a, self._glyf[0] + b

    def _glyf_outline(self, gid, depth):
        rng = self._glyph_range(gid)
        if rng is None or depth > 8:
            return []
        d, p = self.data, rng[0]
        ncont = _S16(d, p)[0]
        if ncont >= 0:
            return _simple_glyph(d, p, ncont)
        return self._composite(d, p + 10, depth)

    def _composite(self, d, p, depth):
        out = []
        while True:
            flags, gid = struct.unpack_from(">HH", d, p)
            p += 4
            if flags & 1:
                a1, a2 = struct.unpack_from(">hh", d, p)
                p += 4
            else:
                a1, a2 = struct.unpack_from(">bb", d, p)
                p += 2
            xx, xy, yx, yy = 1.0, 0.0, 0.0, 1.0
            if flags & 0x8:
                xx = yy = _S16(d, p)[0] / 16384.0
                p += 2
            elif flags & 0x40:
                xx, yy = [v / 16384.0 for v in struct.unpack_from(">hh", d, p)]
                p += 4
            elif flags & 0x80:
                xx, xy, yx, yy = [v / 16384.0 for v in struct.unpack_from(">hhhh", d, p)]
                p += 8
            dx, dy = (a1, a2) if flags & 2 else (0, 0)   # point matching is not used by CJK fonts
            if flags & 0x800:   # SCALED_COMPONENT_OFFSET (Apple style)
                dx, dy = dx * xx + dy * yx, dx * xy + dy * yy
            for contour in self._glyf_outline(gid, depth + 1):
                out.append([_xf(seg, xx, xy, yx, yy, dx, dy) for seg in contour])
            if not flags & 0x20:
                break
        return out


def _xf(seg, xx, xy, yx, yy, dx, dy):
    r = []
    for i in range(0, len(seg), 2):
        x, y = seg[i], seg[i + 1]
        r.append(x * xx + y * yx + dx)
        r.append(x * xy + y * yy + dy)
    return tuple(r)


def _simple_glyph(d, p, ncont):
    if ncont == 0:
        return []
    ends = struct.unpack_from(">%dH" % ncont, d, p + 10)
    npts = ends[-1] + 1
    q = p + 10 + 2 * ncont
    q += 2 + _U16(d, q)[0]
    flags = []
    while len(flags) < npts:
        f = d[q]
        q += 1
        flags.append(f)
        if f & 8:
            r = d[q]
            q += 1
            flags.extend([f] * r)
    del flags[npts:]
    xs = []
    v = 0
    for f in flags:
        if f & 2:
            dv = d[q]
            q += 1
            v += dv if f & 16 else -dv
        elif not f & 16:
            v += _S16(d, q)[0]
            q += 2
        xs.append(v)
    ys = []
    v = 0
    for f in flags:
        if f & 4:
            dv = d[q]
            q += 1
            v += dv if f & 32 else -dv
        elif not f & 32:
            v += _S16(d, q)[0]
            q += 2
        ys.append(v)
    contours = []
    start = 0
    for end in ends:
        pts = [(xs[i], ys[i], flags[i] & 1) for i in range(start, end + 1)]
        start = end + 1
        if len(pts) < 2:
            continue
        contours.append(_quad_contour(pts))
    return contours


def _quad_contour(pts):
    """TrueType points (with implied on-curve midpoints) -> [start, segments...]."""
    n = len(pts)
    first = None
    for i in range(n):
        if pts[i][2]:
            first = i
            break
    if first is None:   # all off-curve: start at the midpoint of the first two
        x = (pts[0][0] + pts[1][0]) / 2.0
        y = (pts[0][1] + pts[1][1]) / 2.0
        pts = [(x, y, 1)] + pts[1:] + pts[:1]
        first = 0
        n = len(pts)
    order = pts[first:] + pts[:first]
    start = (order[0][0], order[0][1])
    out = [start]
    ctrl = None
    for x, y, on in order[1:] + [order[0]]:
        if on:
            if ctrl is None:
                out.append((x, y))
            else:
                out.append((ctrl[0], ctrl[1], x, y))
                ctrl = None
        else:
            if ctrl is not None:
                mx, my = (ctrl[0] + x) / 2.0, (ctrl[1] + y) / 2.0
                out.append((ctrl[0], ctrl[1], mx, my))
            ctrl = (x, y)
    if ctrl is not None:
        out.append((ctrl[0], ctrl[1], start[0], start[1]))
    return out


class _Cmap(object):
    """Unicode -> glyph id through the best subtable: (3,10,12), (0,4,12), (3,1,4), (0,3,4)..."""

    def __init__(self, d, tables):
        base = tables["cmap"][0]
        n = _U16(d, base + 2)[0]
        subs = {}
        for i in range(n):
            p, e, off = struct.unpack_from(">HHI", d, base + 4 + 8 * i)
            fmt = _U16(d, base + off)[0]
            subs.setdefault((p, e, fmt), base + off)
        self.d = d
        for key in ((3, 10, 12), (0, 4, 12), (0, 6, 12), (3, 1, 4), (0, 3, 4), (0, 2, 4), (0, 1, 4), (0, 0, 4)):
            if key in subs:
                self.fmt, self.off = key[2], subs[key]
                break
        else:
            for (p, e, fmt), off in subs.items():
                if fmt in (4, 12) and p in (0, 3):
                    self.fmt, self.off = fmt, off
                    break
            else:
                raise FontError("字体没有 Unicode 字符映射（cmap 4/12）")
        if self.fmt == 12:
            self.ngroups = _U32(d, self.off + 12)[0]
        else:
            self.segx2 = _U16(d, self.off + 6)[0]
            seg = self.segx2 // 2
            o = self.off + 14
            self.ends = struct.unpack_from(">%dH" % seg, d, o)
            self.starts = struct.unpack_from(">%dH" % seg, d, o + self.segx2 + 2)
            self.deltas = struct.unpack_from(">%dh" % seg, d, o + 2 * self.segx2 + 2)
            self.ro_base = o + 3 * self.segx2 + 2
            self.ros = struct.unpack_from(">%dH" % seg, d, self.ro_base)
        self._memo = {}

    def lookup(self, cp):
        got = self._memo.get(cp)
        if got is None:
            got = self._lookup12(cp) if self.fmt == 12 else self._lookup4(cp)
            self._memo[cp] = got
        return got

    def _lookup12(self, cp):
        d, base = self.d, self.off + 16
        lo, hi = 0, self.ngroups - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            s, e, g = struct.unpack_from(">III", d, base + 12 * mid)
            if cp < s:
                hi = mid - 1
            elif cp > e:
                lo = mid + 1
            else:
                return g + cp - s
        return 0

    def _lookup4(self, cp):
        if cp > 0xFFFF:
            return 0
        import bisect
        i = bisect.bisect_left(self.ends, cp)
        if i >= len(self.ends) or self.starts[i] > cp:
            return 0
        ro = self.ros[i]
        if ro == 0:
            return (cp + self.deltas[i]) & 0xFFFF
        addr = self.ro_base + 2 * i + ro + 2 * (cp - self.starts[i])
        g = _U16(self.d, addr)[0]
        return (g + self.deltas[i]) & 0xFFFF if g else 0
