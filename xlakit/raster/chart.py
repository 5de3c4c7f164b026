"""Chart layout: line, bar (grouped, stacked, horizontal) and pie charts drawn on a Canvas.

Why the rules here: the picture goes straight into a user's report, so it must read well without
tuning. Value axes use 1-2-5 steps and always show zero for bars (a bar that starts at 80 lies);
large numbers use 万/亿 like Chinese reports do; category labels are laid out horizontally, wrapped,
rotated or thinned in that order until none overlap; the legend sits in its own band above the plot
so it can never cover data; the palette is Okabe-Ito (safe for the common colour-vision
deficiencies) and lines also differ by marker shape; pie slices too thin for a label inside get an
outside label with a leader line, spread so labels never overlap, and a long tail is merged into
「其他」. ``null`` in a line series leaves a gap rather than inventing a value.
"""
import math

from .canvas import Canvas, circle, oriented, stroke_polygons
from .chart_labels import fits, split_two, wrap  # noqa: F401 - chart.split_two is public here too
from .chart_spec import fmt_number, nice_ticks, normalize, unit_for  # noqa: F401

PALETTE = [(0, 114, 178), (230, 159, 0), (0, 158, 115), (213, 94, 0), (204, 121, 167), (86, 180, 233),
           (153, 136, 0), (90, 90, 90), (51, 34, 136), (136, 204, 238), (68, 170, 153), (17, 119, 51),
           (153, 153, 51), (221, 204, 119), (204, 102, 119), (136, 34, 85), (170, 68, 153)]
TEXT = (51, 51, 51)
SUBTLE = (110, 110, 110)
TICK = (68, 68, 68)          # tick labels: read on paper, not only on screen (#777 was too faint)
GRID = (229, 229, 229)
AXIS = (150, 150, 150)
ZERO = (90, 90, 90)
WHITE = (255, 255, 255)
MARKERS = ("circle", "square", "triangle", "diamond")

PRINT_DPI = 144              # written into the PNG: 800 px = 141 mm, a Word page's text width
# (scale=2: 1600 px at 288 dpi, the same 141 mm, about 280 ppi on the printed page)


def _marker(cv, kind, x, y, r, color):
    if kind == "square":
        poly = [(x - r * 0.85, y - r * 0.85), (x + r * 0.85, y - r * 0.85), (x + r * 0.85, y + r * 0.85), (x - r * 0.85, y + r * 0.85)]
    elif kind == "triangle":
        poly = [(x, y - r * 1.1), (x + r, y + r * 0.75), (x - r, y + r * 0.75)]
    elif kind == "diamond":
        poly = [(x, y - r * 1.15), (x + r * 1.15, y), (x, y + r * 1.15), (x - r * 1.15, y)]
    else:
        poly = circle(x, y, r, 14)
    cv.fill_polygons([oriented(poly)], color)


class Chart(object):
    def __init__(self, spec, fonts):
        self.spec = spec
        self.fonts = fonts
        self.w, self.h = spec["width"], spec["height"]
        self.cv = Canvas(self.w, self.h, scale=spec.get("scale", 1))
        k = min(self.w / 800.0, self.h / 500.0)
        k = min(max(k, 0.75), 1.8)
        self.fs = max(11.0, round(13 * k))          # tick and legend text
        self.fs_title = max(14.0, round(19 * k))
        self.fs_value = max(10.0, round(11.5 * k))
        self.pad = round(16 * k)
        self.notes = []

    def text(self, x, y, s, size, color=TEXT, **kw):
        self.fonts.draw(self.cv, x, y, s, size, color, **kw)

    # -- common bands --------------------------------------------------------------------------------
    def draw_title(self):
        top = self.pad * 0.75
        if self.spec["title"]:
            lines = wrap(self.fonts, self.spec["title"], self.fs_title, self.w - 2 * self.pad, 2)
            for ln in lines:
                self.text(self.w / 2.0, top, ln, self.fs_title, (34, 34, 34), anchor="center", baseline="top")
                top += self.fs_title * 1.3
            top += self.fs * 0.4
        return top

    def legend_rows(self, names, max_w):
        sw = self.fs * 1.1
        items = [(n, sw + 6 + self.fonts.width(n, self.fs)) for n in names]
        rows, cur, cur_w = [], [], 0.0
        gap = self.fs * 1.5
        for i, (n, iw) in enumerate(items):
            if cur and cur_w + gap + iw > max_w:
                rows.append((cur, cur_w))
                cur, cur_w = [], 0.0
            cur_w += (gap if cur else 0) + iw
            cur.append((i, n, iw))
        if cur:
            rows.append((cur, cur_w))
        return rows

    def draw_legend(self, top, names, kinds=None):
        """A legend band (centred rows) from ``top``; returns the y below it."""
        if len(names) < 2 or not any(names):
            return top
        rows = self.legend_rows(names, self.w - 2 * self.pad)
        sw = self.fs * 1.1
        gap = self.fs * 1.5
        lh = self.fs * 1.55
        for items, row_w in rows:
            x = (self.w - row_w) / 2.0
            cy = top + lh / 2.0
            for i, n, iw in items:
                color = PALETTE[i % len(PALETTE)]
                if kinds == "line":
                    self.cv.fill_polygons(stroke_polygons([(x, cy), (x + sw, cy)], 2.4), color)
                    _marker(self.cv, MARKERS[i % 4], x + sw / 2.0, cy, 3.2, color)
                else:
                    self.cv.fill_rect(x, cy - sw / 2.0 + 1, x + sw, cy + sw / 2.0 - 1, color)
                self.text(x + sw + 6, cy, n, self.fs, TEXT, baseline="middle")
                x += iw + gap
            top += lh
        return top + self.fs * 0.3

    # -- axes charts -----------------------------------------------------------------------------------
    def value_range(self):
        sp = self.spec
        vals = []
        if sp["type"] == "bar" and sp["stacked"]:
            n = len(sp["labels"])
            for j in range(n):
                pos = sum(s["data"][j] for s in sp["series"] if (s["data"][j] or 0) > 0)
                neg = sum(s["data"][j] for s in sp["series"] if (s["data"][j] or 0) < 0)
                vals += [pos, neg]
        else:
            vals = [v for s in sp["series"] for v in s["data"] if v is not None]
        lo, hi = min(vals), max(vals)
        if sp["type"] == "bar" or lo == hi:
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        elif lo > 0 and (hi - lo) / hi > 0.35:
            lo = 0.0
        elif hi < 0 and (hi - lo) / -lo > 0.35:
            hi = 0.0
        if lo == hi:
            hi = lo + 1.0
        return lo, hi

    def layout_axes(self):
        sp = self.spec
        horizontal = sp["type"] == "bar" and sp["horizontal"]
        top = self.draw_title()
        names = [s["name"] or "系列%d" % (i + 1) for i, s in enumerate(sp["series"])]
        top = self.draw_legend(top, names if len(sp["series"]) > 1 else [], "line" if sp["type"] == "line" else "bar")
        lo, hi = self.value_range()
        if self.wants_value_labels():
            span = hi - lo
            hi = hi + span * 0.07 if hi > 0 else hi
            lo = lo - span * 0.07 if lo < 0 else lo
        ticks, step = nice_ticks(lo, hi, 5 if not horizontal else max(3, min(6, self.w // 140)))
        max_abs = max(abs(ticks[0]), abs(ticks[-1]))
        unit = unit_for(max_abs, sp["number_format"])
        tick_txt = [fmt_number(t, step, unit, sp["number_format"]) for t in ticks]
        self.ticks, self.step, self.unit = ticks, step, unit
        fs = self.fs
        left = self.pad
        # the axis titles as drawn: a horizontal chart's value axis (y_label + unit) is at the bottom
        value_title = sp["y_label"] or sp["unit"]
        side_title, foot_title = (sp["x_label"], value_title) if horizontal else (value_title, sp["x_label"])
        if side_title:
            left += fs * 1.5
        bottom = self.h - self.pad * 0.8
        if foot_title:
            bottom -= fs * 1.6
        right = self.w - self.pad
        cats = sp["labels"]
        if not horizontal:
            tick_w = max(self.fonts.width(t, fs) for t in tick_txt)
            left += tick_w + 8
            slot = (right - left) / float(len(cats))
            label_plan = self.plan_labels(cats, slot, bottom - top)
            reach = label_plan.get("reach", 0)
            if reach > left + slot / 2.0 - 4:   # the first rotated label must not leave the image
                left = reach + 4 - slot / 2.0 if reach + 4 - slot / 2.0 > left else left
                slot = (right - left) / float(len(cats))
                left = max(left, reach + 4 - slot / 2.0)
            bottom -= label_plan["height"] + 6
            self.plot = (left, top + fs * 0.6, right, bottom)
        else:
            max_lab = (right - left) * 0.3
            lab_w = min(max_lab, max(self.fonts.width(c, fs) for c in cats)) if cats else 0
            slot_h = (bottom - fs * 1.6 - top) / float(max(1, len(cats)))
            lines_allowed = 2 if slot_h > fs * 2.8 else 1
            self.hlabels = [wrap(self.fonts, c, fs, max_lab, lines_allowed) for c in cats]
            lab_w = max([self.fonts.width(l, fs) for ls in self.hlabels for l in ls] + [0])
            left += lab_w + 10
            bottom -= fs * 1.6
            last_w = self.fonts.width(tick_txt[-1], fs)
            right -= last_w / 2.0
            self.plot = (left, top + fs * 0.2, right, bottom)
            label_plan = None
        self.tick_txt = tick_txt
        self.label_plan = label_plan
        return horizontal

    def wants_value_labels(self):
        sp = self.spec
        n = len(sp["labels"])
        if sp["type"] == "line":
            return sp["value_labels"] is True or (sp["value_labels"] is None and len(sp["series"]) == 1 and n <= 16)
        if sp["value_labels"] is None:
            return n * (1 if sp["stacked"] else len(sp["series"])) <= 40
        return bool(sp["value_labels"])

    def plan_labels(self, cats, slot, avail_h):
        """How category labels fit under the x axis, in this order: straight; straight in a
        slightly smaller size (down to 80%, not below 10 px); two even lines broken at
        character/word boundaries with no single-character line (at the normal, then the
        smaller size); rotated (45° or 90°), thinned when even that is too dense."""
        fs = self.fs
        small = max(10.0, round(fs * 0.8))
        widths = [self.fonts.width(c, fs) for c in cats]
        wmax = max(widths) if widths else 0
        if wmax <= slot * 0.92:
            return {"mode": "flat", "lines": [[c] for c in cats], "every": 1, "height": fs * 1.35, "size": fs}
        if small < fs and max(self.fonts.width(c, small) for c in cats) <= slot * 0.92:
            return {"mode": "flat", "lines": [[c] for c in cats], "every": 1, "height": small * 1.35, "size": small}
        for size in (fs, small):
            if slot < size * 2.2:
                continue
            wrapped = [wrap(self.fonts, c, size, slot * 0.92, 2) for c in cats]
            if all(fits(ls) for ls in wrapped):
                return {"mode": "wrap", "lines": wrapped, "every": 1, "height": size * 2.6, "size": size}
        angle = 45 if slot >= fs * 1.25 else 90
        every = 1
        pitch = fs * 1.25 if angle == 45 else fs * 1.1
        while slot * every < pitch:
            every += 1
        max_len = min(wmax, avail_h * 0.32 / (0.72 if angle == 45 else 1.0))
        lines = []
        for c in cats:
            t = c
            while self.fonts.width(t, fs) > max_len and len(t) > 2:
                t = t[:-2] + "…"
            lines.append([t])
        longest = max(self.fonts.width(l[0], fs) for l in lines)
        height = (longest * 0.71 + fs * 1.2) if angle == 45 else longest + 8
        reach = (longest * 0.74) if angle == 45 else fs * 0.6
        return {"mode": "rotate", "angle": angle, "lines": lines, "every": every, "height": height, "reach": reach,
                "size": fs}

    def y_of(self, v):
        x0, y0, x1, y1 = self.plot
        lo, hi = self.ticks[0], self.ticks[-1]
        return y1 - (v - lo) / (hi - lo) * (y1 - y0)

    def x_of_value(self, v):
        x0, y0, x1, y1 = self.plot
        lo, hi = self.ticks[0], self.ticks[-1]
        return x0 + (v - lo) / (hi - lo) * (x1 - x0)

    def draw_value_axis(self, horizontal):
        x0, y0, x1, y1 = self.plot
        fs = self.fs
        for t, s in zip(self.ticks, self.tick_txt):
            if not horizontal:
                y = round(self.y_of(t))
                self.cv.fill_rect(x0, y, x1, y + 1, ZERO if t == 0 else GRID)
                self.text(x0 - 8, y + 0.5, s, fs, TICK, anchor="right", baseline="middle")
            else:
                x = round(self.x_of_value(t))
                self.cv.fill_rect(x, y0, x + 1, y1, ZERO if t == 0 else GRID)
                self.text(x + 0.5, y1 + 6, s, fs, TICK, anchor="center", baseline="top")
        sp = self.spec
        ylab = sp["y_label"] + ("（%s）" % sp["unit"] if sp["unit"] else "")
        xlab = sp["x_label"]
        if horizontal:
            xlab, ylab = ylab, xlab
        if ylab:
            self.text(self.pad * 0.6 + fs * 0.55, (y0 + y1) / 2.0, ylab, fs, TEXT, anchor="center",
                      baseline="middle", angle=90)
        if xlab:
            self.text((x0 + x1) / 2.0, self.h - self.pad * 0.6, xlab, fs, TEXT, anchor="center", baseline="bottom")

    def draw_category_labels(self):
        x0, y0, x1, y1 = self.plot
        cats = self.spec["labels"]
        plan = self.label_plan
        slot = (x1 - x0) / float(len(cats))
        fs = plan.get("size", self.fs)
        for i, lines in enumerate(plan["lines"]):
            if i % plan["every"]:
                continue
            cx = x0 + slot * (i + 0.5)
            self.cv.fill_rect(cx, y1, cx + 1, y1 + 4, AXIS)
            if plan["mode"] != "rotate":
                # a centred label never leaves the image, however wide the first/last one is
                half = max(self.fonts.width(ln, fs) for ln in lines) / 2.0
                cx = min(max(cx, half + 2), self.w - half - 2)
            if plan["mode"] == "rotate":
                if plan["angle"] == 45:
                    self.text(cx + fs * 0.3, y1 + 6, lines[0], fs, TEXT, anchor="right", baseline="top", angle=45)
                else:
                    self.text(cx + 0.5, y1 + 6, lines[0], fs, TEXT, anchor="right", baseline="middle", angle=90)
            else:
                for k, ln in enumerate(lines):
                    self.text(cx, y1 + 6 + k * fs * 1.25, ln, fs, TEXT, anchor="center", baseline="top")

    def draw_axes_chart(self):
        sp = self.spec
        horizontal = self.layout_axes()
        self.draw_value_axis(horizontal)
        x0, y0, x1, y1 = self.plot
        if sp["type"] == "line":
            self.draw_lines()
        else:
            self.draw_bars(horizontal)
        if not horizontal:
            self.cv.fill_rect(x0, y1, x1, y1 + 1, AXIS if self.ticks[0] != 0 else ZERO)
            self.draw_category_labels()
        else:
            self.cv.fill_rect(x0 - 1, y0, x0, y1, AXIS if self.ticks[0] != 0 else ZERO)
            slot = (y1 - y0) / float(len(sp["labels"]))
            for i, lines in enumerate(self.hlabels):
                cy = y0 + slot * (i + 0.5)
                n = len(lines)
                for k, ln in enumerate(lines):
                    self.text(x0 - 8, cy + (k - (n - 1) / 2.0) * self.fs * 1.2, ln, self.fs, TEXT,
                              anchor="right", baseline="middle")

    def draw_lines(self):
        sp = self.spec
        x0, y0, x1, y1 = self.plot
        n = len(sp["labels"])
        slot = (x1 - x0) / float(n)
        few = n <= 40
        width = 2.4 if n <= 120 else 1.8
        for si, s in enumerate(sp["series"]):
            color = PALETTE[si % len(PALETTE)]
            runs, cur = [], []
            for j, v in enumerate(s["data"]):
                if v is None:
                    if cur:
                        runs.append(cur)
                    cur = []
                    continue
                cur.append((x0 + slot * (j + 0.5), self.y_of(v)))
            if cur:
                runs.append(cur)
            polys = []
            for run in runs:
                if len(run) > 1:
                    polys += stroke_polygons(run, width)
            if polys:
                self.cv.fill_polygons(polys, color)
            for run in runs:
                if few or len(run) == 1:
                    for (x, y) in run:
                        _marker(self.cv, MARKERS[si % 4], x, y, 3.6 if few else 2.5, color)
        # value labels on single-series short lines
        if self.wants_value_labels():
            s = sp["series"][0]
            for j, v in enumerate(s["data"]):
                if v is None:
                    continue
                x, y = x0 + slot * (j + 0.5), self.y_of(v)
                self.text(x, y - 7, fmt_number(v, None, self.unit, sp["number_format"]), self.fs_value, SUBTLE,
                          anchor="center", baseline="bottom")

    def draw_bars(self, horizontal):
        sp = self.spec
        x0, y0, x1, y1 = self.plot
        n = len(sp["labels"])
        ns = len(sp["series"])
        length = (y1 - y0) if horizontal else (x1 - x0)
        slot = length / float(n)
        group = slot * (0.72 if ns > 1 else 0.62)
        bw = group if sp["stacked"] else group / ns
        show_vals = self.wants_value_labels()
        fsv = self.fs_value
        labels = []          # (x, y, text, colour, anchor, baseline, owner bar, other places)
        bars = []            # (box, owner) of every bar drawn
        for j in range(n):
            start = (y0 if horizontal else x0) + slot * j + (slot - group) / 2.0
            pos_acc = neg_acc = 0.0
            for si, s in enumerate(sp["series"]):
                v = s["data"][j]
                if v is None:
                    continue
                color = PALETTE[si % len(PALETTE)]
                if sp["stacked"]:
                    base = pos_acc if v >= 0 else neg_acc
                    a, b = base, base + v
                    if v >= 0:
                        pos_acc = b
                    else:
                        neg_acc = b
                    off = start
                else:
                    a, b = 0.0, v
                    off = start + bw * si
                gap = 1.0 if (not sp["stacked"] and ns > 1 and bw > 6) else 0.0
                if horizontal:
                    pa, pb = self.x_of_value(a), self.x_of_value(b)
                    self.cv.fill_rect(min(pa, pb), off + gap / 2, max(pa, pb), off + bw - gap / 2, color)
                    bars.append(((min(pa, pb), off, max(pa, pb), off + bw), (j, si)))
                    if sp["stacked"] and si > 0:
                        self.cv.fill_rect(min(pa, pb), off, min(pa, pb) + 1, off + bw, WHITE)
                else:
                    pa, pb = self.y_of(a), self.y_of(b)
                    self.cv.fill_rect(off + gap / 2, min(pa, pb), off + bw - gap / 2, max(pa, pb), color)
                    bars.append(((off, min(pa, pb), off + bw, max(pa, pb)), (j, si)))
                    if sp["stacked"] and si > 0:
                        self.cv.fill_rect(off, max(pa, pb) - 1, off + bw, max(pa, pb), WHITE)
                if show_vals:
                    txt = fmt_number(v, None, self.unit, sp["number_format"])
                    tw = self.fonts.width(txt, fsv)
                    if sp["stacked"]:
                        seg = abs(pb - pa)
                        across = bw
                        if (seg >= (tw + 4 if horizontal else fsv + 3)) and across >= (fsv + 2 if horizontal else tw + 2):
                            mid = (pa + pb) / 2.0
                            dark = sum(color) / 3.0 > 150
                            c = (34, 34, 34) if dark else WHITE
                            if horizontal:
                                labels.append((mid, off + bw / 2.0, txt, c, "center", "middle", (j, si), ()))
                            else:
                                labels.append((off + bw / 2.0, mid, txt, c, "center", "middle", (j, si), ()))
                    elif horizontal:
                        if bw >= fsv * 0.9:
                            labels.append((pb + (4 if v >= 0 else -4), off + bw / 2.0, txt, SUBTLE,
                                           "left" if v >= 0 else "right", "middle", (j, si), ()))
                    else:
                        # beyond the bar's end; when that spot is taken (a wider label of the next bar
                        # of the group), one line further out: staggered, never run together
                        sign = -1 if v >= 0 else 1
                        base = "bottom" if v >= 0 else "top"
                        labels.append((off + bw / 2.0, pb + 3 * sign, txt, SUBTLE, "center", base, (j, si),
                                       ("lift", sign, bw)))
            if sp["stacked"] and show_vals and ns > 1:
                total = pos_acc + neg_acc
                txt = fmt_number(total, None, self.unit, sp["number_format"])
                if horizontal:
                    labels.append((self.x_of_value(pos_acc) + 4, start + bw / 2.0, txt, TEXT, "left", "middle",
                                   None, ()))
                else:
                    labels.append((start + bw / 2.0, self.y_of(pos_acc) - 3, txt, TEXT, "center", "bottom",
                                   None, ()))
        self.place_value_labels(labels, bars, fsv)

    def _text_box(self, x, y, txt, size, anchor, base):
        w = self.fonts.width(txt, size)
        h = size * 1.15
        x0 = {"left": x, "right": x - w}.get(anchor, x - w / 2.0)
        y0 = {"top": y, "bottom": y - h}.get(base, y - h / 2.0)
        return (x0, y0, x0 + w, y0 + h)

    def place_value_labels(self, labels, bars, size):
        """Draw each value label at the first of its places where it fits: inside the image, not
        over another label, not over a bar but its own (a minus sign under the neighbouring bar
        reads as a positive number), else skip it; ``self.value_boxes`` keeps what was drawn and
        ``self.value_skipped`` counts the rest (said in a note)."""
        placed = []
        skipped = 0
        pad = 2.0

        def clash(a, b, across=pad):
            return a[0] < b[2] + across and b[0] < a[2] + across and a[1] < b[3] + pad and b[1] < a[3] + pad

        for x, y, txt, c, anchor, base, owner, others in labels:
            inside = owner is not None and c != SUBTLE       # a label drawn inside its own bar segment
            lift = others[:1] == ("lift",)
            sizes = [size]
            if lift and self.fonts.width(txt, size) > others[2] + 1:
                # a grouped bar's label wider than its bar: a size smaller (not below 9 px) first
                small = max(9.0, size * 0.8)
                if self.fonts.width(txt, small) <= others[2] + 1:
                    sizes.append(small)
            done = False
            # in place at each size first, then staggered (smallest size)
            for sz, tries in [(sz, 1) for sz in sizes] + ([(sizes[-1], 4)] if lift else []):
                py = y
                for _try in range(tries):
                    box = self._text_box(x, py, txt, sz, anchor, base)
                    if box[0] < 1 or box[2] > self.w - 1 or box[1] < 1 or box[3] > self.h - 1:
                        break
                    # labels keep half a character apart: "34.5亿39.8亿" must not read as one
                    hits = [b for b, _t in placed if clash(box, b, sz * 0.5)]
                    if inside:
                        hits += [bar for bar, who in bars if who != owner and bar[0] + 0.5 < box[2]
                                 and box[0] < bar[2] - 0.5 and bar[1] + 0.5 < box[3] and box[1] < bar[3] - 0.5]
                    else:
                        hits += [bar for bar, who in bars if who != owner and clash(box, bar, 0.5)]
                    if not hits:
                        placed.append((box, txt))
                        self.text(x, py, txt, sz, c, anchor=anchor, baseline=base)
                        done = True
                        break
                    if tries == 1:
                        break
                    # staggered: just beyond what it ran into (above it, or below for a negative bar)
                    py = (min(h[1] for h in hits) - 3) if others[1] < 0 else (max(h[3] for h in hits) + 3)
                if done:
                    break
            if not done:
                skipped += 1
        self.value_boxes = placed
        self.bar_boxes = bars
        self.value_skipped = skipped
        if skipped and self.spec["value_labels"] is True:
            self.notes.append("有 %d 个数值标签放不下（会压住相邻的柱子或标签），没有画；可加大 width 或减少类目" % skipped)

    # -- pie ---------------------------------------------------------------------------------------------
    def draw_pie(self):
        sp = self.spec
        items = [(l, v) for l, v in zip(sp["labels"], sp["values"])]
        total = sum(v for _l, v in items)
        items = [(l, v) for l, v in items if v > 0]
        if len(items) > 10:   # keep the 9 biggest, merge the rest
            order = sorted(range(len(items)), key=lambda i: -items[i][1])
            keep = set(order[:9])
            rest = sum(items[i][1] for i in order[9:])
            merged = [it for i, it in enumerate(items) if i in keep]
            merged.append(("其他（%d项）" % (len(items) - 9), rest))
            self.notes.append("饼图项数太多，最小的 %d 项已合并为「其他」" % (len(items) - 9))
            items = merged
        self.pie_items = [(l, v, v / total) for l, v in items]
        top = self.draw_title()
        fs = self.fs
        # legend on the right when it fits, otherwise below
        leg_w = max(self.fonts.width(l, fs) for l, _v in items) + fs * 1.1 + 10
        side = leg_w < self.w * 0.34
        bottom = self.h - self.pad
        label_room = fs * 5.5
        if side:
            area = (self.pad, top, self.w - self.pad - leg_w - self.pad, bottom)
        else:
            rows = self.legend_rows([l for l, _v in items], self.w - 2 * self.pad)
            area = (self.pad, top, self.w - self.pad, bottom - len(rows) * fs * 1.55 - fs * 0.5)
        ax0, ay0, ax1, ay1 = area
        r = max(30.0, min((ax1 - ax0) / 2.0 - label_room, (ay1 - ay0) / 2.0 - fs * 1.8))
        cx, cy = (ax0 + ax1) / 2.0, (ay0 + ay1) / 2.0
        angle = -90.0
        outside = []
        for i, (label, v, frac) in enumerate(self.pie_items):
            sweep = frac * 360.0
            color = PALETTE[i % len(PALETTE)]
            self.cv.fill_polygons([_wedge(cx, cy, r, angle, angle + sweep)], color)
            mid = math.radians(angle + sweep / 2.0)
            pct = _pct(frac)
            inside_r = r * 0.64
            tw = self.fonts.width(pct, fs)
            arc_len = math.radians(sweep) * inside_r
            if frac < 1.0 and (arc_len < tw + 6 or sweep < 14):
                outside.append((mid, pct, label, color))
            else:
                tx, ty = cx + inside_r * math.cos(mid), cy + inside_r * math.sin(mid)
                dark = sum(color) / 3.0 > 150
                self.text(tx, ty, pct, fs, (34, 34, 34) if dark else WHITE, anchor="center", baseline="middle")
            angle += sweep
        if len(self.pie_items) > 1:   # white separators between slices
            a = -90.0
            for _l, _v, frac in self.pie_items:
                rad = math.radians(a)
                self.cv.fill_polygons(stroke_polygons([(cx, cy), (cx + r * math.cos(rad), cy + r * math.sin(rad))], 1.6), WHITE)
                a += frac * 360.0
        self._outside_labels(outside, cx, cy, r)
        if side:
            lx = self.w - self.pad - leg_w
            lh = fs * 1.6
            ly = cy - lh * len(items) / 2.0
            for i, (l, _v) in enumerate(items):
                color = PALETTE[i % len(PALETTE)]
                y = ly + lh * (i + 0.5)
                self.cv.fill_rect(lx, y - fs * 0.5, lx + fs * 1.0, y + fs * 0.5, color)
                self.text(lx + fs * 1.0 + 8, y, l, fs, TEXT, baseline="middle")
        else:
            self.draw_legend(ay1 + fs * 0.5, [l for l, _v in items], "bar")

    def _outside_labels(self, outside, cx, cy, r):
        """Labels of thin slices outside the pie, on two columns, pushed apart so none overlap."""
        fs = self.fs
        lh = fs * 1.3
        room = {1: self.w - (cx + r + 20) - 4, -1: cx - r - 20 - 4}

        def side_of(item):
            """The side its angle points to, unless the whole label only fits on the other one
            and the slice is near the vertical (then either side reads naturally)."""
            mid, pct, label, _color = item
            side = 1 if math.cos(mid) >= 0 else -1
            need = self.fonts.width("%s %s" % (label, pct), fs)
            if need > room[side] and need <= room[-side] and abs(math.cos(mid)) < 0.5:
                return -side
            return side
        sides = [side_of(o) for o in outside]
        for side in (1, -1):
            group = [o for o, sd in zip(outside, sides) if sd == side]
            if not group:
                continue
            pts = []
            for mid, pct, label, color in group:
                y = cy + (r + 14) * math.sin(mid)
                pts.append([y, mid, pct, label, color])
            pts.sort(key=lambda p: p[0])
            for k in range(1, len(pts)):   # push down
                if pts[k][0] < pts[k - 1][0] + lh:
                    pts[k][0] = pts[k - 1][0] + lh
            limit = self.h - self.pad - lh / 2.0
            if pts and pts[-1][0] > limit:   # then up from the bottom
                pts[-1][0] = limit
                for k in range(len(pts) - 2, -1, -1):
                    if pts[k][0] > pts[k + 1][0] - lh:
                        pts[k][0] = pts[k + 1][0] - lh
            for y, mid, pct, label, color in pts:
                ex, ey = cx + r * math.cos(mid), cy + r * math.sin(mid)
                kx = cx + side * (r + 12)
                tx = kx + side * 8
                bx, by = cx + (r + 8) * math.cos(mid), cy + (r + 8) * math.sin(mid)
                self.cv.fill_polygons(stroke_polygons([(ex, ey), (bx, by), (kx, y), (kx + side * 5, y)], 1.1), SUBTLE)
                txt = "%s %s" % (label, pct)
                max_w = (self.w - tx - 4) if side == 1 else (tx - 4)
                if self.fonts.width(txt, fs) > max_w:      # shorten the name before dropping it
                    name = label
                    while name and self.fonts.width("%s… %s" % (name, pct), fs) > max_w:
                        name = name[:-1]
                    txt = "%s… %s" % (name, pct) if name else pct
                self.text(tx, y, txt, fs, TEXT, anchor="left" if side == 1 else "right", baseline="middle")

    def render(self):
        if self.spec["type"] == "pie":
            self.draw_pie()
        else:
            self.draw_axes_chart()
        return self.cv


def _pct(frac):
    p = frac * 100.0
    if p >= 10 or p == int(p):
        return "%.1f%%" % p if p != int(p) else "%d%%" % p
    return "%.1f%%" % p if p >= 0.95 else "%.2f%%" % p


def _wedge(cx, cy, r, a0, a1):
    pts = [(cx, cy)] if a1 - a0 < 359.99 else []
    n = max(2, int(abs(a1 - a0) / 3.0) + 1)
    for i in range(n + 1):
        a = math.radians(a0 + (a1 - a0) * i / float(n))
        pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return oriented(pts)


# -- summary ---------------------------------------------------------------------------------------

def summarize(spec, chart):
    kind = spec["type"]
    title = "「%s」" % spec["title"] if spec["title"] else ""
    fmt = lambda v: fmt_number(v, None, unit_for(abs(v), spec["number_format"]), spec["number_format"])
    if kind == "pie":
        items = sorted(chart.pie_items, key=lambda it: -it[1])
        big = items[0]
        s = "饼图%s共 %d 项，最大为「%s」占 %s" % (title, len(chart.pie_items), big[0], _pct(big[2]))
        if len(items) > 1:
            s += "，其次「%s」占 %s" % (items[1][0], _pct(items[1][2]))
        return s + "。"
    labels = spec["labels"]
    name = {"line": "折线图", "bar": "柱状图"}[kind]
    if kind == "bar" and spec["stacked"]:
        name = "堆叠柱状图"
    if kind == "bar" and spec["horizontal"]:
        name = "横向" + name
    parts = ["%s%s：%d 个类目" % (name, title, len(labels))]
    if len(spec["series"]) > 1:
        parts[0] += "、%d 个系列" % len(spec["series"])
    best = None
    worst = None
    for s in spec["series"]:
        for j, v in enumerate(s["data"]):
            if v is None:
                continue
            tag = labels[j] + ("·" + s["name"] if len(spec["series"]) > 1 and s["name"] else "")
            if best is None or v > best[0]:
                best = (v, tag)
            if worst is None or v < worst[0]:
                worst = (v, tag)
    parts.append("最高为 %s（%s）" % (best[1], fmt(best[0])))
    if worst and worst[1] != best[1]:
        parts.append("最低为 %s（%s）" % (worst[1], fmt(worst[0])))
    if kind == "line" and len(spec["series"]) == 1:
        data = [v for v in spec["series"][0]["data"] if v is not None]
        if len(data) >= 2 and data[0]:
            ch = (data[-1] - data[0]) / abs(data[0]) * 100
            parts.append("首尾变化 %+.1f%%" % ch)
    gaps = sum(1 for s in spec["series"] for v in s["data"] if v is None)
    if gaps and kind == "line":
        parts.append("%d 个缺失点留空" % gaps)
    return "，".join(parts) + "。"


def draw(params, fonts):
    """(canvas, spec, summary, notes) for the tool parameters."""
    spec = normalize(params)
    chart = Chart(spec, fonts)
    cv = chart.render()
    return cv, spec, summarize(spec, chart), spec["clamped"] + chart.notes
