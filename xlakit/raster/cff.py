"""OpenType ``CFF `` outlines with the standard library: the table's INDEX/DICT structures read
lazily, CID-keyed fonts (FDArray/FDSelect, one Private DICT per font dict), and a Type 2
charstring interpreter (local and global subroutines, hints read and ignored) producing cubic
contours in the segment format ``fonts`` documents. Split from ``fonts`` because CFF is a
separate font technology with its own byte code; ``fonts.Font`` calls ``CFF(...).outline(gid)``.
"""
import struct

from .sfnt import _U16, _U32, FontError

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
