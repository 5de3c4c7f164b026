"""Appending rows to an existing xlsx, or adding a sheet to it, by editing the package directly.

Why: openpyxl loads a whole workbook into memory and writes every part anew. On a yearly ledger
(a million rows) that is minutes and gigabytes, and on any workbook it drops what openpyxl does not
model (charts, pivot tables, slicers, macros' controls...). Appending needs neither: every zip
member is copied byte for byte (its compressed bytes, same compression), except

- the one sheet, streamed in 1 MB chunks: its bytes are copied up to the last row that holds a
  value, the new rows go there (merged with formatted empty rows that follow, as in Excel), then
  the rest; ``<dimension>``, the sheet's ``<autoFilter>`` and empty merged areas in the appended
  block are fixed on the way;
- Excel tables of that sheet (``xl/tables/tableN.xml``) whose range ended at the old last row;
- ``xl/styles.xml`` when a cell style with a date/text number format (or a bold header font) has to
  be added; ``xl/workbook.xml`` (+ its rels and ``[Content_Types].xml``) for a new sheet or a
  filter range.

New text cells are inline strings (``t="inlineStr"``): valid next to a shared-string table, so
``sharedStrings.xml`` is never rewritten. Dates are serial numbers with a date style (1904 date
system respected), digit strings stay text.

Two streaming passes over the sheet: :func:`plan` (before the backup and the temp file, may
refuse or return None = "use openpyxl") finds the last valued row, the header row and the styles
of the last row; :func:`write` copies. Memory is bounded by a few MB of the sheet stream plus the
appended rows.
"""
import copy
import datetime
import html
import itertools
import re
import struct
import xml.etree.ElementTree as ET
import zipfile

from .. import opc
from ..errors import ToolError
from .cells import (DATE_FORMAT, DATETIME_FORMAT, LIMITS, TIME_FORMAT, clean_xml_row, column_widths, excel_serial,
                    is_digit_text, is_repeated_header, looks_like_header, note, too_many_rows)
from .formats._base import builtin_kind, classify_format
from .xlsx_new import sheet_head_xml
from .target import DEFAULT_SHEET, pick_sheet
from .values import col_index, col_letter, is_total_label

CHUNK = 1 << 20
WINDOW = 4 << 20            # bytes of sheet XML kept to find the last rows (a row is far smaller)
BIG_SHEET = 16 << 20        # above this (uncompressed), the sheet is deflated at level 1: 4x faster
NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL_WORKSHEET = opc.NS_OFFICE_RELS + "/worksheet"
CT_WORKSHEET = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
TEXT_NUMFMT = 49
_DAYS_1904 = 1462

_ROW_RE = re.compile(rb"<(?:\w+:)?row\b([^>]*?)(/>|>(.*?)</(?:\w+:)?row>)", re.S)
_CELL_RE = re.compile(rb"<(?:\w+:)?c\b([^>]*?)(/>|>(.*?)</(?:\w+:)?c>)", re.S)
_ROW_START_RE = re.compile(rb"<(?:\w+:)?row[\s>/]")
_ATTR_RE = re.compile(rb'([\w:]+)\s*=\s*"([^"]*)"')
_REF_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)(?::\$?([A-Za-z]{1,3})\$?(\d+))?$")
_V_RE = re.compile(rb"<(?:\w+:)?v>([^<]*)</(?:\w+:)?v>")
_T_RE = re.compile(rb"<(?:\w+:)?t\b[^>]*>([^<]*)</(?:\w+:)?t>")
_F_RE = re.compile(rb"<(?:\w+:)?f\b")


class Fallback(Exception):
    """This package cannot be edited directly; the caller goes the openpyxl way (or refuses)."""


def _attrs(raw):
    return {k.decode(): html.unescape(v.decode("utf-8", "replace")) for k, v in _ATTR_RE.findall(raw or b"")}


def _split_ref(ref):
    """``A1:H100`` -> (c1, r1, c2, r2) 1-based, or None."""
    m = _REF_RE.match((ref or "").strip())
    if not m:
        return None
    c1, r1 = col_index(m.group(1)) + 1, int(m.group(2))
    if m.group(3):
        return c1, r1, col_index(m.group(3)) + 1, int(m.group(4))
    return c1, r1, c1, r1


def _cell_col(attrs, previous):
    ref = attrs.get("r")
    if ref:
        m = re.match(r"([A-Za-z]+)", ref)
        if m:
            return col_index(m.group(1)) + 1
    return previous + 1


def _cell_has_value(inner):
    if not inner:
        return False
    if _F_RE.search(inner):
        return True
    m = _V_RE.search(inner)
    if m and m.group(1).strip():
        return True
    return any(t for t in _T_RE.findall(inner))


# ---------------------------------------------------------------------------------------------
# styles.xml, edited as text (a re-serialised ElementTree would rename namespace prefixes that
# mc:Ignorable names, and Excel would call the file corrupt)

class Styles:
    def __init__(self, data):
        self.text = data.decode("utf-8")
        self.changed = False
        m = re.search(r"<(\w+:)?cellXfs\b[^>]*>(.*?)</(?:\w+:)?cellXfs>", self.text, re.S)
        if not m:
            raise Fallback("no cellXfs")
        self.prefix = m.group(1) or ""
        self.xfs = re.findall(r"<(?:\w+:)?xf\b[^>]*?(?:/>|>.*?</(?:\w+:)?xf>)", m.group(2), re.S)
        if not self.xfs:
            raise Fallback("no xf")
        self.added_xfs = []
        self.numfmts = {}
        for fid, code in re.findall(r'<(?:\w+:)?numFmt\b[^>]*?numFmtId="(\d+)"[^>]*?formatCode="([^"]*)"', self.text):
            self.numfmts[int(fid)] = html.unescape(code)
        for code, fid in re.findall(r'<(?:\w+:)?numFmt\b[^>]*?formatCode="([^"]*)"[^>]*?numFmtId="(\d+)"', self.text):
            self.numfmts[int(fid)] = html.unescape(code)
        self.added_fmts = []
        self.derived = {}
        self.bold_font = None
        self.added_font = None

    def _xf(self, index):
        allx = self.xfs + self.added_xfs
        return allx[index] if 0 <= index < len(allx) else allx[0]

    def numfmt(self, index):
        m = re.search(r'\bnumFmtId="(\d+)"', self._xf(index).split(">", 1)[0])
        return int(m.group(1)) if m else 0

    def is_general(self, index):
        fid = self.numfmt(index)
        return fid == 0 or self.numfmts.get(fid, "").lower() == "general"

    def kind(self, index):
        fid = self.numfmt(index)
        if fid in self.numfmts:
            return classify_format(self.numfmts[fid])
        return builtin_kind(fid)

    def fmt_id(self, code):
        for fid, c in self.numfmts.items():
            if c == code:
                return fid
        fid = max([163] + list(self.numfmts)) + 1
        self.numfmts[fid] = code
        self.added_fmts.append((fid, code))
        return fid

    def derive(self, base, numfmt_id=None, bold=False):
        """Index of a cell style like ``base`` but with another number format (and/or bold)."""
        key = (base, numfmt_id, bold)
        if key in self.derived:
            return self.derived[key]
        head, sep, rest = self._xf(base).partition(">")
        selfclosing = head.endswith("/")
        if selfclosing:
            head = head[:-1]
        if numfmt_id is not None:
            head = self._set(head, "numFmtId", str(numfmt_id))
            head = self._set(head, "applyNumberFormat", "1")
        if bold:
            head = self._set(head, "fontId", str(self._bold_font(head)))
            head = self._set(head, "applyFont", "1")
        xf = head + ("/>" if selfclosing else ">" + rest)
        self.added_xfs.append(xf)
        self.changed = True
        index = len(self.xfs) + len(self.added_xfs) - 1
        self.derived[key] = index
        return index

    @staticmethod
    def _set(head, name, value):
        if re.search(r'\b%s="[^"]*"' % name, head):
            return re.sub(r'\b%s="[^"]*"' % name, '%s="%s"' % (name, value), head, count=1)
        return head.rstrip() + ' %s="%s"' % (name, value)

    def _bold_font(self, xf_head):
        if self.bold_font is not None:
            return self.bold_font
        m = re.search(r"<(\w+:)?fonts\b[^>]*>(.*?)</(?:\w+:)?fonts>", self.text, re.S)
        if not m:
            raise Fallback("no fonts")
        fonts = re.findall(r"<(?:\w+:)?font\b[^>]*?(?:/>|>.*?</(?:\w+:)?font>)", m.group(2), re.S)
        fm = re.search(r'\bfontId="(\d+)"', xf_head)
        base = fonts[int(fm.group(1))] if fm and int(fm.group(1)) < len(fonts) else (fonts[0] if fonts else None)
        p = m.group(1) or ""
        if base is not None and re.search(r"<(?:\w+:)?b\b(?![^>]*val=\"(?:0|false)\")", base):
            self.bold_font = fonts.index(base)
            return self.bold_font
        if base is None or base.endswith("/>"):
            font = "<%sfont><%sb/></%sfont>" % (p, p, p)
        else:
            font = re.sub(r"^(<(?:\w+:)?font\b[^>]*>)", r"\1<%sb/>" % p, base, count=1)
        self.added_font = font
        self.bold_font = len(fonts)
        return self.bold_font

    def data(self):
        text = self.text
        if self.added_fmts:
            new = "".join('<%snumFmt numFmtId="%d" formatCode="%s"/>' % (self.prefix, fid, opc.xml_attr(code))
                          for fid, code in self.added_fmts)
            m = re.search(r"<(\w+:)?numFmts\b([^>]*?)(/?)>", text)
            if m and not m.group(3):
                close = re.search(r"</(?:\w+:)?numFmts>", text)
                text = text[:close.start()] + new + text[close.start():]
            elif m:
                p = m.group(1) or ""
                text = text[:m.start()] + "<%snumFmts>%s</%snumFmts>" % (p, new, p) + text[m.end():]
            else:
                root = re.search(r"<(?:\w+:)?styleSheet\b[^>]*>", text)
                text = text[:root.end()] + "<%snumFmts>%s</%snumFmts>" % (self.prefix, new, self.prefix) + \
                    text[root.end():]
            text = _fix_count(text, "numFmts", len(self.numfmts_in(text)))
        if self.added_font:
            close = re.search(r"</(?:\w+:)?fonts>", text)
            text = text[:close.start()] + self.added_font + text[close.start():]
            text = _fix_count(text, "fonts", self.bold_font + 1)
        if self.added_xfs:
            close = re.search(r"</(?:\w+:)?cellXfs>", text)
            text = text[:close.start()] + "".join(self.added_xfs) + text[close.start():]
            text = _fix_count(text, "cellXfs", len(self.xfs) + len(self.added_xfs))
        return text.encode("utf-8")

    @staticmethod
    def numfmts_in(text):
        m = re.search(r"<(?:\w+:)?numFmts\b[^>]*>(.*?)</(?:\w+:)?numFmts>", text, re.S)
        return re.findall(r"<(?:\w+:)?numFmt\b", m.group(1)) if m else []


def _fix_count(text, tag, count):
    m = re.search(r"<(?:\w+:)?%s\b[^>]*>" % tag, text)
    if not m:
        return text
    head = m.group(0)
    if re.search(r'\bcount="\d*"', head):
        new = re.sub(r'\bcount="\d*"', 'count="%d"' % count, head, count=1)
    else:
        new = head[:-1] + ' count="%d">' % count
    return text[:m.start()] + new + text[m.end():]


# ---------------------------------------------------------------------------------------------
# The package

class Book:
    """What the direct edit needs from workbook.xml and its relationships."""

    def __init__(self, zf, path):
        self.path = path
        names = set(zf.namelist())
        self.names = names
        self.wb_part = "xl/workbook.xml"
        self.wb_text = opc.read_part(zf, self.wb_part).decode("utf-8")
        root = ET.fromstring(self.wb_text.encode("utf-8"))
        if not root.tag.startswith("{%s}" % NS_MAIN):
            raise Fallback("not transitional SpreadsheetML")
        pr = root.find("{%s}workbookPr" % NS_MAIN)
        self.date1904 = pr is not None and (pr.get("date1904") or "").lower() in ("1", "true")
        self.rels_part = opc.rels_part(self.wb_part)
        self.rels_text = opc.read_part(zf, self.rels_part).decode("utf-8") if self.rels_part in names else None
        if self.rels_text is None:
            raise Fallback("no workbook rels")
        rels = opc.parse_rels(self.rels_text.encode("utf-8"), self.wb_part)
        self.rel_ids = set(re.findall(r'\bId="([^"]*)"', self.rels_text))
        self.sheets = []            # (name, sheetId, rid, part or None, kind)
        rid_attr = "{%s}id" % opc.NS_OFFICE_RELS
        for el in root.iter("{%s}sheet" % NS_MAIN):
            rel = rels.get(el.get(rid_attr))
            self.sheets.append((el.get("name") or "", el.get("sheetId") or "0", el.get(rid_attr),
                                rel[1] if rel else None, rel[0] if rel else None))
        self.styles_part = next((t for k, t in rels.values() if k == "styles"), None)
        self.sst_part = next((t for k, t in rels.values() if k == "sharedStrings"), None)
        if self.styles_part not in names:
            raise Fallback("no styles part")
        self.ct_text = opc.read_part(zf, "[Content_Types].xml").decode("utf-8")

    @property
    def sheet_names(self):
        return [s[0] for s in self.sheets]

    def sheet(self, name):
        for i, s in enumerate(self.sheets):
            if s[0] == name:
                return i, s
        raise Fallback("sheet vanished")


# ---------------------------------------------------------------------------------------------
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


def _row_cells(inner):
    cells, col = {}, 0
    for m in _CELL_RE.finditer(inner or b""):
        a = _attrs(m.group(1))
        col = _cell_col(a, col)
        cells[col] = (a, m.group(3), m.group(0))
    return cells


def _scan(zf, part):
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
    scan.merges = [b for b in (_split_ref(_attrs(m).get("ref", ""))
                               for m in re.findall(rb"<(?:\w+:)?mergeCell\b[^>]*>", after)) if b]
    start = max(opened, base)
    window = bytes(buf[start - base:scan.close - base])
    m = _ROW_START_RE.search(window)
    rows = []
    for rm in _ROW_RE.finditer(window, m.start() if m else len(window)):
        rows.append((base + (start - base) + rm.start(), base + (start - base) + rm.end(), rm))
    last = None
    for i in range(len(rows) - 1, -1, -1):
        cells = _row_cells(rows[i][2].group(3))
        if any(_cell_has_value(c[1]) for c in cells.values()):
            last = i
            break
    if last is None:
        raise Fallback("no valued row in the window")
    a = _attrs(rows[last][2].group(1))
    if not a.get("r", "").isdigit():
        raise Fallback("rows without numbers")
    scan.old_last = int(a["r"])
    scan.cut = rows[last][1]
    cells = _row_cells(rows[last][2].group(3))
    scan.last_cells = cells
    scan.max_col = max(cells) if cells else 0
    trailing = []
    for s, e, rm in rows[last + 1:]:
        ra = _attrs(rm.group(1))
        if not ra.get("r", "").isdigit():
            raise Fallback("rows without numbers")
        trailing.append((int(ra["r"]), rm.group(1), _row_cells(rm.group(3)), rm.group(0)))
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
        cells = _row_cells(rm.group(3))
        if any(_cell_has_value(c[1]) for c in cells.values()):
            a = _attrs(rm.group(1))
            scan.first_row = int(a["r"]) if a.get("r", "").isdigit() else 0
            scan.first_cells = cells
            return True
    return done or len(region) > WINDOW // 2


def _cell_text(cell, strings):
    """The displayed text of a scanned cell, enough for the header and totals checks."""
    a, inner, _raw = cell
    t = a.get("t")
    if t == "s":
        m = _V_RE.search(inner or b"")
        return strings.get(int(m.group(1))) if m and m.group(1).strip().isdigit() else None
    if t == "inlineStr":
        return html.unescape(b"".join(_T_RE.findall(inner or b"")).decode("utf-8", "replace"))
    m = _V_RE.search(inner or b"")
    return html.unescape(m.group(1).decode("utf-8", "replace")) if m else None


def _shared_strings(zf, part, wanted):
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


def _row_values(cells, strings, upto=None):
    if not cells:
        return []
    cols = sorted(cells)
    width = cols[-1] if upto is None else min(cols[-1], upto)
    return [(_cell_text(cells[c], strings) if c in cells else None) for c in range(1, width + 1)]


# ---------------------------------------------------------------------------------------------
# Plan

class Plan:
    pass


def plan(path, fmt, wanted, mode, info):
    """Whether (and how) the write can be done by editing the package: returns a Plan, or None when
    the openpyxl way is needed (replacing a sheet, an empty sheet, a chart sheet, an unusual package).
    Raises ToolError for what no way could write (a sheet that would pass Excel's last row)."""
    try:
        with zipfile.ZipFile(path) as zf:
            book = Book(zf, path)
            target = pick_sheet(book.sheet_names, wanted, path)
            p = Plan()
            p.book, p.fmt, p.target = book, fmt, target
            p.styles_data = opc.read_part(zf, book.styles_part)
            Styles(p.styles_data).derive(0, bold=True)      # the edits write() may make must be possible
            if target is None:
                for close in (r"</(?:\w+:)?sheets>", r"</(?:\w+:)?Relationships>"):
                    if not re.search(close, book.wb_text if "sheets" in close else book.rels_text):
                        return None
                if not re.search(r"</(?:\w+:)?Types>", book.ct_text):
                    return None
                p.kind = "new_sheet"
                p.title = wanted or DEFAULT_SHEET
                return p
            if mode != "append":
                return None
            index, (_name, _sid, _rid, part, kind) = book.sheet(target)
            if kind != "worksheet" or part not in book.names:
                return None
            p.kind, p.index, p.part = "append", index, part
            p.scan = scan = _scan(zf, part)
            wanted_ids = set()
            for cells in (scan.first_cells or {}, {c: v for c, v in scan.last_cells.items() if c <= 5}):
                for a, inner, _raw in cells.values():
                    if a.get("t") == "s":
                        m = _V_RE.search(inner or b"")
                        if m and m.group(1).strip().isdigit():
                            wanted_ids.add(int(m.group(1)))
            strings = _shared_strings(zf, book.sst_part, wanted_ids)
            p.first_values = _row_values(scan.first_cells, strings)
            p.last_values = _row_values(scan.last_cells, strings, upto=5)
            p.tables = _sheet_tables(zf, part)
            p.sheet_size = zf.getinfo(part).file_size
    except Fallback:
        return None
    except (zipfile.BadZipFile, KeyError, IndexError, AttributeError, ET.ParseError, UnicodeDecodeError, ValueError,
            OSError):
        return None
    # a merged area that holds the last value and reaches further down (a note over two rows) is
    # not written into: the new rows start below it
    below = scan.old_last
    moved = True
    while moved:
        moved = False
        for c1, r1, c2, r2 in scan.merges:
            if r1 <= below < r2:
                below, moved = r2, True
    p.start = below + 1
    count = info.get("row_count")
    if count is not None and p.start + count - 2 > LIMITS[fmt][0]:
        raise too_many_rows(fmt, count, p.start)
    return p


def _sheet_tables(zf, part):
    rels_name = opc.rels_part(part)
    if rels_name not in zf.namelist():
        return []
    rels = opc.parse_rels(opc.read_part(zf, rels_name), part)
    return [t for k, t in rels.values() if k == "table" and t in zf.namelist()]


# ---------------------------------------------------------------------------------------------
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
                p, ref, _s(style), p, p, space, opc.xml_text(value), p, p, p)
        if isinstance(value, (bool, int, float)):
            style = base if bold is None else bold
            if self.styles.kind(style) is not None:
                style = self.styles.derive(style, 0)    # a copied date format would show the number as a date
            if isinstance(value, bool):
                return '<%sc r="%s"%s t="b"><%sv>%d</%sv></%sc>' % (p, ref, _s(style), p, value, p, p)
            text = "%d" % value if isinstance(value, int) else repr(value)
            return '<%sc r="%s"%s><%sv>%s</%sv></%sc>' % (p, ref, _s(style), p, text, p, p)
        if isinstance(value, (datetime.date, datetime.time)):
            serial = excel_serial(value)
            if self.date1904 and not isinstance(value, datetime.time):
                serial -= _DAYS_1904
            return '<%sc r="%s"%s><%sv>%r</%sv></%sc>' % (p, ref, _s(self.date_style(base, value)), p, serial, p, p)
        return self.cell(ref, str(value), base, bold)


def _s(style):
    return ' s="%d"' % style if style else ""


def _row_xml(p, r, attrs, cells_xml):
    return "<%srow r=\"%d\"%s>%s</%srow>" % (p, r, attrs, "".join(cells_xml), p)


# ---------------------------------------------------------------------------------------------
# Writing

def write(tmp, plan, head, rest, stats, counter, info):
    if plan.kind == "new_sheet":
        _write_new_sheet(tmp, plan, head, rest, stats, counter, info)
    else:
        _write_append(tmp, plan, head, rest, stats, counter, info)
    info["sheets"] = plan.book.sheet_names + ([plan.title] if plan.kind == "new_sheet" else [])


def _copy_package(tmp, book, replaced, added=(), level=6, small=()):
    """Every member of the source in its order, its compressed bytes copied as they are, except
    ``replaced`` ({name: bytes or callable(zip writer)}); then ``added`` (name, bytes/callable)."""
    with zipfile.ZipFile(book.path) as zin, open(book.path, "rb") as raw, \
            zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zout:
        for zi in zin.infolist():
            if zi.filename in replaced:
                _put(zout, zi.filename, replaced[zi.filename], zi.filename not in small)
            else:
                _copy_raw(raw, zi, zout)
        for name, content in added:
            _put(zout, name, content)


def _put(zout, name, content, zip64=True):
    """``zip64``: a streamed part of unknown size needs the 64-bit header; one known to stay far
    below 4 GB gets the plain header older readers expect."""
    if callable(content):
        with zout.open(name, "w", force_zip64=zip64) as out:
            content(out)
    else:
        zout.writestr(name, content)


def _copy_raw(src, zi, zout):
    """One member's local header + compressed data, unchanged content and compression."""
    src.seek(zi.header_offset)
    header = src.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise ToolError("原文件的压缩结构异常，无法直接追加。原文件没有改动")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    src.seek(name_len + extra_len, 1)
    out = copy.copy(zi)
    out.extra = b""                          # local timestamps/zip64 fields: zipfile writes its own
    out.flag_bits &= ~0x08                   # sizes and CRC go in the header, no data descriptor
    fp = zout.fp
    out.header_offset = fp.tell()
    fp.write(out.FileHeader())
    left = zi.compress_size
    while left > 0:
        block = src.read(min(CHUNK, left))
        if not block:
            raise ToolError("原文件被截断了，无法直接追加。原文件没有改动")
        fp.write(block)
        left -= len(block)
    zout.filelist.append(out)
    zout.NameToInfo[out.filename] = out
    zout.start_dir = fp.tell()


def _write_append(tmp, plan, head, rest, stats, counter, info):
    book, scan = plan.book, plan.scan
    styles = Styles(plan.styles_data)
    rows = list(itertools.chain(head, rest))
    if rows and is_repeated_header(rows[0], plan.first_values):
        rows = rows[1:]
        info["header_skipped"] = True
    start = plan.start
    new_last = start + len(rows) - 1
    if new_last > LIMITS[plan.fmt][0]:
        raise too_many_rows(plan.fmt, len(rows), start)
    if scan.old_last > scan.first_row and any(is_total_label(v) for v in plan.last_values if v):
        note(stats, "after_totals", str(scan.old_last))
    p = scan.prefix.decode()
    ren = Renderer(styles, book.date1904, p)
    copy_styles = scan.old_last > scan.first_row
    base_style = {}
    if copy_styles:
        for col, (a, _inner, _raw) in scan.last_cells.items():
            if a.get("s", "").isdigit():
                base_style[col] = int(a["s"])
    trailing = {r: (attrs, cells, raw) for r, attrs, cells, raw in scan.trailing}
    ncols = max([len(r) for r in rows] or [0])
    pieces = [trailing.pop(r)[2].decode("utf-8") for r in sorted(trailing) if r < start]
    letters = []
    for i, row in enumerate(rows):
        r = start + i
        clean_xml_row(row, stats)
        while len(letters) < len(row):
            letters.append(col_letter(len(letters)))
        old = trailing.pop(r, None)
        old_cells = old[1] if old else {}
        out = {}
        for c, v in enumerate(row, start=1):
            existing = old_cells.get(c)
            base = base_style.get(c, 0)
            if existing is not None and existing[0].get("s", "").isdigit():
                base = int(existing[0]["s"])
            if v is None:
                if existing is None and base:
                    out[c] = '<%sc r="%s%d"%s/>' % (p, letters[c - 1], r, _s(base))
                continue
            xml = ren.cell("%s%d" % (letters[c - 1], r), v, base)
            if xml:
                out[c] = xml
        for c, cell in old_cells.items():
            if c not in out:            # formatting of a prepared cell the new row leaves empty
                out[c] = cell[2].decode("utf-8")
        attrs = ""
        if old:
            attrs = re.sub(r'\s(?:r|spans)="[^"]*"', "", " " + old[0].decode("utf-8")).rstrip()
            if attrs and not attrs.startswith(" "):
                attrs = " " + attrs
        pieces.append(_row_xml(p, r, attrs, [out[c] for c in sorted(out)]))
        counter[0] += 1
    for r in sorted(trailing):
        pieces.append(trailing[r][2].decode("utf-8"))
    block = "".join(pieces).encode("utf-8")

    total_last = max(new_last, start - 1)
    replaced = {}
    replaced[plan.part] = lambda out: _stream_sheet(book, plan, out, block, start, total_last, ncols, stats)
    for t in plan.tables:
        with zipfile.ZipFile(book.path) as zf:
            data = opc.read_part(zf, t)
        new = _grow_table(data, scan.old_last, total_last, ncols) if rows else None
        if new is not None:
            replaced[t] = new
    wb = _grow_filter_name(book, plan.index, scan.old_last, total_last) if rows else None
    if wb is not None:
        replaced[book.wb_part] = wb.encode("utf-8")
    if styles.changed:
        replaced[book.styles_part] = styles.data()
    level = 1 if plan.sheet_size > BIG_SHEET else 6
    small = [plan.part] if plan.sheet_size + len(block) < (1 << 31) else []
    _copy_package(tmp, book, replaced, level=level, small=small)
    info.update(start_row=start, total_rows=total_last, action="appended", sheet=plan.target, direct=True)


def _stream_sheet(book, plan, out, block, start, new_last, ncols, stats):
    """Pass 2: the sheet's bytes with the new rows spliced in at ``scan.cut``."""
    scan = plan.scan
    with zipfile.ZipFile(book.path) as zf, zf.open(plan.part) as fh:
        head = b""
        while len(head) < scan.head_end:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            head += chunk
        top = head[:scan.head_end]
        top = _fix_dimension(top, new_last, max(scan.max_col, ncols))
        out.write(top)
        pending = head[scan.head_end:]
        offset = scan.head_end              # stream offset of pending[0]
        while offset + len(pending) < scan.cut:
            out.write(pending)
            offset += len(pending)
            pending = fh.read(CHUNK)
            if not pending:
                raise ToolError("工作表数据在读取中途结束，文件可能已损坏。原文件没有改动")
        out.write(pending[:scan.cut - offset])
        out.write(block)
        # what follows </sheetData> (merge areas, filters, page setup) is small: edit it whole
        rest = pending[scan.cut - offset:]
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            rest += chunk
        tail = rest[scan.close - scan.cut:]       # the trailing rows are in ``block`` already
        tail = _fix_tail(tail, scan.old_last, new_last, start, ncols, stats)
        out.write(tail)


def _fix_dimension(head, new_last, ncols):
    m = re.search(rb'(<(?:\w+:)?dimension\b[^>]*?\bref=")([^"]*)(")', head)
    if not m:
        return head
    box = _split_ref(m.group(2).decode("ascii", "replace"))
    c1, r1 = (box[0], box[1]) if box else (1, 1)
    c2 = max(box[2] if box else 1, ncols, 1)
    ref = "%s%d:%s%d" % (col_letter(c1 - 1), r1, col_letter(c2 - 1), max(new_last, box[3] if box else 1))
    return head[:m.start(2)] + ref.encode("ascii") + head[m.end(2):]


def _fix_tail(tail, old_last, new_last, start, ncols, stats):
    def grow_filter(m):
        box = _split_ref(m.group(2).decode("ascii", "replace"))
        if not box or box[3] != old_last or new_last == old_last:
            return m.group(0)
        ref = "%s%d:%s%d" % (col_letter(box[0] - 1), box[1], col_letter(box[2] - 1), new_last)
        return m.group(1) + ref.encode("ascii") + m.group(3)
    tail = re.sub(rb'(<(?:\w+:)?autoFilter\b[^>]*?\bref=")([^"]*)(")', grow_filter, tail, count=1)

    m = re.search(rb"<(?:\w+:)?mergeCells\b[^>]*>(.*?)</(?:\w+:)?mergeCells>", tail, re.S)
    if m and new_last > old_last:
        kept, dropped = [], []
        for cell in re.findall(rb"<(?:\w+:)?mergeCell\b[^>]*?/>|<(?:\w+:)?mergeCell\b.*?</(?:\w+:)?mergeCell>",
                               m.group(1), re.S):
            ref = _attrs(cell).get("ref", "")
            box = _split_ref(ref)
            if box and box[1] >= start and box[0] <= max(ncols, 1):
                dropped.append(ref)
            else:
                kept.append(cell)
        if dropped:
            for ref in dropped:
                note(stats, "unmerged", ref)
            if kept:
                body = _fix_count(m.group(0).decode("utf-8"), "mergeCells", len(kept))
                opening = re.match(r"<[^>]*>", body).group(0)
                close = re.search(rb"</(?:\w+:)?mergeCells>", m.group(0)).group(0)
                new = opening.encode("utf-8") + b"".join(kept) + close
            else:
                new = b""
            tail = tail[:m.start()] + new + tail[m.end():]
    return tail


def _grow_table(data, old_last, new_last, ncols):
    """An Excel table that ended at the old last row (and has no totals row) grows with the rows."""
    text = data.decode("utf-8")
    m = re.search(r"<(?:\w+:)?table\b[^>]*>", text)
    if not m:
        return None
    head = m.group(0)
    a = dict(re.findall(r'([\w:]+)="([^"]*)"', head))
    box = _split_ref(a.get("ref"))
    if not box or box[3] != old_last or int(a.get("totalsRowCount") or 0) or ncols > box[2]:
        return None
    ref = "%s%d:%s%d" % (col_letter(box[0] - 1), box[1], col_letter(box[2] - 1), new_last)
    new_head = re.sub(r'\bref="[^"]*"', 'ref="%s"' % ref, head, count=1)
    text = text[:m.start()] + new_head + text[m.end():]

    def fix_filter(fm):
        fbox = _split_ref(fm.group(2))
        if not fbox or fbox[3] != old_last:
            return fm.group(0)
        return fm.group(1) + "%s%d:%s%d" % (col_letter(fbox[0] - 1), fbox[1], col_letter(fbox[2] - 1),
                                            new_last) + fm.group(3)
    text = re.sub(r'(<(?:\w+:)?autoFilter\b[^>]*?\bref=")([^"]*)(")', fix_filter, text, count=1)
    return text.encode("utf-8")


def _grow_filter_name(book, index, old_last, new_last):
    """The hidden name Excel keeps for a sheet's filter range follows the grown filter."""
    text = book.wb_text
    pat = re.compile(r'(<(?:\w+:)?definedName\b[^>]*name="_xlnm\._FilterDatabase"[^>]*>)([^<]*)(<)')
    changed = [False]

    def fix(m):
        if 'localSheetId="%d"' % index not in m.group(1):
            return m.group(0)
        value = html.unescape(m.group(2))
        sheet, bang, ref = value.rpartition("!")
        box = _split_ref(ref)
        if not bang or not box or box[3] != old_last:
            return m.group(0)
        new = "%s!$%s$%d:$%s$%d" % (sheet, col_letter(box[0] - 1), box[1], col_letter(box[2] - 1), new_last)
        changed[0] = True
        return m.group(1) + opc.xml_text(new) + m.group(3)
    text = pat.sub(fix, text)
    return text if changed[0] else None


# ---------------------------------------------------------------------------------------------
# A new sheet

def _write_new_sheet(tmp, plan, head, rest, stats, counter, info):
    book = plan.book
    styles = Styles(plan.styles_data)
    title = plan.title
    n = 1
    while "xl/worksheets/sheet%d.xml" % n in book.names:
        n += 1
    part = "xl/worksheets/sheet%d.xml" % n
    k = 1
    while "rId%d" % k in book.rel_ids:
        k += 1
    rid = "rId%d" % k
    sheet_id = max([int(s[1]) for s in book.sheets if str(s[1]).isdigit()] or [0]) + 1

    wb = book.wb_text
    m = re.search(r"</(\w+:)?sheets>", wb)
    p = m.group(1) or ""
    r_prefix = _prefix_for(wb, opc.NS_OFFICE_RELS)
    if r_prefix:
        el = '<%ssheet name="%s" sheetId="%d" %s:id="%s"/>' % (p, opc.xml_attr(title), sheet_id, r_prefix, rid)
    else:
        el = '<%ssheet xmlns:r="%s" name="%s" sheetId="%d" r:id="%s"/>' % (
            p, opc.NS_OFFICE_RELS, opc.xml_attr(title), sheet_id, rid)
    wb = wb[:m.start()] + el + wb[m.start():]
    rels = book.rels_text
    rm = re.search(r"</(\w+:)?Relationships>", rels)
    rp = rm.group(1) or ""
    rels = rels[:rm.start()] + '<%sRelationship Id="%s" Type="%s" Target="worksheets/sheet%d.xml"/>' % (
        rp, rid, REL_WORKSHEET, n) + rels[rm.start():]
    ct = book.ct_text
    cm = re.search(r"</(\w+:)?Types>", ct)
    cp = cm.group(1) or ""
    ct = ct[:cm.start()] + '<%sOverride PartName="/%s" ContentType="%s"/>' % (cp, part, CT_WORKSHEET) + ct[cm.start():]

    header = bool(head) and looks_like_header(head[0])
    ren = Renderer(styles, book.date1904, "")
    bold = styles.derive(0, bold=True) if header else None
    # every style the rows can need exists before styles.xml is copied (it precedes the sheet)
    ren.cell("A1", "1", 0)
    for probe in (datetime.date(2000, 1, 1), datetime.datetime(2000, 1, 1, 1), datetime.time(1)):
        ren.cell("A1", probe, 0)
    widths = column_widths(head)

    def sheet(out):
        parts = [sheet_head_xml(1 if header else 0, 0, widths, selected=False)]
        letters = []
        buffered = 0
        for r, row in enumerate(itertools.chain(head, rest), start=1):
            if r > LIMITS[plan.fmt][0]:
                raise too_many_rows(plan.fmt, r, 1)
            clean_xml_row(row, stats)
            while len(letters) < len(row):
                letters.append(col_letter(len(letters)))
            is_header = header and r == 1
            cells = "".join(ren.cell("%s%d" % (letters[c], r), v, 0, bold if is_header else None)
                            for c, v in enumerate(row) if v is not None)
            parts.append('<row r="%d">%s</row>' % (r, cells))
            counter[0] += 1
            buffered += 1
            if buffered >= 2000:
                out.write("".join(parts).encode("utf-8"))
                parts, buffered = [], 0
        parts.append("</sheetData></worksheet>")
        out.write("".join(parts).encode("utf-8"))

    replaced = {book.wb_part: wb.encode("utf-8"), book.rels_part: rels.encode("utf-8"),
                "[Content_Types].xml": ct.encode("utf-8")}
    if styles.changed:
        replaced[book.styles_part] = styles.data()
    _copy_package(tmp, book, replaced, added=[(part, sheet)])
    info.update(action="new_sheet", sheet=title, start_row=1, total_rows=counter[0], direct=True)


def _prefix_for(text, ns):
    m = re.search(r'xmlns:(\w+)="%s"' % re.escape(ns), text)
    return m.group(1) if m else None
