"""The sheet side of editing an xlsx directly: pass 1 over a worksheet part (:func:`scan_sheet`:
where the data ends, the header row, the last rows and their cells), the few shared strings those
checks need, and how new cells are written (``Renderer``).

Why a streaming scan: a yearly ledger's sheet is hundreds of MB of XML; only the first rows (the
header) and the last few MB (where new rows go) matter, so the sheet is read in 1 MB chunks and
only a window at its end is kept. New text cells are inline strings (``t="inlineStr"``), valid
next to a shared-string table, so ``sharedStrings.xml`` is never rewritten; dates are serial
numbers with a date style (1904 date system respected), digit strings stay text.
"""
import datetime
import html
import re
import xml.etree.ElementTree as ET

from .. import opc
from .cells import DATE_FORMAT, DATETIME_FORMAT, TIME_FORMAT, excel_serial, is_digit_text
from .values import col_index
from .xlsx_parts import CHUNK, Fallback, parse_attrs, split_ref

WINDOW = 4 << 20            # bytes of sheet XML kept to find the last rows (a row is far smaller)
TEXT_NUMFMT = 49
_DAYS_1904 = 1462

_ROW_RE = re.compile(rb"<(?:\w+:)?row\b([^>]*?)(/>|>(.*?)</(?:\w+:)?row>)", re.S)
_CELL_RE = re.compile(rb"<(?:\w+:)?c\b([^>]*?)(/>|>(.*?)</(?:\w+:)?c>)", re.S)
_ROW_START_RE = re.compile(rb"<(?:\w+:)?row[\s>/]")
V_RE = re.compile(rb"<(?:\w+:)?v>([^<]*)</(?:\w+:)?v>")
_T_RE = re.compile(rb"<(?:\w+:)?t\b[^>]*>([^<]*)</(?:\w+:)?t>")
_F_RE = re.compile(rb"<(?:\w+:)?f\b")


def _cell_col(attrs, previous):
    ref = attrs.get("r")
    if ref:
        m = re.match(r"([A-Za-z]+)", ref)
        if m:
            return col_index(m.group(1)) + 1
    return previous + 1


def cell_has_value(inner):
    if not inner:
        return False
    if _F_RE.search(inner):
        return True
    m = V_RE.search(inner)
    if m and m.group(1).strip():
        return True
    return any(t for t in _T_RE.findall(inner))



# Pass 1: find where the new rows go

class Scan:
    """Byte offsets (in the uncompressed sheet part) and facts about the sheet's rows."""
    prefix = b""
    cut = 0                 # end of the last row holding a value
    close = 0               # start of </sheetData>
    old_last = 0
    first_row = 0
    first_values = ()
    head_end = 0            # end of the <sheetData> start tag
    first_cells = None      # {col: (attrs, inner xml, raw xml)} of the first valued row
    last_cells = None       # the same for the last valued row
    last_values = ()
    merges = ()             # (c1, r1, c2, r2) of every merged area
    trailing = ()           # formatted empty rows after it: [(r, attrs bytes, {col: cell xml bytes}, raw)]
    max_col = 0
    window_rows = ()        # (start, end, row match) of every row in the last WINDOW bytes
    last_index = 0          # the last valued row's place in window_rows


def row_cells(inner):
    cells, col = {}, 0
    for m in _CELL_RE.finditer(inner or b""):
        a = parse_attrs(m.group(1))
        col = _cell_col(a, col)
        cells[col] = (a, m.group(3), m.group(0))
    return cells


def scan_sheet(zf, part):
    scan = Scan()
    buf, base, opened, done = bytearray(), 0, None, False
    first_found = False
    with zf.open(part) as fh:
        while not done:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            buf += chunk
            if opened is None:
                m = re.search(rb"<((?:\w+:)?)sheetData\b[^>]*?(/?)>", buf)
                if not m:
                    if len(buf) > WINDOW:
                        raise Fallback("no sheetData")
                    continue
                if m.group(2):
                    raise Fallback("empty sheet")
                scan.prefix = m.group(1)
                opened = base + m.end()
                scan.head_end = opened
            close_tag = b"</" + scan.prefix + b"sheetData>"
            pos = buf.find(close_tag, max(0, opened - base, len(buf) - len(chunk) - len(close_tag)))
            if pos >= 0:
                scan.close = base + pos
                done = True
            if not first_found:
                first_found = _find_first(scan, buf, base, opened, done)
            if not done and len(buf) > WINDOW:
                keep = len(buf) - WINDOW // 2
                base += keep
                del buf[:keep]
        # merged areas (after </sheetData>): new rows must not land inside one that starts above
        after = bytearray(buf[scan.close - base:]) if scan.close else bytearray()
        while scan.close:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            after += chunk
    if opened is None or not scan.close:
        raise Fallback("sheetData not closed")
    scan.merges = [b for b in (split_ref(parse_attrs(m).get("ref", ""))
                               for m in re.findall(rb"<(?:\w+:)?mergeCell\b[^>]*>", after)) if b]
    start = max(opened, base)
    window = bytes(buf[start - base:scan.close - base])
    m = _ROW_START_RE.search(window)
    rows = []
    for rm in _ROW_RE.finditer(window, m.start() if m else len(window)):
        rows.append((base + (start - base) + rm.start(), base + (start - base) + rm.end(), rm))
    last = None
    for i in range(len(rows) - 1, -1, -1):
        cells = row_cells(rows[i][2].group(3))
        if any(cell_has_value(c[1]) for c in cells.values()):
            last = i
            break
    if last is None:
        raise Fallback("no valued row in the window")
    scan.window_rows, scan.last_index = rows, last
    a = parse_attrs(rows[last][2].group(1))
    if not a.get("r", "").isdigit():
        raise Fallback("rows without numbers")
    scan.old_last = int(a["r"])
    scan.cut = rows[last][1]
    cells = row_cells(rows[last][2].group(3))
    scan.last_cells = cells
    scan.max_col = max(cells) if cells else 0
    trailing = []
    for s, e, rm in rows[last + 1:]:
        ra = parse_attrs(rm.group(1))
        if not ra.get("r", "").isdigit():
            raise Fallback("rows without numbers")
        trailing.append((int(ra["r"]), rm.group(1), row_cells(rm.group(3)), rm.group(0)))
    scan.trailing = trailing
    if not scan.first_row:
        scan.first_row = scan.old_last
        scan.first_cells = cells
    return scan


def _find_first(scan, buf, base, opened, done):
    """The first row holding a value (the header, usually row 1), looked for in the first
    WINDOW bytes of sheetData. True when settled."""
    region = bytes(buf[max(0, opened - base):(scan.close - base) if done else len(buf)])
    for rm in _ROW_RE.finditer(region):
        cells = row_cells(rm.group(3))
        if any(cell_has_value(c[1]) for c in cells.values()):
            a = parse_attrs(rm.group(1))
            scan.first_row = int(a["r"]) if a.get("r", "").isdigit() else 0
            scan.first_cells = cells
            return True
    return done or len(region) > WINDOW // 2


def cell_text(cell, strings):
    """The displayed text of a scanned cell, enough for the header and totals checks."""
    a, inner, _raw = cell
    t = a.get("t")
    if t == "s":
        m = V_RE.search(inner or b"")
        return strings.get(int(m.group(1))) if m and m.group(1).strip().isdigit() else None
    if t == "inlineStr":
        return html.unescape(b"".join(_T_RE.findall(inner or b"")).decode("utf-8", "replace"))
    m = V_RE.search(inner or b"")
    return html.unescape(m.group(1).decode("utf-8", "replace")) if m else None


def shared_strings(zf, part, wanted):
    """{index: text} for the few shared strings the checks need, stopping after the last one."""
    out = {}
    if not wanted or not part or part not in zf.namelist():
        return out
    top = max(wanted)
    index = -1
    root = None
    with zf.open(part) as fh:
        for event, el in ET.iterparse(fh, events=("start", "end")):
            if root is None:
                root = el
            if event != "end":
                continue
            tag = el.tag.rsplit("}", 1)[-1]
            if tag == "si":
                index += 1
                if index in wanted:
                    out[index] = "".join(t.text or "" for t in el.iter()
                                         if t.tag.rsplit("}", 1)[-1] == "t" and
                                         not _in_phonetic(el, t))
                root.clear()            # a ledger's table can hold a million strings
                if index >= top:
                    break
    return out


def _in_phonetic(si, t):
    for rph in si.iter():
        if rph.tag.rsplit("}", 1)[-1] == "rPh" and t in list(rph.iter()):
            return True
    return False


def row_values(cells, strings, upto=None):
    if not cells:
        return []
    cols = sorted(cells)
    width = cols[-1] if upto is None else min(cols[-1], upto)
    return [(cell_text(cells[c], strings) if c in cells else None) for c in range(1, width + 1)]



# Rendering cells

class Renderer:
    def __init__(self, styles, date1904, prefix):
        self.styles = styles
        self.date1904 = date1904
        self.p = prefix.decode() if isinstance(prefix, bytes) else prefix

    def date_style(self, base, value):
        """A date/datetime/time style: ``base`` when its format already shows one, else derived."""
        if self.styles.kind(base) is not None:
            return base                     # appended under dates: they look like the rows above
        if isinstance(value, datetime.datetime):
            code = DATETIME_FORMAT
        elif isinstance(value, datetime.date):
            code = DATE_FORMAT
        else:
            code = TIME_FORMAT
        return self.styles.derive(base, self.styles.fmt_id(code))

    def cell(self, ref, value, base, bold=None):
        p = self.p
        if isinstance(value, str):
            if not value:
                return ""
            style = base
            if bold is not None:
                style = bold
            elif is_digit_text(value) and self.styles.is_general(base):
                style = self.styles.derive(base, TEXT_NUMFMT)
            space = ' xml:space="preserve"' if value[:1].isspace() or value[-1:].isspace() or "\n" in value else ""
            return '<%sc r="%s"%s t="inlineStr"><%sis><%st%s>%s</%st></%sis></%sc>' % (
                p, ref, style_attr(style), p, p, space, opc.xml_text(value), p, p, p)
        if isinstance(value, (bool, int, float)):
            style = base if bold is None else bold
            if self.styles.kind(style) is not None:
                style = self.styles.derive(style, 0)    # a copied date format would show the number as a date
            if isinstance(value, bool):
                return '<%sc r="%s"%s t="b"><%sv>%d</%sv></%sc>' % (p, ref, style_attr(style), p, value, p, p)
            text = "%d" % value if isinstance(value, int) else repr(value)
            return '<%sc r="%s"%s><%sv>%s</%sv></%sc>' % (p, ref, style_attr(style), p, text, p, p)
        if isinstance(value, (datetime.date, datetime.time)):
            serial = excel_serial(value)
            if self.date1904 and not isinstance(value, datetime.time):
                serial -= _DAYS_1904
            return '<%sc r="%s"%s><%sv>%r</%sv></%sc>' % (p, ref, style_attr(self.date_style(base, value)), p, serial, p, p)
        return self.cell(ref, str(value), base, bold)


def style_attr(style):
    return ' s="%d"' % style if style else ""


def row_xml(p, r, attrs, cells_xml):
    return "<%srow r=\"%d\"%s>%s</%srow>" % (p, r, attrs, "".join(cells_xml), p)

