"""An RGB canvas with an anti-aliased scanline rasterizer, in pure Python that stays fast.

Why this design: a per-pixel Python loop over a supersampled 800x500 image costs ~0.8 s, the whole
budget. So the rasterizer works per pixel row with ``S`` sub-scanlines: on each sub-scanline it finds
the exact x crossings of the active edges (nonzero winding), giving float spans. Pixels covered on
every sub-scanline are painted with one ``bytearray`` slice assignment; only pixels on the shape's
boundary get a Python-level coverage sum (exact horizontally, S levels vertically) and a blend. The
work is proportional to the perimeter, not the area. Coverage is quantized to 1/16 so a chart keeps
few distinct colours and usually fits a PNG palette.

Coordinates are pixels, y down, (0, 0) the top-left corner of the top-left pixel.
Colours are (r, g, b) tuples.
"""
import math

LEVELS = 16


def _spans_of_row(active, y):
    """Nonzero-winding spans [(x0, x1)] of the active edges at height y."""
    xs = []
    for e in active:
        xs.append((e[2] + (y - e[0]) * e[3], e[4]))
    xs.sort()
    spans = []
    wind = 0
    start = 0.0
    for x, d in xs:
        if wind == 0:
            start = x
        wind += d
        if wind == 0 and x > start:
            spans.append((start, x))
    return spans


def build_edges(contours):
    """Edges (ytop, ybot, x at ytop, dx/dy, direction) of closed polygons [[(x, y), ...], ...]."""
    edges = []
    for pts in contours:
        n = len(pts)
        if n < 3:
            continue
        x0, y0 = pts[-1]
        for x1, y1 in pts:
            if y1 != y0:
                if y1 > y0:
                    edges.append((y0, y1, x0, (x1 - x0) / (y1 - y0), 1))
                else:
                    edges.append((y1, y0, x1, (x0 - x1) / (y0 - y1), -1))
            x0, y0 = x1, y1
    edges.sort()
    return edges


def rasterize(contours, width, height, S=4):
    """Yield (row, full, partial) for each pixel row the polygons touch.

    full: [(x0, x1)] integer pixel runs covered entirely; partial: {x: coverage 0..1}.
    """
    edges = build_edges(contours)
    if not edges:
        return
    ymin = max(0, int(math.floor(edges[0][0])))
    ymax = min(height - 1, int(math.ceil(max(e[1] for e in edges))))
    inv = 1.0 / S
    offsets = [(k + 0.5) * inv for k in range(S)]
    active = []
    nxt = 0
    ne = len(edges)
    fw = float(width)
    min_end = float("inf")
    for row in range(ymin, ymax + 1):
        per_line = []
        for off in offsets:
            y = row + off
            if nxt < ne and edges[nxt][0] <= y:
                while nxt < ne and edges[nxt][0] <= y:
                    e = edges[nxt]
                    active.append(e)
                    if e[1] < min_end:
                        min_end = e[1]
                    nxt += 1
            if y >= min_end:
                active = [e for e in active if e[1] > y]
                min_end = min([e[1] for e in active]) if active else float("inf")
            na = len(active)
            if na == 2:   # the common convex case: one span
                e, f = active
                xa = e[2] + (y - e[0]) * e[3]
                xb = f[2] + (y - f[0]) * f[3]
                if xa > xb:
                    xa, xb, e, f = xb, xa, f, e
                spans = [(xa, xb)] if (e[4] + f[4] == 0 and xb > xa) else []
            elif na:
                spans = _spans_of_row(active, y)
            else:
                per_line.append([])
                continue
            clipped = []
            for a, b in spans:
                if a < 0.0:
                    a = 0.0
                if b > fw:
                    b = fw
                if b > a:
                    clipped.append((a, b))
            per_line.append(clipped)
        if not any(per_line):
            if nxt >= ne and not active:
                break
            continue
        # pixels fully covered on every sub-scanline
        full = None
        for spans in per_line:
            runs = []
            for a, b in spans:
                ia, ib = int(math.ceil(a)), int(b)
                if ib > ia:
                    if runs and runs[-1][1] >= ia:
                        runs[-1] = (runs[-1][0], ib)
                    else:
                        runs.append((ia, ib))
            full = runs if full is None else _intersect(full, runs)
            if not full:
                break
        full = full or []
        cov = {}
        get = cov.get
        for spans in per_line:
            for a, b in spans:
                ia, ib = int(a), int(b)
                if ia == ib:
                    cov[ia] = get(ia, 0.0) + (b - a)
                    continue
                cov[ia] = get(ia, 0.0) + (ia + 1 - a)
                if b > ib:
                    cov[ib] = get(ib, 0.0) + (b - ib)
                lo = ia + 1
                for f0, f1 in full:   # interior pixels that are not solid everywhere
                    if f1 <= lo:
                        continue
                    if f0 >= ib:
                        break
                    for x in range(lo, min(f0, ib)):
                        cov[x] = get(x, 0.0) + 1.0
                    lo = max(lo, f1)
                for x in range(lo, ib):
                    cov[x] = get(x, 0.0) + 1.0
        yield row, full, {x: c * inv for x, c in cov.items()}


def _intersect(a, b):
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if hi > lo:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


# -- curve flattening -------------------------------------------------------------------------------

def flatten(contours, transform, tol=0.2):
    """Font-style contours ([start, seg...], see fonts.py) -> polygons in pixels via transform
    (a, b, c, d, e, f): x' = a*x + c*y + e, y' = b*x + d*y + f."""
    a, b, c, d, e, f = transform
    out = []
    for contour in contours:
        sx, sy = contour[0]
        px, py = a * sx + c * sy + e, b * sx + d * sy + f
        pts = [(px, py)]
        for seg in contour[1:]:
            if len(seg) == 2:
                x, y = seg
                px, py = a * x + c * y + e, b * x + d * y + f
                pts.append((px, py))
            elif len(seg) == 4:
                cx, cy, x, y = seg
                qx, qy = a * cx + c * cy + e, b * cx + d * cy + f
                ex, ey = a * x + c * y + e, b * x + d * y + f
                dd = abs(px - 2 * qx + ex) + abs(py - 2 * qy + ey)
                n = max(1, min(16, int(math.sqrt(dd / tol / 4.0)) + 1))
                for i in range(1, n + 1):
                    t = i / float(n)
                    mt = 1 - t
                    pts.append((mt * mt * px + 2 * mt * t * qx + t * t * ex,
                                mt * mt * py + 2 * mt * t * qy + t * t * ey))
                px, py = ex, ey
            else:
                c1x, c1y, c2x, c2y, x, y = seg
                ax, ay = a * c1x + c * c1y + e, b * c1x + d * c1y + f
                bx, by = a * c2x + c * c2y + e, b * c2x + d * c2y + f
                ex, ey = a * x + c * y + e, b * x + d * y + f
                dd = max(abs(px - 2 * ax + bx) + abs(py - 2 * ay + by),
                         abs(ax - 2 * bx + ex) + abs(ay - 2 * by + ey))
                n = max(1, min(24, int(math.sqrt(dd * 3 / tol / 4.0)) + 1))
                for i in range(1, n + 1):
                    t = i / float(n)
                    mt = 1 - t
                    w0, w1, w2, w3 = mt * mt * mt, 3 * mt * mt * t, 3 * mt * t * t, t * t * t
                    pts.append((w0 * px + w1 * ax + w2 * bx + w3 * ex, w0 * py + w1 * ay + w2 * by + w3 * ey))
                px, py = ex, ey
        out.append(pts)
    return out


def polygon_area(pts):
    s = 0.0
    x0, y0 = pts[-1]
    for x1, y1 in pts:
        s += x0 * y1 - x1 * y0
        x0, y0 = x1, y1
    return s / 2.0


def oriented(pts):
    """The polygon with positive orientation, so unions of pieces work under nonzero winding."""
    return pts if polygon_area(pts) >= 0 else pts[::-1]


def circle(cx, cy, r, n=None):
    if n is None:
        n = max(8, min(96, int(r * 2.2)))
    return [(cx + r * math.cos(2 * math.pi * i / n), cy + r * math.sin(2 * math.pi * i / n)) for i in range(n)]


def stroke_polygons(points, width):
    """Polygons covering a polyline of the given width (round-ish joins and caps)."""
    hw = width / 2.0
    polys = []
    pts = [p for i, p in enumerate(points) if i == 0 or p != points[i - 1]]
    if len(pts) == 1:
        return [circle(pts[0][0], pts[0][1], hw, 8)]
    normals = []
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        dx, dy = x1 - x0, y1 - y0
        ln = math.hypot(dx, dy) or 1.0
        nx, ny = -dy / ln * hw, dx / ln * hw
        normals.append((nx, ny))
        polys.append(oriented([(x0 + nx, y0 + ny), (x1 + nx, y1 + ny), (x1 - nx, y1 - ny), (x0 - nx, y0 - ny)]))
    for i in range(1, len(pts) - 1):   # joins: fill the wedge between neighbouring segments
        x, y = pts[i]
        (ax, ay), (bx, by) = normals[i - 1], normals[i]
        if abs(ax * by - ay * bx) < 1e-9 * hw * hw:
            continue
        polys.append(circle(x, y, hw, 8))
    for x, y in (pts[0], pts[-1]):
        polys.append(circle(x, y, hw * 0.98, 8))
    return polys


class Canvas(object):
    """A white (or any colour) RGB image in a bytearray, drawn with spans and blends.

    ``scale``: the picture is drawn in ``width`` x ``height`` layout units and stored with
    ``scale`` pixels per unit (``w``/``h`` are the pixel sizes): a chart laid out once at 800 x 500
    comes out at 1600 x 1000 for print with every line, glyph and gap twice as many pixels, not
    blown up. Shapes and text (``typeset.Fonts.draw``) take layout units."""

    def __init__(self, width, height, background=(255, 255, 255), scale=1.0):
        self.scale = float(scale)
        self.w, self.h = int(round(width * self.scale)), int(round(height * self.scale))
        self.buf = bytearray(bytes(background) * (self.w * self.h))
        self._glyph_cache = {}

    # -- solid shapes ------------------------------------------------------------------------------
    def fill_rect(self, x0, y0, x1, y1, color):
        """Pixel-snapped rectangle [x0, x1) x [y0, y1) (bars, grid lines, swatches stay crisp)."""
        k = self.scale
        if k != 1.0:
            x0, y0, x1, y1 = x0 * k, y0 * k, x1 * k, y1 * k
        x0, x1 = max(0, int(round(x0))), min(self.w, int(round(x1)))
        y0, y1 = max(0, int(round(y0))), min(self.h, int(round(y1)))
        if x1 <= x0 or y1 <= y0:
            return
        run = bytes(color) * (x1 - x0)
        buf, w = self.buf, self.w
        for y in range(y0, y1):
            o = (y * w + x0) * 3
            buf[o:o + len(run)] = run

    def fill_polygons(self, polys, color, S=4):
        """Anti-aliased fill of closed polygons (nonzero winding) in one colour."""
        k = self.scale
        if k != 1.0:
            polys = [[(x * k, y * k) for x, y in poly] for poly in polys]
        buf, w = self.buf, self.w
        col = bytes(color)
        r, g, b = color
        blend = {}
        for row, full, partial in rasterize(polys, self.w, self.h, S):
            base = row * w
            for f0, f1 in full:
                buf[(base + f0) * 3:(base + f1) * 3] = col * (f1 - f0)
            for x, c in partial.items():
                lvl = int(c * LEVELS + 0.5)
                if lvl <= 0:
                    continue
                o = (base + x) * 3
                if lvl >= LEVELS:
                    buf[o:o + 3] = col
                    continue
                bg = bytes(buf[o:o + 3])
                key = (bg, lvl)
                px = blend.get(key)
                if px is None:
                    t = lvl / float(LEVELS)
                    px = bytes((int(bg[0] + (r - bg[0]) * t + 0.5), int(bg[1] + (g - bg[1]) * t + 0.5),
                                int(bg[2] + (b - bg[2]) * t + 0.5)))
                    blend[key] = px
                buf[o:o + 3] = px

    def polyline(self, points, width, color):
        self.fill_polygons(stroke_polygons(points, width), color)

    def line(self, x0, y0, x1, y1, width, color):
        if x0 == x1 or y0 == y1:   # axis-aligned: a crisp rectangle
            hw = width / 2.0
            if y0 == y1:
                self.fill_rect(min(x0, x1), y0 - hw, max(x0, x1), y0 + hw, color)
            else:
                self.fill_rect(x0 - hw, min(y0, y1), x0 + hw, max(y0, y1), color)
            return
        self.polyline([(x0, y0), (x1, y1)], width, color)

    def dashed_hline(self, x0, x1, y, color, dash=4, gap=3, thickness=1):
        x = x0
        while x < x1:
            self.fill_rect(x, y, min(x + dash, x1), y + thickness, color)
            x += dash + gap

    def circle(self, cx, cy, r, color):
        self.fill_polygons([circle(cx, cy, r)], color)

    # -- masks (glyphs) -------------------------------------------------------------------------------
    def blit_mask(self, mask, x, y, color):
        """Blend an alpha mask [(dx, dy, level 1..16)] at integer (x, y)."""
        buf, w, h = self.buf, self.w, self.h
        col = bytes(color)
        r, g, b = color
        blend = {}
        for dx, dy, lvl in mask:
            px, py = x + dx, y + dy
            if px < 0 or py < 0 or px >= w or py >= h:
                continue
            o = (py * w + px) * 3
            if lvl >= LEVELS:
                buf[o:o + 3] = col
                continue
            bg = bytes(buf[o:o + 3])
            key = (bg, lvl)
            p = blend.get(key)
            if p is None:
                t = lvl / float(LEVELS)
                p = bytes((int(bg[0] + (r - bg[0]) * t + 0.5), int(bg[1] + (g - bg[1]) * t + 0.5),
                           int(bg[2] + (b - bg[2]) * t + 0.5)))
                blend[key] = p
            buf[o:o + 3] = p


def mask_from_polygons(polys, S=5):
    """Rasterize polygons (already in pixel units, small) into a sparse alpha mask.

    The polygons may have negative coordinates: they are shifted into a local box first."""
    if not polys:
        return []
    minx = min(p[0] for poly in polys for p in poly)
    miny = min(p[1] for poly in polys for p in poly)
    maxx = max(p[0] for poly in polys for p in poly)
    maxy = max(p[1] for poly in polys for p in poly)
    ox, oy = int(math.floor(minx)) - 1, int(math.floor(miny)) - 1
    shifted = [[(px - ox, py - oy) for px, py in poly] for poly in polys]
    w, h = int(maxx - ox) + 3, int(maxy - oy) + 3
    out = []
    for row, full, partial in rasterize(shifted, w, h, S):
        for f0, f1 in full:
            for x in range(f0, f1):
                out.append((x + ox, row + oy, LEVELS))
        for x, c in partial.items():
            lvl = int(c * LEVELS + 0.5)
            if lvl > 0:
                out.append((x + ox, row + oy, min(lvl, LEVELS)))
    return out
