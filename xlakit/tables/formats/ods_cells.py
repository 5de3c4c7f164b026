"""The cell and row rules of ``.ods`` sheets, shared by both parsers (``ods``'s tree parser and
``ods_text``'s text parser): value types, dates and durations, booleans shown TRUE/FALSE, repeats
and their caps, and the sheet being filled.

Why a module of its own: both parsers must give the same rows, so they share one copy of these
rules; ``ods`` (the book) imports both parsers and ``ods_text`` imports only this, so there is no
import circle between the book and its text parser.
"""
import datetime
import re

from ._base import number
from ..values import Duration

NS_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
NS_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
NS_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
T = "{%s}" % NS_TABLE
O = "{%s}" % NS_OFFICE
X = "{%s}" % NS_TEXT

TABLE, ROW, CELL, COVERED = T + "table", T + "table-row", T + "table-cell", T + "covered-table-cell"
MAX_COLS = 16384
MAX_ROWS = 1048576
MAX_REPEAT_CELLS = 2000000     # cells a sheet may gain by expanding repeats that carry values
CHUNK = 1 << 20
REPEAT_CAPPED = ("工作表「%s」里有成片重复的单元格（文件用“重复 N 次”压缩存放），展开后超过 %d 个，"
                 "超出的部分没有读取。如确需全部数据，请在 LibreOffice/WPS 里打开后另存为 .xlsx 再试")
_DURATION_RE = re.compile(r"^(-)?P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)D)?"
                          r"(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$")
_DATE_RE = re.compile(r"^(-?\d{4,})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)?)?(Z|[+-]\d\d:?\d\d)?$")


_BOOL_TEXT = {"TRUE": 1, "FALSE": 0, "真": 1, "假": 0}
class _OutOfTime(Exception):
    def __init__(self, sheet, row):
        Exception.__init__(self, row)
        self.sheet = sheet
        self.row = row


class _Fallback(Exception):
    """The text parser met XML it does not read with certainty: use the tree parser."""


def _bounded(raw, cap):
    if raw is None:
        return 1
    try:
        return max(1, min(int(raw), cap))
    except ValueError:
        return 1


def parse_date(text):
    """ODS ``date-value`` -> ``date`` (no time part) / ``datetime``; the text itself if odd."""
    m = _DATE_RE.match(text.strip())
    if not m:
        return text
    y, mo, d, hh, mi, ss, frac, _tz = m.groups()
    try:
        if hh is None:
            return datetime.date(int(y), int(mo), int(d))
        micro = int(round(float("0." + frac) * 1e6)) if frac else 0
        if micro >= 1000000:
            micro = 999999
        return datetime.datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss or 0), micro)
    except ValueError:
        return text


def parse_duration(text):
    """ODS ``time-value`` (ISO 8601 duration, ``PT10H30M00S``) -> ``time`` below one day, else a
    ``Duration`` (days, shown ``255:10:10``: an elapsed time is not a clock time); the text
    itself if odd."""
    m = _DURATION_RE.match(text.strip())
    if not m:
        return text
    neg, years, months, days, hours, minutes, seconds = m.groups()
    if years or months:
        return text
    total = (float(days or 0) * 86400 + float(hours or 0) * 3600 + float(minutes or 0) * 60
             + float(seconds or 0))
    if neg:
        total = -total
    if 0 <= total < 86400:
        us = int(round(total * 1000000))
        us = min(us, 86400 * 1000000 - 1)
        sec, micro = divmod(us, 1000000)
        mins, sec = divmod(sec, 60)
        hrs, mins = divmod(mins, 60)
        return datetime.time(hrs, mins, sec, micro)
    return Duration(total / 86400.0)


def _text_of(el, out):
    """Append the text of a paragraph element (spans, links, runs of spaces, tabs, breaks)."""
    if el.text:
        out.append(el.text)
    for child in el:
        tag = child.tag
        if tag == X + "s":
            try:
                out.append(" " * max(1, min(int(child.get(X + "c") or 1), 10000)))
            except ValueError:
                out.append(" ")
        elif tag == X + "tab":
            out.append("\t")
        elif tag == X + "line-break":
            out.append("\n")
        elif tag in (O + "annotation", O + "annotation-end", X + "note", X + "bookmark", X + "ruby-text"):
            pass
        else:
            _text_of(child, out)
        if child.tail:
            out.append(child.tail)


def cell_text(cell):
    paras = []
    for child in cell:
        if child.tag in (X + "p", X + "h"):
            out = []
            _text_of(child, out)
            paras.append("".join(out))
        elif child.tag == X + "list":
            out = []
            _text_of(child, out)
            paras.append("".join(out))
    return "\n".join(paras)


def cell_value(cell):
    """The Python value of one ``table-cell`` element."""
    vt = cell.get(O + "value-type")
    if vt in ("float", "percentage", "currency"):
        raw = cell.get(O + "value")
        if raw is not None:
            try:
                value = number(float(raw))
            except ValueError:
                value = None
            if value is not None:
                if (value == 0 or value == 1) and vt == "float" and len(cell) == 1:
                    # LibreOffice keeps an xlsx boolean as the number 1/0 shown "TRUE"/"FALSE"
                    shown = cell_text(cell).strip()
                    if shown in _BOOL_TEXT and _BOOL_TEXT[shown] == value:
                        return bool(value)
                return value
    elif vt == "date":
        raw = cell.get(O + "date-value")
        if raw:
            return parse_date(raw)
    elif vt == "time":
        raw = cell.get(O + "time-value")
        if raw:
            return parse_duration(raw)
    elif vt == "boolean":
        raw = (cell.get(O + "boolean-value") or "").strip().lower()
        if raw in ("true", "1"):
            return True
        if raw in ("false", "0"):
            return False
    elif vt == "string":
        raw = cell.get(O + "string-value")
        if raw is not None:
            return raw if raw != "" else None
    if len(cell) == 0:
        return None
    text = cell_text(cell)
    return text if text != "" else None


def add_row(sheet, rownum, repeat, cells, budget):
    """Put one row into ``sheet``: ``cells`` is [(value, columns repeated, columns spanned, rows
    spanned)], ``budget`` a one-item list of the cells repeats may still add. Returns (the row
    number after it, whether a cap was hit). Shared by the tree and the text parser."""
    values = []
    col = 0
    merges = []
    capped = False
    for value, n, cs, rs in cells:
        n = min(n, MAX_COLS - col)
        if n <= 0:
            break
        if value is not None:
            if n > 1:
                if n > budget[0]:
                    n = max(1, budget[0])
                    capped = True
                budget[0] -= n - 1
            if len(values) < col:
                values.extend([None] * (col - len(values)))
            if n == 1:
                values.append(value)
            else:
                values.extend([value] * n)
        if cs > 1 or rs > 1:
            merges.append((col + 1, rs, cs))
        col += n
    while values and values[-1] is None:
        values.pop()
    first = rownum + 1
    if values or merges:
        times = repeat
        if times > 1 and values:
            width = max(1, len(values))
            allowed = budget[0] // width + 1
            if times > allowed:
                times = max(1, allowed)
                capped = True
            budget[0] -= (times - 1) * width
        times = min(times, MAX_ROWS - rownum) if rownum < MAX_ROWS else 0
        for k in range(times):
            r = first + k
            if values:
                sheet.rows.append((r, values if k == 0 else list(values)))
                if len(values) > sheet.ncols:
                    sheet.ncols = len(values)
            for c, rs, cs in merges:
                sheet.merges.append((r, c, r + rs - 1, c + cs - 1))
                sheet.ncols = max(sheet.ncols, c + cs - 1)
            sheet.nrows = max(sheet.nrows, r + (max(rs for _c, rs, _cs in merges) - 1 if merges else 0))
    return rownum + repeat, capped


class _Sheet(object):
    __slots__ = ("rows", "merges", "nrows", "ncols")

    def __init__(self):
        self.rows = []
        self.merges = []
        self.nrows = 0
        self.ncols = 0
