"""Reader for HTML tables, above all the fake ``.xls`` that business systems export.

Many bank, ERP and government systems "export to Excel" by writing an HTML page with a
``<table>`` and naming it ``.xls``, often in GBK with a ``<meta charset>``. Excel opens it (with
a warning), so users call it a spreadsheet. Each ``<table>`` becomes a sheet ``Table1``,
``Table2``…; ``<td>``/``<th>`` text has its whitespace collapsed and ``<br>`` kept as a newline;
``colspan``/``rowspan`` become merges with the value only in the top-left cell (filling merged
blocks is table_io's job, same as for xlsx). A table nested in a cell is a sheet of its own.
Values are ``str``/``None``; numbers are left to table_io, as for csv.

These exports are small enough to parse whole (html.parser is stdlib and forgiving of the
unclosed tags such exports are full of); the rows are kept per table.
"""
import codecs
import re
from html.parser import HTMLParser

from ... import text as xtext
from ...errors import os_error
from ._base import BaseBook, FormatError, SheetInfo, trim

_META_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-]+)""", re.I)
_WS_RE = re.compile(r"[ \t\r\n\f\v\u00a0\u3000]+")
_NL = "\u2028"          # stands for <br> while whitespace is collapsed

# Names that pages give their charset -> the codec that really decodes them.
_ALIASES = {"gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "gb_2312-80": "gb18030",
            "cp936": "gb18030", "unicode": "utf-16", "utf8": "utf-8"}


def detect_html_encoding(raw):
    """BOM, then <meta charset>/http-equiv, then strict UTF-8, then gb18030."""
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                      (codecs.BOM_UTF16_BE, "utf-16")):
        if raw.startswith(bom):
            return name
    m = _META_RE.search(raw[:65536])
    if m:
        name = m.group(1).decode("ascii", "replace").lower()
        name = _ALIASES.get(name, name)
        try:
            codecs.lookup(name)
            raw.decode(name)
            return name
        except (LookupError, UnicodeDecodeError):
            pass
    return xtext.detect_encoding(raw)


class _Table(object):
    def __init__(self):
        self.rows = []          # [(row_number, values)]
        self.merges = []
        self.row = None         # values of the open <tr>
        self.cell = None        # text pieces of the open <td>
        self.cell_col = 0
        self.cell_span = (1, 1)
        self.nrow = 0           # rows started so far
        self.down = {}          # column -> last row a rowspan from above covers it
        self.ncols = 0
        self.cursor = 0         # next column in the open row


class _Parser(HTMLParser):
    def __init__(self):
        HTMLParser.__init__(self, convert_charrefs=True)
        self.tables = []        # finished and open, in order of their <table> tag
        self.stack = []         # open tables (nesting)
        self.skip = 0           # inside <script>/<style>

    # -- tags -------------------------------------------------------------------------------
    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
            return
        if tag == "table":
            table = _Table()
            self.tables.append(table)
            self.stack.append(table)
            return
        if not self.stack:
            return
        t = self.stack[-1]
        if tag == "tr":
            self._end_row(t)
            t.nrow += 1
            t.row = []
        elif tag in ("td", "th"):
            if t.row is None:           # a cell without <tr>
                t.nrow += 1
                t.row = []
            self._end_cell(t)
            attrs = dict(attrs)
            # limits as in Excel: 16,384 columns, 1,048,576 rows
            cs, rs = _span(attrs.get("colspan"), 16384), _span(attrs.get("rowspan"), 1048576)
            col = self._next_free(t)
            t.cell = []
            t.cell_col = col
            t.cell_span = (rs, cs)
        elif tag == "br" and t.cell is not None:
            t.cell.append(_NL)

    def handle_startendtag(self, tag, attrs):
        if tag == "br":
            if self.stack and self.stack[-1].cell is not None:
                self.stack[-1].cell.append(_NL)
            return
        self.handle_starttag(tag, attrs)
        if tag in ("td", "th") and self.stack:
            self._end_cell(self.stack[-1])

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
            return
        if not self.stack:
            return
        t = self.stack[-1]
        if tag == "table":
            self._end_row(t)
            self.stack.pop()
        elif tag == "tr":
            self._end_row(t)
        elif tag in ("td", "th"):
            self._end_cell(t)
        elif tag in ("p", "div", "li") and t.cell is not None:
            t.cell.append(_NL)

    def handle_data(self, data):
        if self.skip or not self.stack:
            return
        t = self.stack[-1]
        if t.cell is not None:
            t.cell.append(data)

    # -- bookkeeping ------------------------------------------------------------------------
    def _next_free(self, t):
        """First column of the current row not covered by a rowspan from above or a cell."""
        col = t.cursor
        while t.down.get(col, 0) >= t.nrow:
            col += 1
        return col

    def _end_cell(self, t):
        if t.cell is None:
            return
        text = _WS_RE.sub(" ", "".join(t.cell))
        text = "\n".join(part.strip() for part in text.split(_NL)).strip()
        rs, cs = t.cell_span
        r, c = t.nrow, t.cell_col
        _set(t.row, c, text or None)
        if rs > 1:
            for dc in range(cs):
                t.down[c + dc] = max(t.down.get(c + dc, 0), r + rs - 1)
        if rs > 1 or cs > 1:
            t.merges.append((r, c + 1, r + rs - 1, c + cs))
        t.cursor = c + cs
        t.ncols = max(t.ncols, c + cs)
        t.cell = None

    def _end_row(self, t):
        if t.row is None:
            return
        self._end_cell(t)
        values = trim(t.row)
        if values:
            t.rows.append((t.nrow, values))
        t.row = None
        t.cursor = 0


def _span(value, limit):
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return 1
    return max(1, min(n, limit))


def _set(values, ci, value):
    while len(values) < ci:
        values.append(None)
    if ci < len(values):
        values[ci] = value
    else:
        values.append(value)


class HtmlBook(BaseBook):
    kind = "html"

    def __init__(self, path):
        BaseBook.__init__(self, path)
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise os_error(exc, path, "读取")
        self.encoding = detect_html_encoding(raw)
        text, self.encoding, reason = xtext.decode(raw, self.encoding)
        if "\ufffd" in text and "无法解码" in reason:
            self.warn("网页表格里有无法按 %s 解码的字节，已显示为 �" % self.encoding)
        del raw
        parser = _Parser()
        parser.feed(text)
        parser.close()
        for t in parser.stack:          # tables left open at the end of the file
            parser._end_row(t)
        self._tables = parser.tables
        if not self._tables:
            raise FormatError("这个文件是网页（HTML），但里面没有表格（<table>），无法按表格读取",
                              tool="read_document")
        self.sheets = [SheetInfo("Table%d" % (i + 1), False, i) for i in range(len(self._tables))]

    def rows(self, name=None, max_rows=None):
        info = self.sheet(name)
        rows = self._tables[info.index].rows
        if max_rows is not None:
            rows = rows[:max_rows]
        return ((n, list(values)) for n, values in rows)

    def merges(self, name=None):
        return list(self._tables[self.sheet(name).index].merges)

    def dimensions(self, name=None):
        t = self._tables[self.sheet(name).index]
        return (t.nrow, t.ncols)
