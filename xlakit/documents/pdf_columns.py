"""Reading order for pages whose columns pypdf returns interleaved.

Why: pypdf puts text in the order the page draws it. Most producers (LibreOffice, Word, WPS)
draw a column at a time, and the text comes out right. Some (print-to-PDF drivers fed by an
application that draws by rows, some report generators) draw row by row across the page, and
pypdf then joins the left column's line with the right column's line beside it:
"左栏第一行 右栏第一行". The pieces pypdf's text visitor reports carry their start position and
font size, which is enough to see the gutter:

- a piece's extent is estimated from its characters (CJK a full em, others about half);
- a gutter is an x position with at least ``MIN_ROWS`` rows that have text on both sides of it,
  crossed by no piece between the first and the last of those rows;
- each side must look like running text (lines of several characters filling most of the
  column, not mostly figures) and the columns must be of comparable width, so a table drawn row
  by row (a financial statement: a label column beside columns of figures) keeps its rows;
- the page is changed only when the drawing order really alternates between the sides of a
  gutter (``MIN_SWITCHES``): a page drawn column by column, or a single-column page, is returned
  exactly as pypdf gave it.

The band of rows that have columns is then read column by column (each top to bottom); what is
above the band (a title) comes first and what is below (a closing line) last. Two or more
gutters give three or more columns.
"""

MIN_ROWS = 3
MIN_SWITCHES = 4
PROSE_CHARS = 8           # a column's median line is at least this long
GAP = 0.8                 # a gutter is at least this many ems of white between the sides


def _width(text, size):
    return sum(1.0 if ord(c) >= 0x2E80 else 0.55 for c in text) * size


def order(pieces):
    """The page text in column order, or None to keep pypdf's. ``pieces``: (text, (x, y), size)
    in drawing order, size the font size in page units."""
    boxes = []
    for text, pos, size in pieces:
        clean = text.strip()
        if not clean or pos is None or size <= 0:
            continue
        boxes.append((pos[0], pos[0] + _width(clean, size), pos[1], size, clean))
    if len(boxes) < 2 * MIN_ROWS:
        return None
    found = _gutters(boxes)
    if not found:
        return None
    gutters = [g for g, _low, _high in found]
    # the band: from the first to the last row with text on both sides of a gutter
    bottom, top = _grow(boxes, gutters, min(f[1] for f in found), max(f[2] for f in found))
    if any(b[0] < g < b[1] and bottom <= _key(b) <= top for b in boxes for g in gutters):
        return None
    side = [sum(1 for g in gutters if b[0] >= g) for b in boxes]
    inside = [i for i, b in enumerate(boxes) if bottom <= _key(b) <= top]
    switches = sum(1 for a, b in zip(inside, inside[1:]) if side[a] != side[b])
    columns = [[boxes[i] for i in inside if side[i] == column] for column in range(len(gutters) + 1)]
    if switches < MIN_SWITCHES or not all(_prose(column) for column in columns):
        return None
    widths = [max(b[1] for b in column) - min(b[0] for b in column) for column in columns]
    if max(widths) > 2 * min(widths):
        return None                 # a label column beside value columns: a table
    above = [i for i in range(len(boxes)) if _key(boxes[i]) > top]
    below = [i for i in range(len(boxes)) if _key(boxes[i]) < bottom]
    parts = [_lines(boxes, above)]
    for column in range(len(gutters) + 1):
        parts.append(_lines(boxes, [i for i in inside if side[i] == column]))
    parts.append(_lines(boxes, below))
    return "\n".join(p for p in parts if p)


def _grow(boxes, gutters, bottom, top):
    """The band widened by the rows next to it that stay on one side of every gutter, as long as
    they follow at the band's line spacing: one column often runs longer than the other, while a
    closing line after a blank space is not part of the columns."""
    rows = _rows(boxes)
    keys = sorted(rows)
    within = [k for k in keys if bottom <= k <= top]
    steps = sorted(b - a for a, b in zip(within, within[1:]))
    step = steps[len(steps) // 2] if steps else 0

    def apart(row):
        return not any(boxes[i][0] < g < boxes[i][1] for i in rows[row] for g in gutters)
    low = keys.index(bottom)
    while low > 0 and apart(keys[low - 1]) and keys[low] - keys[low - 1] <= 1.5 * step:
        low -= 1
    high = keys.index(top)
    while high + 1 < len(keys) and apart(keys[high + 1]) and keys[high + 1] - keys[high] <= 1.5 * step:
        high += 1
    return keys[low], keys[high]


def _prose(column):
    """Lines of running text, not table cells: most lines hold several characters and reach
    across most of the column's width (a table drawn row by row has short, ragged cells and must
    keep its rows)."""
    if len(column) < MIN_ROWS:
        return False
    chars = sorted(len(b[4]) for b in column)[len(column) // 2]
    left, right = min(b[0] for b in column), max(b[1] for b in column)
    full = sum(1 for b in column if b[1] - b[0] >= 0.6 * (right - left))
    text = "".join(b[4] for b in column)
    figures = sum(1 for c in text if c.isdigit() or c in ",.%-()")
    return chars >= PROSE_CHARS and full * 2 >= len(column) and figures < 0.3 * len(text)


def _key(box):
    return round(box[2])


def _rows(boxes):
    rows = {}
    for i, b in enumerate(boxes):
        rows.setdefault(_key(b), []).append(i)
    return rows


def _gutters(boxes):
    """(x, first row, last row) for each x with text on both sides in at least MIN_ROWS rows and
    crossed by no piece between the first and the last of those rows (a title above or a line
    below may cross)."""
    size = sorted(b[3] for b in boxes)[len(boxes) // 2]
    rows = _rows(boxes)
    candidates = []
    for members in rows.values():
        line = sorted(boxes[i] for i in members)
        candidates += [(a[1] + b[0]) / 2.0 for a, b in zip(line, line[1:]) if b[0] - a[1] >= GAP * size]
    found = []
    for g in sorted(candidates):
        if any(abs(g - f[0]) < 4 * size for f in found):
            continue
        both = [y for y, members in rows.items()
                if any(boxes[i][1] < g for i in members) and any(boxes[i][0] > g for i in members)]
        if len(both) < MIN_ROWS:
            continue
        low, high = min(both), max(both)
        if not any(b[0] < g < b[1] and low <= _key(b) <= high for b in boxes):
            found.append((g, low, high))
    return found


def _lines(boxes, members):
    """The members as lines, top to bottom, each line's pieces left to right."""
    rows = {}
    for i in members:
        rows.setdefault(_key(boxes[i]), []).append(boxes[i])
    return "\n".join(" ".join(b[4] for b in sorted(rows[y])) for y in sorted(rows, reverse=True))
