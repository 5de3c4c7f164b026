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
  column), so a table drawn row by row keeps its rows;
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
    gutters = _gutters(boxes)
    if not gutters:
        return None
    side = [sum(1 for g in gutters if b[0] >= g) for b in boxes]
    rows = _rows(boxes)
    band = [key for key, members in rows.items() if len({side[i] for i in members}) > 1]
    top, bottom = max(band), min(band)
    inside = [i for i, b in enumerate(boxes) if bottom - b[3] <= _key(b) <= top + b[3]]
    switches = sum(1 for a, b in zip(inside, inside[1:]) if side[a] != side[b])
    if switches < MIN_SWITCHES or not all(_prose([boxes[i] for i in inside if side[i] == column])
                                          for column in range(len(gutters) + 1)):
        return None
    above = [i for i in range(len(boxes)) if _key(boxes[i]) > top + boxes[i][3]]
    below = [i for i in range(len(boxes)) if _key(boxes[i]) < bottom - boxes[i][3]]
    parts = [_lines(boxes, above)]
    for column in range(len(gutters) + 1):
        parts.append(_lines(boxes, [i for i in inside if side[i] == column]))
    parts.append(_lines(boxes, below))
    return "\n".join(p for p in parts if p)


def _prose(column):
    """Lines of running text, not table cells: most lines hold several characters and reach
    across most of the column's width (a table drawn row by row has short, ragged cells and must
    keep its rows)."""
    if len(column) < MIN_ROWS:
        return False
    chars = sorted(len(b[4]) for b in column)[len(column) // 2]
    left, right = min(b[0] for b in column), max(b[1] for b in column)
    full = sum(1 for b in column if b[1] - b[0] >= 0.6 * (right - left))
    return chars >= PROSE_CHARS and full * 2 >= len(column)


def _key(box):
    return round(box[2])


def _rows(boxes):
    rows = {}
    for i, b in enumerate(boxes):
        rows.setdefault(_key(b), []).append(i)
    return rows


def _gutters(boxes):
    """x positions with text on both sides in at least MIN_ROWS rows and crossed by no piece
    between the first and the last of those rows (a title above or a line below may cross)."""
    size = sorted(b[3] for b in boxes)[len(boxes) // 2]
    rows = _rows(boxes)
    candidates = []
    for members in rows.values():
        line = sorted(boxes[i] for i in members)
        candidates += [(a[1] + b[0]) / 2.0 for a, b in zip(line, line[1:]) if b[0] - a[1] >= GAP * size]
    found = []
    for g in sorted(candidates):
        if any(abs(g - f) < 4 * size for f in found):
            continue
        both = [y for y, members in rows.items()
                if any(boxes[i][1] < g for i in members) and any(boxes[i][0] > g for i in members)]
        if len(both) < MIN_ROWS:
            continue
        low, high = min(both), max(both)
        if not any(b[0] < g < b[1] and low <= _key(b) <= high for b in boxes):
            found.append(g)
    return found


def _lines(boxes, members):
    """The members as lines, top to bottom, each line's pieces left to right."""
    rows = {}
    for i in members:
        rows.setdefault(_key(boxes[i]), []).append(boxes[i])
    return "\n".join(" ".join(b[4] for b in sorted(rows[y])) for y in sorted(rows, reverse=True))
