"""From OCR line boxes to text in reading order: paragraphs, columns and tables.

The engine returns one box per text line, in no useful order. People read a page as blocks:
a title, paragraphs, two columns read left column first, a ruled table read row by row. This
module rebuilds that from geometry alone (pure Python, no engine), so it is tested on its own:

1. **Deskew**: a photo taken at an angle tilts every line the same way; the median angle of the
   long lines is undone on the box coordinates (the engine already reads each tilted line).
2. **Tables**: lines are grouped into rows (vertical centres within half a line height); a run
   of rows whose cells line up in the same three or more columns, with gaps far wider than text
   spacing, is a table (invoices, bank slips, screenshots of spreadsheets). Two-column prose is
   told apart by its cells: long lines filling their column, not short values in wide cells.
3. **Columns and paragraphs** (recursive XY-cut): the page is split at the widest empty vertical
   strip (a gutter between columns), else at empty horizontal strips (paragraph gaps), until no
   cut is left. A gutter is two line heights wide, or narrower (Latin columns are set less than
   one line height apart) when an empty channel runs straight down between two columns of at
   least three full, left-aligned lines each (``_gutter``); word gaps and form values are not; inside a block a new paragraph starts at a first-line indent, after a line that
   stops short of the right margin, or where the letter size changes (a title).

Lines whose recognition score is low are marked ``〔?文字〕`` so the model can say it is unsure.
"""
import math

LOW_SCORE = 0.75            # a line read with less confidence is marked 〔?…〕
WIDE_GUTTER = 2.0           # a vertical gap this many line heights wide splits any two columns
NARROW_GUTTER = 0.6         # a narrower one, down to this, only between columns of prose (_gutter)
GUTTER_LINES = 3            # lines each such column has at least
_CJK = ("\u2e80", "\u9fff")


class Line(object):
    """One recognised line: its quadrilateral (4 x/y points, clockwise from top-left), text, score."""

    __slots__ = ("quad", "text", "score", "x0", "y0", "x1", "y1")

    def __init__(self, quad, text, score):
        self.quad = [(float(x), float(y)) for x, y in quad]
        self.text = text
        self.score = float(score)
        self.place(self.quad)

    def place(self, quad):
        xs = [p[0] for p in quad]
        ys = [p[1] for p in quad]
        self.x0, self.x1, self.y0, self.y1 = min(xs), max(xs), min(ys), max(ys)

    @property
    def h(self):
        return max(1.0, self.y1 - self.y0)

    @property
    def cy(self):
        return (self.y0 + self.y1) / 2.0

    def shown(self):
        return "〔?%s〕" % self.text if self.score < LOW_SCORE else self.text


def _median(values, default=0.0):
    values = sorted(values)
    if not values:
        return default
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2.0


def deskew(lines):
    """Rotate box coordinates so the median text line is horizontal; returns the angle (degrees)."""
    angles = []
    for ln in lines:
        (ax, ay), (bx, by) = ln.quad[0], ln.quad[1]
        if bx - ax > 3 * ln.h:          # only lines long enough to show their slope
            angles.append(math.atan2(by - ay, bx - ax))
    angle = _median(angles)
    if abs(angle) < math.radians(0.3) or abs(angle) > math.radians(20):
        return 0.0
    cos, sin = math.cos(-angle), math.sin(-angle)
    for ln in lines:
        ln.place([(x * cos - y * sin, x * sin + y * cos) for x, y in ln.quad])
    return math.degrees(angle)


def rows_of(lines):
    """Lines grouped into rows (top to bottom), each row sorted left to right."""
    rows = []
    for ln in sorted(lines, key=lambda l: l.cy):
        if rows:
            row = rows[-1]
            centre = sum(l.cy for l in row) / len(row)
            height = _median([l.h for l in row])
            # A line over another one in the same row (a stamp across a cell) stays in the row.
            if abs(ln.cy - centre) < 0.5 * max(height, ln.h):
                row.append(ln)
                continue
        rows.append([ln])
    for row in rows:
        row.sort(key=lambda l: l.x0)
    return rows


# ---------------------------------------------------------------------------------------------
# Tables

def _columns(rows, tol):
    """Column anchors (left edges) shared by the cells of ``rows``: clusters of cell x0 values."""
    starts = sorted(l.x0 for row in rows for l in row)
    clusters = []
    for x in starts:
        if clusters and x - clusters[-1][-1] <= tol:
            clusters[-1].append(x)
        else:
            clusters.append([x])
    return [sum(c) / len(c) for c in clusters if len(c) >= 2]


def _table_like(rows, h):
    """Do these rows form a grid? Three or more shared columns of short cells, or two columns whose
    cells are short compared with the distance between them (a key/value slip, not prose)."""
    if len(rows) < 2:
        return None
    cols = _columns(rows, tol=1.5 * h)
    if len(cols) < 2:
        return None
    spacing = min(b - a for a, b in zip(cols, cols[1:]))
    widths = [l.x1 - l.x0 for row in rows for l in row]
    short = _median(widths) / max(spacing, 1.0)
    if len(cols) >= 3 and short < 0.8:
        return cols
    if len(cols) == 2 and len(rows) >= 3 and short < 0.5:
        return cols
    return None


def find_tables(rows):
    """``[(first_row, last_row, column anchors)]``: maximal runs of multi-cell rows forming a grid."""
    h = _median([l.h for row in rows for l in row], 20.0)
    found, i = [], 0
    while i < len(rows):
        if len(rows[i]) < 2:
            i += 1
            continue
        j = i
        while j + 1 < len(rows) and len(rows[j + 1]) >= 2 and _table_like(rows[i:j + 2], h):
            j += 1
        # Rows with a single cell inside a grid (a total with empty cells) stay in the table.
        while j + 1 < len(rows) and len(rows[j + 1]) == 1 and j > i and _fits(rows[j + 1][0], rows[i:j + 1], h):
            j += 1
        cols = _table_like(rows[i:j + 1], h) if j > i else None
        if cols:
            found.append((i, j, cols))
            i = j + 1
        else:
            i += 1
    return found


def _fits(line, rows, h):
    """A lone line just under a table whose left edge is one of the table's columns."""
    cols = _columns(rows, tol=1.5 * h)
    return bool(cols) and line.y0 - rows[-1][-1].y1 < 1.5 * h and any(abs(line.x0 - c) < 1.5 * h for c in cols)


def table_markdown(rows, cols):
    """Rows of lines -> a Markdown table (first row as the header)."""
    grid = []
    for row in rows:
        cells = [[] for _ in cols]
        for ln in row:
            k = min(range(len(cols)), key=lambda c: abs(cols[c] - ln.x0) if ln.x0 >= cols[c] - 20 else 1e9)
            cells[k].append(ln.shown())
        grid.append([" ".join(c).replace("|", "\\|") for c in cells])
    out = ["| " + " | ".join(grid[0]) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(r) + " |" for r in grid[1:]]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Reading order

class _Item(object):
    """A unit for the XY-cut: one line of text, or a whole table kept together."""

    def __init__(self, x0, y0, x1, y1, line=None, table=None):
        self.x0, self.y0, self.x1, self.y1 = x0, y0, x1, y1
        self.line, self.table = line, table


def _gaps(spans, min_gap):
    """Empty stretches between the merged ``(start, end)`` spans, widest first: ``[(width, at)]``."""
    spans = sorted(spans)
    gaps, end = [], spans[0][1]
    for a, b in spans[1:]:
        if a - end >= min_gap:
            gaps.append((a - end, (a + end) / 2.0))
        end = max(end, b)
    return sorted(gaps, reverse=True)


def _cut(items, h, right, out):
    """Recursive XY-cut: columns first (a gutter at least two letters wide, or a narrow one
    between two columns of prose, see ``_gutter``), then paragraph gaps."""
    if len(items) > 1:
        for width, at in _gaps([(i.x0, i.x1) for i in items], NARROW_GUTTER * h):
            left = [i for i in items if i.x1 <= at]
            rest = [i for i in items if i.x1 > at]
            if not (left and rest):
                continue
            if (_tall(left, h) and _tall(rest, h)) if width >= WIDE_GUTTER * h else _gutter(left, rest, h):
                _cut(left, h, max(i.x1 for i in left), out)
                _cut(rest, h, max(i.x1 for i in rest), out)
                return
            if width >= WIDE_GUTTER * h:
                break           # as before: the widest gap decides
        gaps = _gaps([(i.y0, i.y1) for i in items], 0.6 * h)
        if gaps:
            cuts = sorted(at for _w, at in gaps)
            band = []
            for item in sorted(items, key=lambda i: i.y0):
                if cuts and item.y0 > cuts[0]:
                    while cuts and item.y0 > cuts[0]:
                        cuts.pop(0)
                    _cut(band, h, right, out)
                    band = []
                band.append(item)
            _cut(band, h, right, out)
            return
    out.append((items, right))


def _gutter(left, rest, h):
    """A gap narrower than WIDE_GUTTER is a gutter only between two columns of prose: each side
    at least GUTTER_LINES lines and nothing else (no table), lines that fill their column and
    start at its left edge (a first-line indent allowed), and the two sides next to each other
    over several lines, so the empty channel runs straight down through many lines. Latin
    columns are set this close (a gutter under one line height); word gaps inside a line, short
    values of a form and the cells of a table do not pass."""
    if any(i.table for i in left + rest):
        return False
    for side in (left, rest):
        if len(side) < GUTTER_LINES:
            return False
        x0, x1 = min(i.x0 for i in side), max(i.x1 for i in side)
        widths = [i.x1 - i.x0 for i in side]
        if _median(widths) < max(6.0 * h, 0.6 * (x1 - x0)):
            return False
        if sum(1 for i in side if i.x0 - x0 < 2.5 * h) < 0.75 * len(side):
            return False
    overlap = min(max(i.y1 for i in left), max(i.y1 for i in rest)) - max(min(i.y0 for i in left), min(i.y0 for i in rest))
    return overlap >= (GUTTER_LINES - 1) * h


def _tall(items, h):
    """A column is more than one stray word: at least two lines or a table."""
    return len(items) >= 2 or any(i.table for i in items)


def _join(a, b):
    """Join two wrapped lines: no space between Chinese characters, one between Latin words."""
    if not a:
        return b
    if a[-1:] >= _CJK[0] or b[:1] >= _CJK[0] or a.endswith("-"):
        return a + b
    return a + " " + b


def _paragraphs(items, h, right):
    """One block (no gaps inside) -> paragraphs, by indentation, short lines and letter size."""
    lines = sorted((i.line for i in items), key=lambda l: l.cy)
    rows = rows_of(lines)
    left = min(r[0].x0 for r in rows)
    paras, text, prev = [], "", None
    for row in rows:
        shown = "  ".join(l.shown() for l in row)
        first, rh = row[0], _median([l.h for l in row])
        new = (prev is None or first.x0 > left + 1.2 * rh or len(row) > 1 or prev[1] > 1
               or prev[0] < right - 2.5 * rh or abs(rh - prev[2]) > 0.25 * max(rh, prev[2]))
        if new and text:
            paras.append(text)
            text = ""
        text = _join(text, shown)
        prev = (row[-1].x1, len(row), rh)
    if text:
        paras.append(text)
    return paras


def layout(lines):
    """Recognised lines -> ``[("para", text) | ("table", markdown)]`` in reading order."""
    lines = [ln for ln in lines if ln.text.strip()]
    if not lines:
        return []
    deskew(lines)
    h = _median([l.h for l in lines], 20.0)
    rows = rows_of(lines)
    items, in_table = [], set()
    for first, last, cols in find_tables(rows):
        part = rows[first:last + 1]
        members = [l for row in part for l in row]
        in_table.update(id(l) for l in members)
        items.append(_Item(min(l.x0 for l in members), min(l.y0 for l in members),
                           max(l.x1 for l in members), max(l.y1 for l in members), table=table_markdown(part, cols)))
    items += [_Item(l.x0, l.y0, l.x1, l.y1, line=l) for l in lines if id(l) not in in_table]
    blocks = []
    _cut(items, h, max(i.x1 for i in items), blocks)
    out = []
    for group, right in blocks:
        tables = [i for i in group if i.table]
        texts = [i for i in group if i.line]
        # A table and the lines beside it (a caption) are ordered by their tops.
        pieces = sorted([(t.y0, "table", t.table) for t in tables] +
                        ([(min(i.y0 for i in texts), "para", None)] if texts else []), key=lambda p: p[0])
        for _y, kind, payload in pieces:
            if kind == "table":
                out.append(("table", payload))
            else:
                out.extend(("para", p) for p in _paragraphs(texts, h, right))
    return out
