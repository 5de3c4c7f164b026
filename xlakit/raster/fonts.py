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
"""
import mmap
import os
import re
import struct
import sys


class FontError(Exception):
    """The file is not a font we can draw with (the message says why, in Chinese)."""


_U16 = struct.Struct(">H").unpack_from
_S16 = struct.Struct(">h").unpack_from
_U32 = struct.Struct(">I").unpack_from


def _open_bytes(path):
    """A read-only mmap of the file (or its bytes for tiny/unmappable files)."""
    with open(path, "rb") as f:
        try:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):
            return f.read()


def face_offsets(data):
    """Offsets of the faces in an sfnt or TTC file."""
    tag = bytes(data[:4])
    if tag == b"ttcf":
        n = _U32(data, 8)[0]
        if n <= 0 or n > 1000:
            raise FontError("字体集合文件头损坏")
        return list(struct.unpack_from(">%dI" % n, data, 12))
    if tag in (b"\x00\x01\x00\x00", b"OTTO", b"true"):
        return [0]
    if tag in (b"wOFF", b"wOF2"):
        raise FontError("WOFF 网页字体需要先解压，暂不支持")
    raise FontError("不是 TrueType/OpenType 字体文件")


def _tables(data, offset):
    num = _U16(data, offset + 4)[0]
    out = {}
    for i in range(num):
        rec = offset + 12 + 16 * i
        tag = bytes(data[rec:rec + 4]).decode("latin-1")
        off, length = struct.unpack_from(">II", data, rec + 8)
        if off + length > len(data) + 8:
            continue
        out[tag] = (off, length)
    return out


def _decode_name(platform, encoding, raw):
    try:
        if platform == 3 or platform == 0:
            return raw.decode("utf-16-be")
        if platform == 1:
            return raw.decode("mac_roman" if encoding == 0 else "latin-1")
    except (UnicodeDecodeError, LookupError):
        pass
    return None


def read_names(data, tables):
    """[(nameID, langID, platform, text)] for family/full/PostScript/typographic names."""
    if "name" not in tables:
        return []
    base = tables["name"][0]
    count, strings = _U16(data, base + 2)[0], _U16(data, base + 4)[0]
    out = []
    for i in range(count):
        p, e, lang, nid, length, off = struct.unpack_from(">6H", data, base + 6 + 12 * i)
        if nid not in (1, 2, 4, 6, 16, 17):
            continue
        start = base + strings + off
        text = _decode_name(p, e, bytes(data[start:start + length]))
        if text:
            out.append((nid, lang, p, text))
    return out


SC_PROBE = "中文图表"
_SC_RE = re.compile(r"(sc\b|SC\b|CJKsc|GB|CN\b|SC-|YaHei|SimSun|SimHei|PingFang SC|Hiragino Sans GB|WenQuanYi|Heiti SC)")


def score_face(names, covers_probe):
    """How well a face suits Simplified Chinese (the TTC order carries no meaning)."""
    score = 0
    texts = [t for (_nid, _lang, _p, t) in names]
    if any(_SC_RE.search(t) for t in texts) or any(lang == 0x804 and p == 3 for (_n, lang, p, _t) in names):
        score += 10
    if any("Mono" in t for t in texts):
        score -= 3
    if covers_probe:
        score += 5
    return score


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


# -- CFF ------------------------------------------------------------------------------------------

class _Index(object):
    """A CFF INDEX read lazily: item(i) slices only that object."""

    def __init__(self, d, off):
        self.d = d
        self.count = _U16(d, off)[0]
        if self.count == 0:
            self.end = off + 2
            return
        self.osize = d[off + 2]
        self.offs = off + 3
        self.data0 = off + 3 + (self.count + 1) * self.osize - 1
        self.end = self.data0 + self._off(self.count)

    def _off(self, i):
        p, s, d = self.offs + i * self.osize, self.osize, self.d
        if s == 1:
            return d[p]
        if s == 2:
            return _U16(d, p)[0]
        if s == 3:
            return (d[p] << 16) | (d[p + 1] << 8) | d[p + 2]
        return _U32(d, p)[0]

    def span(self, i):
        return self.data0 + self._off(i), self.data0 + self._off(i + 1)

    def item(self, i):
        a, b = self.span(i)
        return bytes(self.d[a:b])


def _dict(raw):
    """Parse a CFF DICT into {operator: [operands]} (two-byte operators as 1200 + b)."""
    out, ops, i, n = {}, [], 0, len(raw)
    while i < n:
        b = raw[i]
        if b <= 21:
            if b == 12:
                key = 1200 + raw[i + 1]
                i += 2
            else:
                key = b
                i += 1
            out[key] = ops
            ops = []
        elif b == 28:
            ops.append(struct.unpack_from(">h", raw, i + 1)[0])
            i += 3
        elif b == 29:
            ops.append(struct.unpack_from(">i", raw, i + 1)[0])
            i += 5
        elif b == 30:
            s, i = "", i + 1
            done = False
            while not done:
                byte = raw[i]
                i += 1
                for nib in (byte >> 4, byte & 15):
                    if nib == 15:
                        done = True
                        break
                    s += "0123456789.EE?-"[nib] if nib != 12 else "E-"
            try:
                ops.append(float(s))
            except ValueError:
                ops.append(0.0)
        elif 32 <= b <= 246:
            ops.append(b - 139)
            i += 1
        elif 247 <= b <= 250:
            ops.append((b - 247) * 256 + raw[i + 1] + 108)
            i += 2
        elif 251 <= b <= 254:
            ops.append(-(b - 251) * 256 - raw[i + 1] - 108)
            i += 2
        else:
            i += 1
    return out


def _bias(count):
    return 107 if count < 1240 else (1131 if count < 33900 else 32768)


class _Private(object):
    def __init__(self, d, base, top_size_off):
        size, off = (top_size_off + [0, 0])[:2] if top_size_off else (0, 0)
        start = base + int(off)
        pd = _dict(bytes(d[start:start + int(size)])) if size else {}
        self.subrs = None
        self.bias = 0
        if 19 in pd and pd[19]:
            self.subrs = _Index(d, start + int(pd[19][0]))
            self.bias = _bias(self.subrs.count)


class CFF(object):
    """The ``CFF `` table of an OpenType font (one font per table, as OpenType requires)."""

    def __init__(self, d, off, length):
        self.d, self.base = d, off
        if d[off] != 1:
            raise FontError("CFF 版本 %d 不支持" % d[off])
        hdr = d[off + 2]
        names = _Index(d, off + hdr)
        tops = _Index(d, names.end)
        strings = _Index(d, tops.end)
        self.gsubrs = _Index(d, strings.end)
        self.gbias = _bias(self.gsubrs.count)
        top = _dict(tops.item(0))
        if top.get(1206, [2])[0] != 2:
            raise FontError("不是 Type 2 字形程序")
        if 17 not in top:
            raise FontError("CFF 缺少 CharStrings")
        self.charstrings = _Index(d, off + int(top[17][0]))
        self.fdselect = None
        if 1230 in top and 1236 in top:   # ROS + FDArray: CID-keyed
            fds = _Index(d, off + int(top[1236][0]))
            self.privates = []
            for i in range(fds.count):
                fd = _dict(fds.item(i))
                self.privates.append(_Private(d, off, fd.get(18)))
            self.fdselect = off + int(top[1237][0]) if 1237 in top else None
            self._fdfmt = d[self.fdselect] if self.fdselect is not None else None
        else:
            self.privates = [_Private(d, off, top.get(18))]
        self.count = self.charstrings.count

    def _fd(self, gid):
        if self.fdselect is None:
            return 0
        d, p = self.d, self.fdselect
        if self._fdfmt == 0:
            return d[p + 1 + gid]
        if self._fdfmt == 3:
            n = _U16(d, p + 1)[0]
            lo, hi = 0, n - 1
            while lo <= hi:   # ranges: (first gid u16, fd u8), then a sentinel
                mid = (lo + hi) // 2
                first = _U16(d, p + 3 + 3 * mid)[0]
                nxt = _U16(d, p + 3 + 3 * (mid + 1))[0]
                if gid < first:
                    hi = mid - 1
                elif gid >= nxt:
                    lo = mid + 1
                else:
                    return d[p + 3 + 3 * mid + 2]
        return 0

    def outline(self, gid):
        if gid >= self.count:
            return []
        fd = self._fd(gid)
        priv = self.privates[fd] if fd < len(self.privates) else self.privates[0]
        return T2(self, priv).run(self.charstrings.item(gid))


class T2(object):
    """A Type 2 charstring interpreter producing cubic contours (hints are read and ignored)."""

    def __init__(self, cff, priv):
        self.cff, self.priv = cff, priv
        self.contours = []
        self.cur = None
        self.x = self.y = 0.0
        self.stack = []
        self.nstems = 0
        self.width_done = False
        self.transient = [0.0] * 32
        self.ended = False
        self.depth = 0

    def run(self, code):
        self._exec(code)
        self._close()
        return self.contours

    def _close(self):
        if self.cur is not None and len(self.cur) > 1:
            self.contours.append(self.cur)
        self.cur = None

    def _move(self, dx, dy):
        self._close()
        self.x += dx
        self.y += dy
        self.cur = [(self.x, self.y)]

    def _line(self, dx, dy):
        self.x += dx
        self.y += dy
        if self.cur is None:
            self.cur = [(self.x - dx, self.y - dy)]
        self.cur.append((self.x, self.y))

    def _curve(self, a, b, c, d, e, f):
        x1, y1 = self.x + a, self.y + b
        x2, y2 = x1 + c, y1 + d
        self.x, self.y = x2 + e, y2 + f
        if self.cur is None:
            self.cur = [(self.x, self.y)]
        self.cur.append((x1, y1, x2, y2, self.x, self.y))

    def _width(self, even_args):
        """Drop the optional leading width operand of the first stack-clearing operator."""
        if not self.width_done:
            self.width_done = True
            if (len(self.stack) % 2 == 1) if even_args else False:
                self.stack.pop(0)

    def _exec(self, code):
        self.depth += 1
        if self.depth > 12:
            raise FontError("CFF 子程序嵌套过深")
        s = self.stack
        i, n = 0, len(code)
        while i < n and not self.ended:
            b = code[i]
            i += 1
            if b >= 32:
                if b <= 246:
                    s.append(b - 139)
                elif b <= 250:
                    s.append((b - 247) * 256 + code[i] + 108)
                    i += 1
                elif b <= 254:
                    s.append(-(b - 251) * 256 - code[i] - 108)
                    i += 1
                else:
                    s.append(struct.unpack_from(">i", code, i)[0] / 65536.0)
                    i += 4
                continue
            if b == 28:
                s.append(struct.unpack_from(">h", code, i)[0])
                i += 2
                continue
            if b in (1, 3, 18, 23):   # hstem vstem hstemhm vstemhm
                self._width(True)
                self.nstems += len(s) // 2
                del s[:]
            elif b in (19, 20):   # hintmask cntrmask
                self._width(True)
                self.nstems += len(s) // 2
                del s[:]
                i += (self.nstems + 7) // 8
            elif b == 21:   # rmoveto
                if not self.width_done:
                    self.width_done = True
                    if len(s) > 2:
                        s.pop(0)
                self._move(s[-2], s[-1])
                del s[:]
            elif b == 22 or b == 4:   # hmoveto vmoveto
                if not self.width_done:
                    self.width_done = True
                    if len(s) > 1:
                        s.pop(0)
                if b == 22:
                    self._move(s[-1], 0)
                else:
                    self._move(0, s[-1])
                del s[:]
            elif b == 5:   # rlineto
                for k in range(0, len(s) - 1, 2):
                    self._line(s[k], s[k + 1])
                del s[:]
            elif b == 6 or b == 7:   # hlineto vlineto alternate
                horiz = b == 6
                for v in s:
                    if horiz:
                        self._line(v, 0)
                    else:
                        self._line(0, v)
                    horiz = not horiz
                del s[:]
            elif b == 8:   # rrcurveto
                for k in range(0, len(s) - 5, 6):
                    self._curve(*s[k:k + 6])
                del s[:]
            elif b == 24:   # rcurveline
                k = 0
                while k + 6 <= len(s) - 2:
                    self._curve(*s[k:k + 6])
                    k += 6
                self._line(s[k], s[k + 1])
                del s[:]
            elif b == 25:   # rlinecurve
                k = 0
                while k + 2 <= len(s) - 6:
                    self._line(s[k], s[k + 1])
                    k += 2
                self._curve(*s[k:k + 6])
                del s[:]
            elif b == 26:   # vvcurveto
                k, dx1 = 0, 0
                if len(s) % 4 == 1:
                    dx1, k = s[0], 1
                while k + 4 <= len(s):
                    self._curve(dx1, s[k], s[k + 1], s[k + 2], 0, s[k + 3])
                    dx1 = 0
                    k += 4
                del s[:]
            elif b == 27:   # hhcurveto
                k, dy1 = 0, 0
                if len(s) % 4 == 1:
                    dy1, k = s[0], 1
                while k + 4 <= len(s):
                    self._curve(s[k], dy1, s[k + 1], s[k + 2], s[k + 3], 0)
                    dy1 = 0
                    k += 4
                del s[:]
            elif b == 30 or b == 31:   # vhcurveto hvcurveto
                horiz = b == 31
                k, m = 0, len(s)
                while k + 4 <= m:
                    last = (m - k) == 5
                    if horiz:
                        self._curve(s[k], 0, s[k + 1], s[k + 2], s[k + 4] if last else 0, s[k + 3])
                    else:
                        self._curve(0, s[k], s[k + 1], s[k + 2], s[k + 3], s[k + 4] if last else 0)
                    horiz = not horiz
                    k += 5 if last else 4
                del s[:]
            elif b == 10 or b == 29:   # callsubr callgsubr
                idx = int(s.pop())
                if b == 10:
                    sub = self.priv.subrs
                    idx += self.priv.bias
                else:
                    sub = self.cff.gsubrs
                    idx += self.cff.gbias
                if sub is None or not 0 <= idx < sub.count:
                    raise FontError("CFF 子程序编号越界")
                self._exec(sub.item(idx))
                self.depth -= 1
            elif b == 11:   # return
                return
            elif b == 14:   # endchar (seac accents are ignored)
                if not self.width_done:
                    self.width_done = True
                    if len(s) in (1, 5):
                        s.pop(0)
                del s[:]
                self._close()
                self.ended = True
                return
            elif b == 12:
                b2 = code[i]
                i += 1
                self._escape(b2)
            else:
                del s[:]   # reserved operators: ignore, keep going
        return

    def _escape(self, op):
        s = self.stack
        if op == 35:   # flex
            self._curve(*s[0:6])
            self._curve(*s[6:12])
        elif op == 34:   # hflex
            dx1, dx2, dy2, dx3, dx4, dx5, dx6 = s[:7]
            self._curve(dx1, 0, dx2, dy2, dx3, 0)
            self._curve(dx4, 0, dx5, -dy2, dx6, 0)
        elif op == 36:   # hflex1
            dx1, dy1, dx2, dy2, dx3, dx4, dx5, dy5, dx6 = s[:9]
            self._curve(dx1, dy1, dx2, dy2, dx3, 0)
            self._curve(dx4, 0, dx5, dy5, dx6, -(dy1 + dy2 + dy5))
        elif op == 37:   # flex1
            d = s[:11]
            dx = d[0] + d[2] + d[4] + d[6] + d[8]
            dy = d[1] + d[3] + d[5] + d[7] + d[9]
            if abs(dx) > abs(dy):
                dx6, dy6 = d[10], -dy
            else:
                dx6, dy6 = -dx, d[10]
            self._curve(*d[0:6])
            self._curve(d[6], d[7], d[8], d[9], dx6, dy6)
        elif op == 9:
            s.append(abs(s.pop()))
            return
        elif op == 10:
            b = s.pop(); a = s.pop(); s.append(a + b); return
        elif op == 11:
            b = s.pop(); a = s.pop(); s.append(a - b); return
        elif op == 12:
            b = s.pop(); a = s.pop(); s.append(a / b if b else 0); return
        elif op == 14:
            s.append(-s.pop()); return
        elif op == 24:
            b = s.pop(); a = s.pop(); s.append(a * b); return
        elif op == 26:
            s.append(abs(s.pop()) ** 0.5); return
        elif op == 18:
            s.pop(); return
        elif op == 28:
            b = s.pop(); a = s.pop(); s.extend([b, a]); return
        elif op == 29:
            k = int(s.pop()); s.append(s[-1 - k] if 0 <= k < len(s) else s[-1]); return
        elif op == 30:
            j = int(s.pop()); n = int(s.pop())
            if n > 0:
                part = s[-n:]
                j %= n
                s[-n:] = part[-j:] + part[:-j] if j else part
            return
        elif op == 27:
            s.append(s[-1]); return
        elif op == 20:
            k = int(s.pop()); v = s.pop(); self.transient[k % 32] = v; return
        elif op == 21:
            k = int(s.pop()); s.append(self.transient[k % 32]); return
        elif op == 23:
            s.append(0.5); return
        elif op == 3:
            b = s.pop(); a = s.pop(); s.append(1 if (a and b) else 0); return
        elif op == 4:
            b = s.pop(); a = s.pop(); s.append(1 if (a or b) else 0); return
        elif op == 5:
            s.append(0 if s.pop() else 1); return
        elif op == 15:
            b = s.pop(); a = s.pop(); s.append(1 if a == b else 0); return
        elif op == 22:
            v2 = s.pop(); v1 = s.pop(); s2 = s.pop(); s1 = s.pop(); s.append(s1 if v1 <= v2 else s2); return
        del s[:]


# -- discovery ------------------------------------------------------------------------------------

def system_font_candidates():
    """(path, face name or None) for Chinese fonts in the usual places of this OS, best first."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    out = []
    if sys.platform.startswith("win"):
        roots = [os.path.join(os.environ.get("WINDIR", r"C:\Windows"), "Fonts")]
        local = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        roots.append(os.path.join(local, "Microsoft", "Windows", "Fonts"))
        files = [("msyh.ttc", "Microsoft YaHei"), ("msyh.ttf", None), ("simhei.ttf", None),
                 ("simsun.ttc", "SimSun"), ("Deng.ttf", None), ("simkai.ttf", None)]
        for r in roots:
            out += [(os.path.join(r, f), n) for f, n in files]
    elif sys.platform == "darwin":
        roots = ["/System/Library/Fonts", "/System/Library/Fonts/Supplemental", "/Library/Fonts",
                 os.path.join(home, "Library", "Fonts")]
        files = [("PingFang.ttc", "PingFang SC"), ("Hiragino Sans GB.ttc", None), ("STHeiti Light.ttc", None),
                 ("STHeiti Medium.ttc", None), ("Songti.ttc", None), ("Arial Unicode.ttf", None)]
        for r in roots:
            out += [(os.path.join(r, f), n) for f, n in files]
        import glob
        for pat in ("/System/Library/AssetsV2/com_apple_MobileAsset_Font*/*/AssetData/PingFang.ttc",
                    "/System/Library/Assets/com_apple_MobileAsset_Font*/*/AssetData/PingFang.ttc"):
            out += [(p, "PingFang SC") for p in sorted(glob.glob(pat))]
    else:
        roots = ["/usr/share/fonts", "/usr/local/share/fonts", os.path.join(home, ".local", "share", "fonts"),
                 os.path.join(home, ".fonts")]
        rel = ["opentype/noto/NotoSansCJK-Regular.ttc", "google-noto-sans-cjk-fonts/NotoSansCJK-Regular.ttc",
               "google-noto-cjk/NotoSansCJK-Regular.ttc", "noto-cjk/NotoSansCJK-Regular.ttc",
               "noto/NotoSansCJK-Regular.ttc", "truetype/wqy/wqy-microhei.ttc",
               "wqy-microhei/wqy-microhei.ttc", "wenquanyi/wqy-microhei/wqy-microhei.ttc",
               "truetype/wqy/wqy-zenhei.ttc", "wenquanyi/wqy-zenhei/wqy-zenhei.ttc",
               "truetype/droid/DroidSansFallbackFull.ttf", "truetype/arphic/uming.ttc"]
        for r in roots[:1]:
            out += [(os.path.join(r, p), None) for p in rel]
        for r in roots:   # anything else that looks Chinese, in a bounded walk
            out += [(p, None) for p in _scan(r)]
    seen, uniq = set(), []
    for p, n in out:
        if p not in seen and os.path.isfile(p):
            seen.add(p)
            uniq.append((p, n))
    return uniq


_CJK_NAME = re.compile(r"(cjk|wqy|wenquanyi|droidsansfallback|sourcehan|han ?sans|simhei|simsun|msyh|"
                       r"pingfang|heiti|hiragino|lxgw|noto.*(sc|cn)|uming|ukai)", re.I)


def _scan(root, limit=3000):
    found = []
    if not os.path.isdir(root):
        return found
    n = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            n += 1
            if n > limit:
                return found
            if name.lower().endswith((".ttf", ".ttc", ".otf", ".otc")) and _CJK_NAME.search(name):
                if "-VF" not in name and "Mono" not in name:
                    found.append(os.path.join(dirpath, name))
    found.sort()
    return found
